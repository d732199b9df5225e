/**
 * The event bus's error codes (chat.md Errors): declared by the module, so the core union does
 * not list them; server/modules/events.ts gives their statuses.
 */
declare module '../../core/errors.ts' {
  interface ModuleErrorCodes {
    'events.payload_too_large': true
    'events.no_read_key': true
    'events.too_many_patterns': true
    'events.topic_not_owned': true
    'process.not_found': true
    'process.ambiguous': true
  }
}

export const EVENTS_ERROR_CODES = [
  'events.payload_too_large',
  'events.no_read_key',
  'events.too_many_patterns',
  'events.topic_not_owned',
  'process.not_found',
  'process.ambiguous',
] as const
