/**
 * Inline markdown: the normalized serialization of phrasing content kept in `text` (and in table
 * cells). Serialization goes through mdast-util-to-markdown with fixed options, so the escapes are
 * the library's (minimal and context aware), not ours.
 *
 * Three contexts:
 * - `block`: a paragraph at the start of a line (paragraph, list item, quote text). Line-start
 *   constructs are escaped (`\# not a heading`, `1\. not a list`).
 * - `heading`: after `# `; the line start needs no escape but a trailing `#` run does.
 * - `cell`: a table cell; `|` is escaped.
 */
import { toMarkdown, type Options as ToMarkdownOptions } from 'mdast-util-to-markdown'
import { gfmToMarkdown } from 'mdast-util-gfm'
import type { Heading, Paragraph, PhrasingContent, RootContent, TableCell } from 'mdast'

export type InlineContext = 'block' | 'heading' | 'cell'

export const TO_MARKDOWN_OPTIONS: ToMarkdownOptions = {
  extensions: [gfmToMarkdown({ tablePipeAlign: false, tableCellPadding: true })],
  bullet: '-',
  bulletOther: '*',
  emphasis: '*',
  strong: '*',
  fence: '`',
  fences: true,
  rule: '-',
  ruleRepetition: 3,
  ruleSpaces: false,
  listItemIndent: 'one',
  incrementListMarker: true,
  resourceLink: false,
  setext: false,
  closeAtx: false,
  quote: '"',
}

/** Headings cannot hold line endings: soft breaks and hard breaks become one space. */
function flattenLines(children: PhrasingContent[]): PhrasingContent[] {
  return children.map((c): PhrasingContent => {
    if (c.type === 'break') return { type: 'text', value: ' ' }
    if (c.type === 'text') return { ...c, value: c.value.replace(/[ \t]*\r?\n[ \t]*/g, ' ') }
    if ('children' in c && Array.isArray(c.children)) return { ...c, children: flattenLines(c.children) }
    return c
  })
}

function wrap(context: InlineContext, children: PhrasingContent[]): RootContent {
  if (context === 'heading') return { type: 'heading', depth: 1, children: flattenLines(children) } satisfies Heading
  if (context === 'cell') return { type: 'tableCell', children } satisfies TableCell
  return { type: 'paragraph', children } satisfies Paragraph
}

function unwrap(context: InlineContext, out: string): string {
  if (context === 'heading') return out === '#' ? '' : out.slice(2)
  return out
}

const trimNewline = (s: string): string => (s.endsWith('\n') ? s.slice(0, -1) : s)

/** Serialize one run of phrasing content in a context. */
export function serializeInline(children: PhrasingContent[], context: InlineContext = 'block'): string {
  if (children.length === 0) return ''
  return unwrap(context, trimNewline(toMarkdown(wrap(context, children), TO_MARKDOWN_OPTIONS)))
}

/**
 * Serialize many runs with one serializer pass (mdast-util-to-markdown has a noticeable fixed cost
 * per call). Runs are joined as sibling flow nodes and split on the blank line between them; no
 * run can contain a blank line. Falls back to one call per run if the split does not line up.
 */
export function serializeInlineBatch(items: { children: PhrasingContent[]; context: InlineContext }[]): string[] {
  const out: string[] = new Array<string>(items.length).fill('')
  const idx: number[] = []
  const nodes: RootContent[] = []
  items.forEach((it, i) => {
    if (it.children.length === 0) return
    idx.push(i)
    nodes.push(wrap(it.context, it.children))
  })
  if (nodes.length === 0) return out
  if (nodes.length > 1) {
    const text = trimNewline(toMarkdown({ type: 'root', children: nodes }, { ...TO_MARKDOWN_OPTIONS, join: [() => 1] }))
    const parts = text.split('\n\n')
    if (parts.length === nodes.length) {
      parts.forEach((p, k) => (out[idx[k]] = unwrap(items[idx[k]].context, p)))
      return out
    }
  }
  idx.forEach((i) => (out[i] = serializeInline(items[i].children, items[i].context)))
  return out
}
