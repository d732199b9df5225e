/**
 * The three markdown writes of the editor endpoints, as pure functions from the current blocks
 * to per-block ops: PUT (`diffMarkdown`), PATCH (`patchMarkdown`) and append (`appendMarkdown`).
 *
 * PUT re-parses only the part of the document that changed. The current blocks are rendered
 * (cheap string assembly) with the offsets of every top-level unit; the common prefix and suffix
 * of the old and new text locate the change; the units it touches, plus one unchanged unit on
 * each side as a margin, are parsed on their own and diffed against their blocks. A margin that
 * does not parse back to its blocks means the change reached across it (an unclosed fence, a
 * paragraph turned setext heading, a list that now continues) and the window grows, up to the
 * whole document. Documents with link reference or footnote definitions (their effect is
 * document-wide) take the full parse.
 */
import type { Block, BlockDraft, DiffResult, MarkdownEdit, PosGen } from './types.ts'
import { INLINE_TYPES } from './types.ts'
import { parse, type KnownTexts } from './parse.ts'
import { renderDoc, sortBlocks, type RenderedDoc } from './render.ts'
import { contentKey, diffBlocks } from './diff.ts'
import { applyEdits } from './edits.ts'
import { isValidPos, positionsBetween } from './position.ts'

/** Link reference or footnote definitions: a change anywhere can alter every other block. */
const DEFINITION = /^[ \t>]*(?:(?:[-+*]|\d{1,9}[.)])[ \t]+)*\[(?:[^\]\\\n]|\\.)+\]:/m
const ORDERED_START = /^\d{1,9}\./
const SENTINEL = 'svc-editor-window-end'

const posOf = (b: Block | undefined): string | undefined => {
  const p = b?.nav?.pos
  return isValidPos(p) ? p : undefined
}

const CHUNK = 256

function commonPrefix(a: string, b: string): number {
  const n = Math.min(a.length, b.length)
  let i = 0
  while (i + CHUNK <= n && a.substring(i, i + CHUNK) === b.substring(i, i + CHUNK)) i += CHUNK
  while (i < n && a.charCodeAt(i) === b.charCodeAt(i)) i++
  return i
}

function commonSuffix(a: string, b: string, limit: number): number {
  let i = 0
  while (i + CHUNK <= limit && a.substring(a.length - i - CHUNK, a.length - i) === b.substring(b.length - i - CHUNK, b.length - i)) i += CHUNK
  while (i < limit && a.charCodeAt(a.length - 1 - i) === b.charCodeAt(b.length - 1 - i)) i++
  return i
}

/** Content keys (with effective depth) of the visible blocks of segment s. */
function segmentKeys(doc: RenderedDoc, blocks: Block[], s: number): string[] {
  const seg = doc.segments[s]
  const out: string[] = []
  for (let i = seg.from; i < seg.to; i++) if (!doc.hidden[i]) out.push(contentKey(blocks[i], doc.depths[i]))
  return out
}

function matchesAt(drafts: BlockDraft[], at: number, keys: string[]): boolean {
  if (at < 0 || at + keys.length > drafts.length) return false
  for (let k = 0; k < keys.length; k++) if (contentKey(drafts[at + k]) !== keys[k]) return false
  return true
}

/** Single-line texts of the visible blocks in [from, to), by inline context (see KnownTexts). */
function knownTexts(blocks: Block[], doc: RenderedDoc, from: number, to: number): KnownTexts {
  const block = new Set<string>()
  const heading = new Set<string>()
  const cell = new Set<string>()
  for (let i = from; i < to; i++) {
    const b = blocks[i]
    if (doc.hidden[i]) continue
    if (b.type === 'table') {
      for (const row of b.rows ?? []) for (const c of row) if (typeof c === 'string' && c !== '' && !c.includes('\n')) cell.add(c)
      continue
    }
    const t = b.text
    if (typeof t !== 'string' || t === '' || t.includes('\n') || !INLINE_TYPES.has(b.type)) continue
    ;(b.type === 'heading' ? heading : block).add(t)
  }
  return { block, heading, cell }
}

/**
 * PUT /markdown: ops turning `current` into the blocks of `markdown`. Equivalent to
 * `diffBlocks(current, parse(markdown), newPos)` for documents in normal form, but parses only
 * the changed window, and never touches blocks outside it.
 */
