/**
 * Editor module, pure part: markdown <-> blocks, fractional positions, per-block diffs and
 * exact-text edits. Pure functions, no storage and no I/O; EditorService (service.ts) turns the
 * results into ops on the editor dataset, and module.ts declares the module to the space layer
 * (docs/architecture.md "Adding a module"). Reference: docs/editor.md.
 */
export type { Block, BlockDraft, BlockInsert, BlockNav, BlockType, BlockUpdate, DiffResult, EditSummary, MarkdownEdit, PosGen } from './types.ts'
export { BLOCK_TYPES, CONTAINER_TYPES, INLINE_TYPES } from './types.ts'
export { parse, parseTree, append } from './parse.ts'
export { render, renderDoc, sortBlocks, isHidden } from './render.ts'
export { diffBlocks, summarize, contentKey, blockChanges } from './diff.ts'
export { applyEdits } from './edits.ts'
export { diffMarkdown, patchMarkdown, appendMarkdown, renderBlocks } from './markdown.ts'
export { keyBetween, posGenerator, positionsBetween, tieBreak, isValidPos, spreadSuffixes } from './position.ts'
export { serializeInline } from './inline.ts'
export { svcRefs, parseSvcUrl, type SvcRef } from './links.ts'
