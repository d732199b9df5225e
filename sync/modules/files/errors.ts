/**
 * The files module's own code. The spec's `file.not_found`, `file.not_durable`,
 * `file.not_available` and `file.variant_invalid` are core codes (sync/core/errors.ts);
 * `file.too_large` (413) is an attach body past its limit (the spec leaves that limit "not
 * shown"). The server's files module gives its status.
 */
declare module '../../core/errors.ts' {
  interface ModuleErrorCodes {
    'file.too_large': true
  }
}

export const FILES_ERROR_CODES = ['file.too_large'] as const
