/**
 * Markdown -> block drafts. Parsing is mdast-util-from-markdown with the GFM extensions
 * (micromark-extension-gfm + mdast-util-gfm); this file only maps the tree onto blocks.
 */
import { fromMarkdown } from 'mdast-util-from-markdown'
import { gfmFromMarkdown } from 'mdast-util-gfm'
import { gfm } from 'micromark-extension-gfm'
import { toMarkdown } from 'mdast-util-to-markdown'
import type { Blockquote, List, ListItem, PhrasingContent, Root, RootContent, Table } from 'mdast'
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
  return new BlockParser(markdown, known).parse()
}

/**
 * One parse: walks the tree pushing drafts in document order, and collects the inline texts
 * to serialize as jobs, so they are serialized in one batch at the end (see KnownTexts for
 * the texts that skip it).
 */
class BlockParser {
  private readonly out: BlockDraft[] = []
  private readonly jobs: Job[] = []

  constructor(
    private readonly markdown: string,
    private readonly known: KnownTexts | undefined,
  ) {}

  parse(): BlockDraft[] {
    const tree = parseTree(this.markdown)
    this.walk(tree.children, 0)
    const texts = serializeInlineBatch(this.jobs)
    this.jobs.forEach((j, i) => j.set(texts[i]))
    return this.out
  }

  private knownSource(children: PhrasingContent[], context: InlineContext): string | undefined {
    const set = this.known?.[context]
    if (!set) return undefined
    const start = children[0].position?.start.offset
    const end = children[children.length - 1].position?.end.offset
    if (start === undefined || end === undefined) return undefined
    const source = this.markdown.slice(start, end)
    return set.has(source) ? source : undefined
  }

  private job(children: PhrasingContent[], context: InlineContext, set: (text: string) => void): void {
    const source = this.knownSource(children, context)
    if (source !== undefined) set(source)
    else this.jobs.push({ children, context, set })
  }

  private inline(draft: BlockDraft, children: PhrasingContent[], context: InlineContext): void {
    draft.text = ''
    if (children.length > 0) this.job(children, context, (t) => (draft.text = t))
  }

  private push(draft: BlockDraft, depth: number): BlockDraft {
    if (depth > 0) draft.nav = { depth }
    this.out.push(draft)
    return draft
  }

  private walk(nodes: RootContent[], depth: number): void {
    for (const node of nodes) {
      switch (node.type) {
        case 'paragraph': {
          const d = this.push({ type: 'paragraph' }, depth)
          this.inline(d, node.children, 'block')
          break
        }
        case 'heading': {
          const d = this.push({ type: 'heading', style: String(node.depth) }, depth)
          this.inline(d, node.children, 'heading')
          break
        }
        case 'thematicBreak':
          this.push({ type: 'divider' }, depth)
          break
        case 'code': {
          const d: BlockDraft = { type: 'code' }
          const info = node.lang ? node.lang + (node.meta ? ' ' + node.meta : '') : ''
          if (info) d.style = info
          d.text = node.value
          this.push(d, depth)
          break
        }
        case 'blockquote':
          this.blockquote(node, depth)
          break
        case 'list':
          node.children.forEach((item, i) => this.listItem(node, item, i, depth))
          break
        case 'table':
          this.table(node, depth)
          break
        case 'html':
          this.push({ type: 'raw', text: node.value.replace(/^[ \t]+/, '') }, depth)
          break
        default: {
          const md = toMarkdown(node, TO_MARKDOWN_OPTIONS).replace(/\n+$/, '')
          this.push({ type: 'raw', text: md }, depth)
        }
      }
    }
  }

  /** A quote's first paragraph is its own text; whatever follows nests below it. */
  private blockquote(node: Blockquote, depth: number): void {
    const d = this.push({ type: 'quote' }, depth)
    const first = node.children[0]
    if (first?.type === 'paragraph') {
      this.inline(d, first.children, 'block')
      this.walk(node.children.slice(1), depth + 1)
    } else {
      d.text = ''
      this.walk(node.children, depth + 1)
    }
  }

  private listItem(list: List, item: ListItem, index: number, depth: number): void {
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
      if (item.checked == null && only?.type === 'text' && EMPTY_TASK.test(only.value) && start !== undefined && this.markdown[start] === '[') {
        type = 'task'
        checked = only.value !== '[ ]'
        draft.type = type
        draft.text = ''
      } else {
        this.inline(draft, first.children, 'block')
      }
    } else {
      draft.text = ''
    }
    if (type === 'task') draft.checked = checked ?? false
    if (type === 'numbered' && index === 0 && list.start != null && list.start !== 1) draft.style = String(list.start)
    this.push(draft, depth)
    this.walk(rest, depth + 1)
  }

  private table(node: Table, depth: number): void {
    const width = node.children[0]?.children.length ?? 0
    const rows: string[][] = node.children.map(() => new Array<string>(width).fill(''))
    node.children.forEach((row, r) => {
      row.children.slice(0, width).forEach((cell, c) => {
        if (cell.children.length > 0) this.job(cell.children, 'cell', (t) => (rows[r][c] = t))
      })
    })
    const draft: BlockDraft = { type: 'table', rows }
    const align = (node.align ?? []).slice(0, width)
    while (align.length < width) align.push(null)
    if (align.some((a) => a != null)) draft.style = align.map((a) => a ?? 'none').join(',')
    this.push(draft, depth)
  }
}

/** `POST /markdown/append`: the drafts to insert after the last block (no diff). */
export function append(markdown: string): BlockDraft[] {
  return parse(markdown)
}
