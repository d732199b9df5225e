/**
 * Blocks -> normalized markdown (the normal form is specified in docs/editor.md). Rendering is
 * plain string assembly: `text` already holds normalized inline markdown, so no serializer runs.
 */
import type { Block, BlockDraft } from './types.ts'
import { BLOCK_TYPES, CONTAINER_TYPES } from './types.ts'

const KNOWN: ReadonlySet<string> = new Set(BLOCK_TYPES)

/**
 * Blocks markdown does not show: types this module does not know (kept for the clients that
 * wrote them) and empty paragraphs or raw blocks. They do not take part in nesting, and
 * markdown writes never touch them.
 */
export function isHidden(b: Block | BlockDraft): boolean {
  if (!KNOWN.has(b.type)) return true
  return (b.type === 'paragraph' || b.type === 'raw') && (typeof b.text !== 'string' || b.text === '')
}

type AnyBlock = Block | BlockDraft

interface TreeNode {
  block: AnyBlock
  index: number
  children: TreeNode[]
}

/** One top-level unit of the rendering (a top-level block with its nested blocks). */
export interface Segment {
  /** Offsets of the unit's text in the markdown (separators excluded). */
  start: number
  end: number
  /** Block index range [from, to) in the (sorted) input; hidden blocks join the unit before. */
  from: number
  to: number
  /** Index of the unit's top-level block. */
  top: number
}

export interface RenderedDoc {
  markdown: string
  segments: Segment[]
  /** Effective depth of every block (stored depth clamped to the nesting that exists). */
  depths: number[]
  /** Blocks left out of the rendering (isHidden). */
  hidden: boolean[]
}

const depthOf = (b: AnyBlock): number => {
  const d = b.nav?.depth
  return typeof d === 'number' && Number.isInteger(d) && d > 0 ? d : 0
}

const family = (type: string): 'bullet' | 'ordered' | null => (type === 'bullet' || type === 'task' ? 'bullet' : type === 'numbered' ? 'ordered' : null)

const startOf = (b: AnyBlock): number => {
  const s = b.style === undefined ? NaN : Number(b.style)
  return Number.isInteger(s) && s >= 0 && s <= 999_999_999 ? s : 1
}

function indent(s: string, prefix: string, blank: string): string {
  if (!s.includes('\n')) return s === '' ? blank : prefix + s
  return s
    .split('\n')
    .map((l) => (l === '' ? blank : prefix + l))
    .join('\n')
}