export function diffMarkdown(current: Block[], markdown: string, newPos: PosGen): DiffResult {
  const blocks = sortBlocks(current)
  const doc = renderDoc(blocks)
  const old = doc.markdown
  if (old === markdown) return { inserts: [], updates: [], deletes: [], unchanged: blocks.length }
  const stand = plainParagraphStandIn(blocks, doc, markdown)
  if (stand) {
    const r = diffRendered(blocks, doc, stand.markdown, newPos)
    const u = r.updates[0]
    if (r.inserts.length === 0 && r.deletes.length === 0 && r.updates.length === 1 && u.id === stand.id && u.unset.length === 0) {
      const keys = Object.keys(u.set)
      if (keys.length === 1 && keys[0] === 'text' && u.set.text === STAND_IN) {
        plainParagraphs.served++
        return { ...r, updates: [{ id: u.id, set: { text: stand.text }, unset: [] }] }
      }
    }
  }
  return diffRendered(blocks, doc, markdown, newPos)
}

/** Words of ASCII letters and digits, single spaces between: a paragraph that parses as itself, whatever its neighbours. */
const PLAIN = /^[A-Za-z0-9]+(?: [A-Za-z0-9]+)*$/
/** What stands in for a plain paragraph's text while the rest of the window is parsed (plain too, so it parses the same way). */
const STAND_IN = 'svcEditorStandIn'

/** Switch for tests comparing diffs with and without the stand-in (off: every paragraph is parsed), and how often it served. */
export const plainParagraphs = { standIn: true, served: 0 }

/**
 * Typing into a long paragraph re-parsed the whole paragraph on every character (micromark:
 * about 1 ms per 5,000 characters). When the new markdown differs from the rendering only inside
 * one top-level paragraph, and that paragraph's new text is plain words (PLAIN), its text cannot
 * change how anything parses: no markdown character, no line break, blank lines around it (every
 * paragraph is rendered so). The diff is then computed with a short plain stand-in in its place,
 * and if that diff is exactly the one paragraph's text set to the stand-in, the paragraph's text
 * is set to its new text instead: the very diff the full parse gives (the stand-in and the new
 * text take the same place in the same block structure; test/editor/plain-paragraph.test.ts
 * compares both on random documents). Anything else is diffed as usual.
 */
function plainParagraphStandIn(blocks: Block[], doc: RenderedDoc, markdown: string): { markdown: string; id: string; text: string } | undefined {
  if (!plainParagraphs.standIn) return undefined
  const old = doc.markdown
  const p = commonPrefix(old, markdown)
  const s = commonSuffix(old, markdown, Math.min(old.length, markdown.length) - p)
  const segs = doc.segments
  let k = 0
  while (k + 1 < segs.length && segs[k + 1].start <= p) k++
  const seg = segs[k]
  if (!seg || p < seg.start || old.length - s > seg.end) return undefined
  const b = blocks[seg.top]
  if (b.type !== 'paragraph' || doc.depths[seg.top] !== 0 || typeof b.id !== 'string') return undefined
  const end = seg.end + markdown.length - old.length
  const text = markdown.slice(seg.start, end)
  if (!PLAIN.test(text) || text === STAND_IN) return undefined
  for (const x of blocks) if (x.text === STAND_IN) return undefined
  return { markdown: markdown.slice(0, seg.start) + STAND_IN + markdown.slice(end), id: b.id, text }
}

