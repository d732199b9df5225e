import { defineModule } from '../../space/module.ts'
import { EVENTS_ERROR_CODES } from './errors.ts'

/**
 * The event bus as a module: it declares no dataset (nothing of the bus is stored) and no
 * per-space service; it is here for its error codes and its routes (server/modules/events.ts).
 * The bus itself is per account (bus.ts, `eventBusOf`).
 */
export const eventsModule = defineModule({
  name: 'events',
  errorCodes: EVENTS_ERROR_CODES,
})