function fence(text: string, info: string): string {
  let longest = 0
  const re = /^ {0,3}(`{3,}|~{3,})/gm
  for (const m of text.matchAll(re)) if (m[1][0] === '`') longest = Math.max(longest, m[1].length)
  const useTilde = info.includes('`')
  let f: string
  if (useTilde) {
    let lt = 0
    for (const m of text.matchAll(re)) if (m[1][0] === '~') lt = Math.max(lt, m[1].length)
    f = '~'.repeat(Math.max(3, lt + 1))
  } else {
    f = '`'.repeat(Math.max(3, longest + 1))
  }
  return f + info + '\n' + (text === '' ? '' : text + '\n') + f
}

const ALIGN: Record<string, string> = { left: ':--', center: ':-:', right: '--:', none: '---' }

function table(rows: string[][] | undefined, style: string | undefined): string {
  const header = rows?.[0] ?? ['']
  const width = Math.max(1, header.length)
  const aligns = (style ?? '').split(',')
  const line = (cells: string[]) => {
    const padded: string[] = []
    for (let c = 0; c < width; c++) padded.push(cells[c] ?? '')
    return '| ' + padded.join(' | ') + ' |'
  }
  const out = [line(header)]
  const delim: string[] = []
  for (let c = 0; c < width; c++) delim.push(ALIGN[aligns[c]] ?? '---')
  out.push('| ' + delim.join(' | ') + ' |')
  for (const r of (rows ?? []).slice(1)) out.push(line(r))
  return out.join('\n')
}

function headingText(text: string): string {
  return text.includes('\n') ? text.replace(/[ \t]*\r?\n[ \t]*/g, ' ') : text
}

/** Text of a leaf block ('' renders nothing). */
function leaf(b: AnyBlock): string {
  const text = typeof b.text === 'string' ? b.text : ''
  switch (b.type) {
    case 'heading': {
      const level = Math.min(6, Math.max(1, Math.trunc(Number(b.style)) || 1))
      const t = headingText(text)
      return '#'.repeat(level) + (t ? ' ' + t : '')
    }
    case 'divider':
      return '---'
    case 'code':
      return fence(text, typeof b.style === 'string' || typeof b.style === 'number' ? String(b.style) : '')
    case 'table':
      return table(b.rows, typeof b.style === 'string' ? b.style : undefined)
    default:
      return text
  }
}

interface SeqResult {
  out: string
  /** First rendered node and, if it opens a list run, its number. */
  first: TreeNode | null
}

function renderSeq(nodes: TreeNode[], segments?: { start: number; end: number; index: number }[]): SeqResult {
  let out = ''
  let first: TreeNode | null = null
  let prevFamily: 'bullet' | 'ordered' | null = null
  let number = 0
  for (const node of nodes) {
    const fam = family(node.block.type)
    const continues = fam !== null && fam === prevFamily
    if (fam === 'ordered') number = continues ? number + 1 : startOf(node.block)
    const s = renderNode(node, number)
    if (s === '') continue
    if (out !== '') out += continues ? '\n' : '\n\n'
    if (first === null) first = node
    if (segments) segments.push({ start: out.length, end: out.length + s.length, index: node.index })
    out += s
    prevFamily = fam
  }
  return { out, first }
}

function renderNode(node: TreeNode, number: number): string {
  const b = node.block
  if (!CONTAINER_TYPES.has(b.type)) return leaf(b)
  const text = typeof b.text === 'string' ? b.text : ''
  let marker: string
  let prefix: string
  let blank: string
  if (b.type === 'quote') {
    marker = '> '
    prefix = '> '
    blank = '>'
  } else {
    marker = b.type === 'numbered' ? `${number}. ` : b.type === 'task' ? (b.checked ? '- [x] ' : '- [ ] ') : '- '
    prefix = ' '.repeat(b.type === 'numbered' ? marker.length : 2)
    blank = ''
  }
  let head: string
  if (text === '') head = marker.trimEnd()
  else {
    const nl = text.indexOf('\n')
    head = nl < 0 ? marker + text : marker + text.slice(0, nl) + '\n' + indent(text.slice(nl + 1), prefix, blank)
  }
  if (node.children.length === 0) return head
  const seq = renderSeq(node.children)
  if (seq.out === '') return head
  // A nested list may follow the item's text directly only if it could interrupt a paragraph:
  // a non-empty item, and an ordered list starting at 1.
  // An item with no text (not even a task's checkbox) takes its first child as its content.
  const f = seq.first!.block
  const tight = (text === '' && b.type !== 'task') || (family(f.type) !== null && ((f.text ?? '') !== '' || f.type === 'task') && (f.type !== 'numbered' || startOf(f) === 1))
  return head + (tight ? '\n' : '\n' + blank + '\n') + indent(seq.out, prefix, blank)
}

/** Blocks sorted by `nav.pos` (plain string order, ties by id); returns the input if already sorted. */
export function sortBlocks<T extends AnyBlock>(blocks: T[]): T[] {
  const pos = (b: AnyBlock) => (b.nav as { pos?: unknown } | undefined)?.pos
  const key = (b: AnyBlock) => (typeof pos(b) === 'string' ? (pos(b) as string) : '')
  const id = (b: AnyBlock) => ('id' in b && typeof b.id === 'string' ? b.id : '')
  const cmp = (a: T, b: T) => {
    const ka = key(a)
    const kb = key(b)
    if (ka !== kb) return ka < kb ? -1 : 1
    const ia = id(a)
    const ib = id(b)
    return ia === ib ? 0 : ia < ib ? -1 : 1
  }
  for (let i = 1; i < blocks.length; i++) if (cmp(blocks[i - 1], blocks[i]) > 0) return [...blocks].sort(cmp)
  return blocks
}

/**
 * Render blocks (in the given order; see sortBlocks) to normalized markdown, with the layout
 * the incremental PUT path needs.
 */
export function renderDoc(blocks: AnyBlock[]): RenderedDoc {
  const depths: number[] = new Array<number>(blocks.length)
  const hidden: boolean[] = new Array<boolean>(blocks.length).fill(false)
  const roots: TreeNode[] = []
  const stack: TreeNode[] = []
  blocks.forEach((block, index) => {
    if (isHidden(block)) {
      hidden[index] = true
      depths[index] = depthOf(block)
      return
    }
    const d = Math.min(depthOf(block), stack.length)
    stack.length = d
    depths[index] = d
    const node: TreeNode = { block, index, children: [] }
    if (d === 0) roots.push(node)
    else stack[d - 1].children.push(node)
    if (CONTAINER_TYPES.has(block.type)) stack.push(node)
  })
  const marks: { start: number; end: number; index: number }[] = []
  const { out } = renderSeq(roots, marks)
  const segments: Segment[] = marks.map((m, k) => ({
    start: m.start,
    end: m.end,
    from: k === 0 ? 0 : m.index,
    to: k + 1 < marks.length ? marks[k + 1].index : blocks.length,
    top: m.index,
  }))
  return { markdown: out === '' ? '' : out + '\n', segments, depths, hidden }
}

/**
 * Blocks -> normalized markdown. Blocks are taken in `nav.pos` order (drafts without positions
 * keep their order). The result ends with one newline, or is empty.
 */
export function render(blocks: AnyBlock[]): string {
  return renderDoc(sortBlocks(blocks)).markdown
}
