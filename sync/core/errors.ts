/**
 * Every error code the engine reports, as one union: a typo in `new SvcError('...')` is a type
 * error instead of a 500 at run time. Codes are the spec's stable `<section>.<fault>` strings
 * (core.md Errors and Authentication, chat.md Errors); the HTTP layer maps each to a status
 * through one table (`server/errors.ts`), so no rule about statuses lives in the engine.
 */
export const ERROR_CODES = [
  // Request
  'request.bad_json',
  'request.schema',
  'request.missing_field',
  'request.unknown_field',
  'request.invalid_field',
  'request.forbidden_host',
  'request.forbidden_origin',
  'request.not_found',
  'request.method_not_allowed',
  'request.too_large',
  'request.unsupported_media_type',
  // The HTTP message itself (server/http/client-errors.ts): codes of our design
  'request.malformed',
  'request.timeout',
  'request.headers_too_large',

  // Auth and control
  'auth.required',
  'auth.bad_mnemonic',
  'auth.passkey_required',
  'control.forbidden',
  'auth.not_managed',
  'shutdown.not_managed',
  'auth.account_not_found',
  'auth.account_in_use',
  'auth.account_mismatch',
  'auth.mnemonic_mismatch',
  'auth.already_authorized',
  'auth.device_key_corrupt',

  // Spaces and invites
  'space.not_found',
  'space.exists',
  'space.not_joined',
  'space.not_accepted',
  'space.deleted',
  'space.join_not_pending',
  'space.derived_unknown',
  'space.derived_undeletable',
  'space.not_invite_pending',
  'space.read_only',
  'space.unsupported',
  'invite.invalid',
  'invite.not_found',
  'identity.not_found',
  // Members and ACL (codes of our design: the spec lists none for these routes)
  'acl.forbidden',
  'acl.request_not_found',
  'member.not_found',

  // Objects and bundles
  'object.not_found',
  'object.id_required',
  'object.type_required',
  'bundle.not_found',
  'bundle.not_ready',
  'bundle.loser_not_ready',
  'bundle.not_loser',
  'bundle.reserved',
  'catalog.not_found',

  // Datasets and filters
  'dataset.unknown',
  'dataset.not_declared',
  'dataset.not_found',
  'dataset.validation',
  'dataset.key_conflict',
  'dataset.shared_conflict',
  'dataset.module_unknown',
  'dataset.module_owned',
  'dataset.decl_invalid',
  'dataset.immutable',
  'upsert.requires_user_ids',
  'filter.unknown_operator',
  'filter.invalid',
  'aggregate.bad_pipeline',
  'aggregate.limit_exceeded',

  // Types and properties
  'type.not_found',
  'type.xkey_required',
  'type.xkey_conflict',
  'type.registered',
  'type.reserved_carrier',
  'property.not_found',
  'property.kind_mismatch',
  'property.immutable',
  'property.format_invalid',
  'property.format_violation',
  'property.xkey_conflict',

  // History (the editor's `markdown.*` codes are the editor module's: sync/modules/editor/errors.ts)
  'history.version_not_found',
  'history.view_too_large',
  'history.truncated',

  // Files and devices
  'file.not_found',
  'file.not_durable',
  'file.not_available',
  'file.variant_invalid',
  'device.not_found',
  'peer.not_found',
  'peer.limit_reached',
  'device.self_delete',
  'device.pruned',

  // Search
  'index.disabled',
  'index.no_embedder',
  'index.embedder_unavailable',
  'search.bad_mode',
  'search.bad_scope',

  // Engine
  'sdk.not_implemented',
  'sdk.not_found',
  'sdk.crdt_version_newer',
  'server.unavailable',
  'internal',
  /** A sealed box that does not open; the replica turns it into a typed rejection, never a reply. */
  'crypto.decrypt_failed',

  // Push (chat.md; `chat.*`, `events.*` and `process.*` codes are their modules')
  'push.disabled',
] as const

export type CoreErrorCode = (typeof ERROR_CODES)[number]

/**
 * Codes a module adds, by declaration merging from its own folder (`declare module
 * '../../core/errors.ts' { interface ModuleErrorCodes { 'markdown.no_match': true } }`), so a
 * new module's codes are an addition, not an edit of the list above; its server module gives
 * their statuses (server/modules/module.ts `errors`).
 */
// eslint-disable-next-line @typescript-eslint/no-empty-object-type
export interface ModuleErrorCodes {}

// eslint-disable-next-line @typescript-eslint/no-redundant-type-constituents -- modules widen ModuleErrorCodes by declaration merging; without one it is string
export type ErrorCode = CoreErrorCode | (keyof ModuleErrorCodes & string)

/** One error class for every failure the engine reports to callers. */
export class SvcError extends Error {
  readonly code: ErrorCode
  readonly details?: Record<string, unknown>

  constructor(code: ErrorCode, message: string, details?: Record<string, unknown>) {
    super(message)
    this.name = 'SvcError'
    this.code = code
    if (details !== undefined) this.details = details
  }
}

export const isSvcError = (err: unknown): err is SvcError => err instanceof SvcError

/**
 * `err` naming the entry of a many-entry request it is about (`details.index`): a bulk create
 * answers the codes a single create does, and says which entry failed.
 */
export function withIndex(err: unknown, index: number): unknown {
  return err instanceof SvcError ? new SvcError(err.code, err.message, { ...err.details, index }) : err
}

const KNOWN: ReadonlySet<string> = new Set(ERROR_CODES)

/** For codes that arrive as data: narrows a string to the core union (modules' codes: server/errors.ts `ErrorStatuses`). */
export const isCoreErrorCode = (code: string): code is CoreErrorCode => KNOWN.has(code)
