/**
 * Markdown -> block drafts. Parsing is mdast-util-from-markdown with the GFM extensions
 * (micromark-extension-gfm + mdast-util-gfm); this file only maps the tree onto blocks.
 */
import { fromMarkdown } from 'mdast-util-from-markdown'
import { gfmFromMarkdown } from 'mdast-util-gfm'
import { gfm } from 'micromark-extension-gfm'
import { toMarkdown } from 'mdast-util-to-markdown'
import type { List, ListItem, Nodes, PhrasingContent, Root, RootContent, Table } from 'mdast'
import type { BlockDraft } from './types.ts'
import { serializeInlineBatch, TO_MARKDOWN_OPTIONS, type InlineContext } from './inline.ts'

const micromarkExtensions = [gfm()]
const mdastExtensions = [gfmFromMarkdown()]

/** The mdast tree of a markdown document (GFM). */
export function parseTree(markdown: string): Root {
  return fromMarkdown(markdown, { extensions: micromarkExtensions, mdastExtensions })
}

interface Job {
  children: PhrasingContent[]
  context: InlineContext
  set: (text: string) => void
}

const EMPTY_TASK = /^\[( |x|X)\]$/

/**
 * Texts known to be in normal form, per context (single-line texts of the current blocks). When
 * the source of some phrasing content is one of them, it is taken as is instead of being
 * serialized again: serializing is the expensive half of parsing, and on a PUT most of the
 * window being parsed is unchanged text.
 */
export type KnownTexts = Partial<Record<InlineContext, ReadonlySet<string>>>

/**
 * Parse markdown into block drafts in document order. Every construct maps to blocks (see
 * docs/editor.md); anything without a block type of its own (HTML blocks, link reference
 * definitions, footnote definitions) becomes a `raw` block holding its markdown.
 */
export function parse(markdown: string, known?: KnownTexts): BlockDraft[] {
  const tree = parseTree(markdown)
  const out: BlockDraft[] = []
  const jobs: Job[] = []

  const knownSource = (children: PhrasingContent[], context: InlineContext): string | undefined => {
    const set = known?.[context]
    if (!set) return undefined
    const start = children[0].position?.start.offset
    const end = children[children.length - 1].position?.end.offset
    if (start === undefined || end === undefined) return undefined
    const source = markdown.slice(start, end)
    return set.has(source) ? source : undefined
  }
  const job = (children: PhrasingContent[], context: InlineContext, set: (text: string) => void): void => {
    const source = knownSource(children, context)
    if (source !== undefined) set(source)
    else jobs.push({ children, context, set })
  }
  const inline = (draft: BlockDraft, children: PhrasingContent[], context: InlineContext): void => {
    draft.text = ''
    if (children.length > 0) job(children, context, (t) => (draft.text = t))
  }
  const push = (draft: BlockDraft, depth: number): BlockDraft => {
    if (depth > 0) draft.nav = { depth }
    out.push(draft)
    return draft
  }

  const listItem = (list: List, item: ListItem, index: number, depth: number): void => {
    let type = item.checked != null ? 'task' : list.ordered ? 'numbered' : 'bullet'
    let checked = item.checked ?? undefined
    let rest = item.children as RootContent[]
    const draft: BlockDraft = { type }
    const first = rest[0]
    if (first?.type === 'paragraph') {
      rest = rest.slice(1)
      // GFM needs text after a checkbox, so an empty task renders as `- [ ]` and parses back as
      // a plain item whose text is the bare, unescaped checkbox.
      const only = first.children.length === 1 ? first.children[0] : undefined
      const start = first.position?.start.offset
      if (item.checked == null && only?.type === 'text' && EMPTY_TASK.test(only.value) &&
          start !== undefined && markdown[start] === '[') {
        type = 'task'
        checked = only.value !== '[ ]'
        draft.type = type
        draft.text = ''
      } else {
        inline(draft, first.children, 'block')
      }
    } else {
      draft.text = ''
    }
    if (type === 'task') draft.checked = checked ?? false
    if (type === 'numbered' && index === 0 && list.start != null && list.start !== 1) draft.style = String(list.start)
    push(draft, depth)
    walk(rest, depth + 1)
  }

  const table = (node: Table, depth: number): void => {
    const width = node.children[0]?.children.length ?? 0
    const rows: string[][] = node.children.map(() => new Array<string>(width).fill(''))
    node.children.forEach((row, r) => {
      row.children.slice(0, width).forEach((cell, c) => {
        if (cell.children.length > 0) job(cell.children, 'cell', (t) => (rows[r][c] = t))
      })
    })
    const draft: BlockDraft = { type: 'table', rows }
    const align = (node.align ?? []).slice(0, width)
    while (align.length < width) align.push(null)
    if (align.some((a) => a != null)) draft.style = align.map((a) => a ?? 'none').join(',')
    push(draft, depth)
  }

  const walk = (nodes: RootContent[], depth: number): void => {
    for (const node of nodes) {
      switch (node.type) {
        case 'paragraph': {
          const d = push({ type: 'paragraph' }, depth)
          inline(d, node.children, 'block')
          break
        }
        case 'heading': {
          const d = push({ type: 'heading', style: String(node.depth) }, depth)
          inline(d, node.children, 'heading')
          break
        }
        case 'thematicBreak':
          push({ type: 'divider' }, depth)
          break
        case 'code': {
          const d: BlockDraft = { type: 'code' }
          const info = node.lang ? node.lang + (node.meta ? ' ' + node.meta : '') : ''
          if (info) d.style = info
          d.text = node.value
          push(d, depth)
          break
        }
        case 'blockquote': {
          const d = push({ type: 'quote' }, depth)
          const first = node.children[0]
          if (first?.type === 'paragraph') {
            inline(d, first.children, 'block')
            walk(node.children.slice(1), depth + 1)
          } else {
            d.text = ''
            walk(node.children, depth + 1)
          }
          break
        }
        case 'list':
          node.children.forEach((item, i) => listItem(node, item, i, depth))
          break
        case 'table':
          table(node, depth)
          break
        case 'html':
          push({ type: 'raw', text: node.value.replace(/^[ \t]+/, '') }, depth)
          break
        default: {
          const md = toMarkdown(node, TO_MARKDOWN_OPTIONS).replace(/\n+$/, '')
          push({ type: 'raw', text: md }, depth)
        }
      }
    }
  }

  walk(tree.children, 0)
  const texts = serializeInlineBatch(jobs)
  jobs.forEach((j, i) => j.set(texts[i]))
  return out
}

/** `POST /markdown/append`: the drafts to insert after the last block (no diff). */
export function append(markdown: string): BlockDraft[] {
  return parse(markdown)
}
