/**
 * The editor's error codes (core.md Errors, "Editor and history"): declared here, by the module,
 * so the core union does not list them; server/modules/editor.ts gives their statuses.
 */
declare module '../../core/errors.ts' {
  interface ModuleErrorCodes {
    /** `details.editIndex`: an edit's `oldText` does not occur. */
    'markdown.no_match': true
    /** `details.occurrences`: it occurs more than once and `replaceAll` is not set. */
    'markdown.ambiguous_match': true
    /** `details.editIndices`: two edits touch the same text. */
    'markdown.overlapping_edits': true
  }
}

export const EDITOR_ERROR_CODES = ['markdown.no_match', 'markdown.ambiguous_match', 'markdown.overlapping_edits'] as const
