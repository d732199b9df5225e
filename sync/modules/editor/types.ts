/**
 * The editor block model (docs/editor.md is the reference). A block is one record of an editor
 * dataset (`editor_blocks` or `<typeId>_<key>`); blocks are ordered by `nav.pos` (plain string
 * comparison, see position.ts) and nested by `nav.depth`.
 */

/** Every block type the markdown mapping produces. Unknown types are tolerated on render. */
export type BlockType = 'paragraph' | 'heading' | 'bullet' | 'numbered' | 'task' | 'quote' | 'code' | 'divider' | 'table' | 'raw'

export const BLOCK_TYPES: readonly BlockType[] = ['paragraph', 'heading', 'bullet', 'numbered', 'task', 'quote', 'code', 'divider', 'table', 'raw']

/** Types that may hold nested blocks (blocks right after them with a greater depth). */
export const CONTAINER_TYPES: ReadonlySet<string> = new Set(['bullet', 'numbered', 'task', 'quote'])

/** Types whose `text` is inline markdown (the others hold literal text or nothing). */
export const INLINE_TYPES: ReadonlySet<string> = new Set(['paragraph', 'heading', 'bullet', 'numbered', 'task', 'quote'])

export interface BlockNav {
  /** Fractional position; blocks sort by it with plain string comparison. */
  pos?: string
  /** Nesting level, 0 (absent) for top level. */
  depth?: number
}

/** A block without identity or position: what parse() yields and what an insert writes. */
export interface BlockDraft {
  type: string
  /** heading: level "1".."6"; numbered: start number of a list ("1" is left out); code: info string; table: column alignments. */
  style?: string
  /** Inline markdown (paragraph, heading, list items, quote), literal code (code), verbatim markdown (raw). */
  text?: string
  /** task only: the checkbox. */
  checked?: boolean
  /** table only: rows of cell inline markdown; row 0 is the header. */
  rows?: string[][]
  /** depth only; present when depth > 0. */
  nav?: { depth?: number }
}

/** A stored block: a record with its id. Extra fields written by other clients are kept as they are. */
export interface Block {
  id: string
  type: string
  style?: string | number
  text?: string
  checked?: boolean
  rows?: string[][]
  nav?: BlockNav
}

/**
 * Generates a position strictly between two positions (either may be absent: start or end of the
 * document). It must return a key that is not a prefix of `after`; `posGenerator` in position.ts
 * does, with a tie-breaker so concurrent inserts at one spot never collide.
 */
export type PosGen = (before?: string, after?: string) => string

export interface BlockUpdate {
  id: string
  /** Dotted path -> value (e.g. `text`, `style`, `nav.depth`, `nav.pos`). */
  set: Record<string, unknown>
  /** Dotted paths to remove. Never `type`. */
  unset: string[]
}

export interface BlockInsert {
  draft: BlockDraft
  pos: string
}

/** Per-block ops that turn the current blocks into the next ones. */
export interface DiffResult {
  inserts: BlockInsert[]
  updates: BlockUpdate[]
  deletes: string[]
  unchanged: number
}

/** The response body of PUT / PATCH / append on `/markdown`. */
export interface EditSummary {
  inserted: number
  updated: number
  deleted: number
  unchanged: number
}

/** One PATCH edit. */
export interface MarkdownEdit {
  oldText: string
  newText: string
  replaceAll?: boolean
}
