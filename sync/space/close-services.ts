import { errField, type Logger } from '../core/log.ts'

/**
 * Closes module services that have a `close`, in reverse order (a later module may use an
 * earlier one's). One failing close is logged at warn to `log` and leaves no other open: the space or account
 * closes whatever a module does.
 */
export async function closeServices(services: Iterable<unknown>, what: string, log: Logger): Promise<void> {
  for (const service of [...services].reverse()) {
    const close = (service as { close?: unknown } | null | undefined)?.close
    if (typeof close !== 'function') continue
    try {
      await close.call(service)
    } catch (err) {
      log.warn('closing a module service failed', { services: what, err: errField(err) })
    }
  }
}
