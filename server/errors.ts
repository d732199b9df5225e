import { isCoreErrorCode, type CoreErrorCode, type ErrorCode } from '../sync/core/errors.ts'

/** The statuses the API answers with (spec Errors, plus 405/408/413/415/431 for the HTTP layer's own codes). */
export type HttpStatus = 400 | 401 | 403 | 404 | 405 | 408 | 409 | 413 | 415 | 431 | 500 | 501 | 503

/**
 * The one table mapping every core error code (the `CoreErrorCode` union of sync/core/errors.ts) to its
 * HTTP status; the type makes a code without a status, or a status for no code, a compile
 * error. Codes marked "choice" are where the spec names no status or no code; docs/api.md
 * lists them.
 */
export const ERROR_STATUS: Readonly<Record<CoreErrorCode, HttpStatus>> = {
  // Request
  'request.bad_json': 400,
  'request.schema': 400,
  'request.missing_field': 400,
  'request.unknown_field': 400,
  'request.invalid_field': 400,
  'request.forbidden_host': 403, // choice
  'request.forbidden_origin': 403, // choice
  'request.not_found': 404, // choice: unknown route
  'request.method_not_allowed': 405, // choice: known path, other method
  'request.too_large': 413, // choice: body over 1 MB
  'request.unsupported_media_type': 415, // choice: body that is not application/json, or not UTF-8
  'request.malformed': 400, // choice: not well-formed HTTP (request line, framing, no Host on HTTP/1.1)
  'request.timeout': 408, // choice: headers or body not received in time
  'request.headers_too_large': 431, // choice: header section over the server's limit

  // Auth and control
  'auth.required': 401,
  'auth.bad_mnemonic': 400,
  'auth.passkey_required': 400,
  'control.forbidden': 403,
  'auth.not_managed': 403,
  'shutdown.not_managed': 403,
  'auth.account_not_found': 404,
  'auth.account_in_use': 409,
  'auth.account_mismatch': 409,
  'auth.mnemonic_mismatch': 409,
  'auth.already_authorized': 409,
  'auth.device_key_corrupt': 500,

  // Spaces and invites
  'space.not_found': 404,
  'space.exists': 409,
  'space.not_joined': 403, // choice: the spec names no status
  'space.not_accepted': 409,
  'space.deleted': 409,
  'space.join_not_pending': 409,
  'space.derived_unknown': 404,
  'space.derived_undeletable': 409,
  'space.not_invite_pending': 409,
  'space.read_only': 403,
  'space.unsupported': 405,
  'invite.invalid': 400,
  'invite.not_found': 404,
  'identity.not_found': 404,
  'acl.forbidden': 403, // choice: the account's role may not make this ACL change
  'acl.request_not_found': 404, // choice: no join request with that id or identity
  'member.not_found': 404, // choice: the identity holds no role in the space

  // Objects and bundles
  'object.not_found': 404,
  'object.id_required': 400,
  'object.type_required': 400,
  'bundle.not_found': 404,
  'bundle.not_ready': 409,
  'bundle.loser_not_ready': 409,
  'bundle.not_loser': 409,
  'bundle.reserved': 409,
  'catalog.not_found': 404,

  // Datasets and filters
  'dataset.unknown': 400,
  'dataset.not_declared': 400,
  'dataset.not_found': 404,
  'dataset.validation': 400,
  'dataset.key_conflict': 409,
  'dataset.shared_conflict': 400,
  'dataset.module_unknown': 400,
  'dataset.module_owned': 409,
  'dataset.decl_invalid': 400,
  'dataset.immutable': 400,
  'upsert.requires_user_ids': 400,
  'filter.unknown_operator': 400,
  'filter.invalid': 400,
  'aggregate.bad_pipeline': 400,
  'aggregate.limit_exceeded': 400,

  // Types and properties
  'type.not_found': 404,
  'type.xkey_required': 400,
  'type.xkey_conflict': 409,
  'type.registered': 400,
  'type.reserved_carrier': 400,
  'property.not_found': 404,
  'property.kind_mismatch': 400,
  'property.immutable': 400,
  'property.format_invalid': 400,
  'property.format_violation': 400,
  'property.xkey_conflict': 409,

  // Editor and history
  'history.version_not_found': 404,
  'history.view_too_large': 413,
  'history.truncated': 404,

  // Files and devices
  'file.not_found': 404,
  'file.not_durable': 409,
  'file.not_available': 409,
  'file.variant_invalid': 400,
  'device.not_found': 404,
  'device.self_delete': 400,
  'device.pruned': 409,
  'peer.not_found': 404, // choice: peers added by address (docs/api.md)
  'peer.limit_reached': 409, // choice

  // Search
  'index.disabled': 409,
  'index.no_embedder': 400,
  'index.embedder_unavailable': 503,
  'search.bad_mode': 400,
  'search.bad_scope': 400,

  // Engine
  'sdk.not_implemented': 501,
  'sdk.not_found': 404,
  'sdk.crdt_version_newer': 409,
  'server.unavailable': 503,
  internal: 500,
  'crypto.decrypt_failed': 500, // choice: engine-internal, never answered on purpose

  // Push (chat.md; the events module gives its own codes' statuses)
  'push.disabled': 409,
}

/** A module's codes with their statuses (server/modules/module.ts `errorStatus`). */
export type ModuleErrorStatus = Readonly<Partial<Record<Exclude<ErrorCode, CoreErrorCode>, HttpStatus>>>

/**
 * The statuses one app answers with: the core table plus each served module's own codes. A
 * module may not restate a core code or another module's, so every code has one status.
 */
export class ErrorStatuses {
  private readonly modules = new Map<string, HttpStatus>()

  constructor(modules: ReadonlyArray<{ name: string; errorCodes?: readonly string[]; errorStatus?: ModuleErrorStatus }> = []) {
    for (const m of modules) {
      const statuses = (m.errorStatus ?? {}) as Record<string, HttpStatus | undefined>
      for (const code of m.errorCodes ?? []) {
        if (statuses[code] === undefined) throw new Error(`module ${m.name} throws ${code} but gives it no HTTP status`)
      }
      for (const [code, status] of Object.entries(statuses)) {
        if (isCoreErrorCode(code) || this.modules.has(code)) throw new Error(`module ${m.name} declares error code ${code}, which is already declared`)
        if (!m.errorCodes?.includes(code)) throw new Error(`module ${m.name} gives a status to ${code}, which it does not declare`)
        this.modules.set(code, status!)
      }
    }
  }

  /** Whether a code is core or a served module's (anything else thrown becomes `internal`). */
  has(code: string): code is ErrorCode {
    return isCoreErrorCode(code) || this.modules.has(code)
  }

  statusOf(code: ErrorCode): HttpStatus {
    return (isCoreErrorCode(code) ? ERROR_STATUS[code] : this.modules.get(code)) ?? 500
  }

  /** Every code this app answers with, and its status. */
  all(): Map<string, HttpStatus> {
    return new Map<string, HttpStatus>([...Object.entries(ERROR_STATUS), ...this.modules])
  }
}

export interface ErrorBody {
  error: { code: ErrorCode; message: string; details?: Record<string, unknown> }
}

export function errorBody(code: ErrorCode, message: string, details?: Record<string, unknown>): ErrorBody {
  return { error: details === undefined ? { code, message } : { code, message, details } }
}