/** diffMarkdown once the rendering `doc` of `blocks` is known to differ from `markdown`. */
function diffRendered(blocks: Block[], doc: RenderedDoc, markdown: string, newPos: PosGen): DiffResult {
  const old = doc.markdown
  const segs = doc.segments
  const avoid = new Set<string>()
  for (let i = 0; i < blocks.length; i++) {
    const q = doc.hidden[i] ? posOf(blocks[i]) : undefined
    if (q !== undefined) avoid.add(q)
  }
  // Diff the visible blocks of [from, to) against drafts; hidden blocks are never touched.
  const diffWindow = (from: number, to: number, drafts: BlockDraft[]): DiffResult => {
    const visible: Block[] = []
    for (let i = from; i < to; i++) if (!doc.hidden[i]) visible.push(blocks[i])
    const result = diffBlocks(visible, drafts, newPos, { before: posOf(blocks[from - 1]), after: posOf(blocks[to]), avoid })
    result.unchanged += blocks.length - visible.length
    return result
  }
  // Definitions in the current document live in raw blocks; new ones can only be in the window.
  const fullParse = () => diffWindow(0, blocks.length, parse(markdown))
  if (segs.length < 3) return fullParse()
  for (let i = 0; i < blocks.length; i++) {
    const b = blocks[i]
    if (b.type === 'raw' && !doc.hidden[i] && typeof b.text === 'string' && DEFINITION.test(b.text)) return fullParse()
  }

  const p = commonPrefix(old, markdown)
  const s = commonSuffix(old, markdown, Math.min(old.length, markdown.length) - p)
  // Units touching the changed range [p, old.length - s) of the old text.
  let i0 = 0
  while (i0 + 1 < segs.length && segs[i0 + 1].start <= p) i0++
  const endOld = old.length - s
  let i1 = segs.length - 1
  while (i1 > 0 && segs[i1 - 1].end >= endOld) i1--
  if (i1 < i0) i1 = i0
  let lo = Math.max(0, i0 - 1)
  let hi = Math.min(segs.length - 1, i1 + 1)
  let stepLo = 1
  let stepHi = 1

  for (;;) {
    const start = segs[lo].start
    const endInOld = hi === segs.length - 1 ? old.length : segs[hi].end
    const end = markdown.length - (old.length - endInOld)
    const window = markdown.slice(start, end)
    if (DEFINITION.test(window)) return fullParse()
    const from = lo === 0 ? 0 : segs[lo].from
    const to = hi === segs.length - 1 ? blocks.length : segs[hi].to
    const known = knownTexts(blocks, doc, from, to)
    // A sentinel paragraph after the window proves it closes: an unclosed fence or HTML block
    // would swallow it (and in the full document, swallow what follows the window).
    const atEnd = hi === segs.length - 1
    const drafts = parse(atEnd ? window : window + '\n\n' + SENTINEL + '\n', known)
    const tail = atEnd ? undefined : drafts.pop()
    const closed = atEnd || (tail?.type === 'paragraph' && tail.text === SENTINEL && tail.nav === undefined)
    // A numbered item right after a numbered list continues that list: it has no start of its own.
    if (lo > 0 && drafts[0]?.type === 'numbered' && drafts[0].style !== undefined && ORDERED_START.test(window)) {
      const prevTop = segs[lo - 1].top
      if (blocks[prevTop].type === 'numbered' && doc.depths[prevTop] === 0) delete drafts[0].style
    }
    const loKeys = lo > 0 ? segmentKeys(doc, blocks, lo) : []
    const hiKeys = hi < segs.length - 1 ? segmentKeys(doc, blocks, hi) : []
    const loOk = lo === 0 || matchesAt(drafts, 0, loKeys)
    const hiOk = hi === segs.length - 1 || (closed && matchesAt(drafts, drafts.length - hiKeys.length, hiKeys) && drafts.length >= loKeys.length + hiKeys.length)
    if (loOk && hiOk) {
      return diffWindow(from, to, drafts)
    }
    if (!loOk) {
      lo = Math.max(0, lo - stepLo)
      stepLo *= 2
    }
    if (!hiOk) {
      hi = Math.min(segs.length - 1, hi + stepHi)
      stepHi *= 2
    }
  }
}

/** PATCH /markdown: apply the edits to the rendering (all or nothing), then as PUT. */
export function patchMarkdown(current: Block[], edits: MarkdownEdit[], newPos: PosGen): DiffResult {
  const blocks = sortBlocks(current)
  const next = applyEdits(renderDoc(blocks).markdown, edits)
  return diffMarkdown(blocks, next, newPos)
}

/** POST /markdown/append: the blocks of `markdown` inserted after the last block; no diff. */
export function appendMarkdown(current: Block[], markdown: string, newPos: PosGen): DiffResult {
  const drafts = parse(markdown)
  const blocks = sortBlocks(current)
  let last: string | undefined
  for (let i = blocks.length - 1; i >= 0 && last === undefined; i--) last = posOf(blocks[i])
  const keys = positionsBetween(newPos, last, undefined, drafts.length)
  return { inserts: drafts.map((draft, k) => ({ draft, pos: keys[k] })), updates: [], deletes: [], unchanged: blocks.length }
}

/** GET /markdown. */
export function renderBlocks(current: Block[]): string {
  return renderDoc(sortBlocks(current)).markdown
}
