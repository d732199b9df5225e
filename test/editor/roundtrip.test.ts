import { describe, expect, it } from 'vitest'
import { parse, render, svcRefs } from '../../sync/modules/editor/index.ts'
import { bigDrafts } from './helpers.ts'

/** Documents in normal form: render(parse(md)) must give them back byte for byte. */
const DOCS: Record<string, string> = {
  'empty document': '',
  'one paragraph': 'Hello world.\n',
  'two paragraphs': 'First paragraph.\n\nSecond paragraph.\n',
  'soft line break kept': 'line one\nline two\n',
  'hard line break': 'line one\\\nline two\n',
  'heading levels 1-6': '# One\n\n## Two\n\n### Three\n\n#### Four\n\n##### Five\n\n###### Six\n',
  'empty heading': '##\n',
  'numbered heading stays unescaped': '## 1. Introduction\n\nText.\n',
  'heading with trailing hash escaped': '# C \\#\n',
  'heading with inline marks': '### The **bold** and `code` heading\n',
  bold: 'Some **bold** text.\n',
  italic: 'Some *italic* text.\n',
  'bold italic': 'Some ***strong emphasis*** here.\n',
  'inline code': 'Call `render(blocks)` now.\n',
  'inline code with backtick': 'Use ``a ` tick`` here.\n',
  strikethrough: 'This is ~~gone~~ now.\n',
  'nested marks': 'A **bold *and italic* run** and ~~struck **bold**~~.\n',
  link: 'See [the docs](https://example.com/docs).\n',
  'link with title': 'See [the docs](https://example.com/docs "Docs").\n',
  autolink: 'Visit <https://example.com> today.\n',
  'svc object link': 'Related: [Roadmap](svc://obj123).\n',
  'svc link with space and anchor': 'See [that heading](svc://space1/obj9#intro).\n',
  'svc autolink': 'Raw ref <svc://obj42>.\n',
  mention: 'Thanks [@Ada](svc://m/space1/ada-key) for the review.\n',
  'mentions and links together': '[@Ada](svc://m/s1/ada) and [@Bob](svc://m/s1/bob) edited [Plan](svc://plan1) and [site](https://x.org).\n',
  image: 'Logo: ![logo](https://example.com/logo.png)\n',
  'escaped block starts': '\\# not a heading\n\n1\\. not a list\n\n\\- not a bullet\n\n\\> not a quote\n',
  'escaped inline chars': 'Literal \\*stars\\* and \\_underscores\\_ and \\[brackets].\n',
  'intraword underscore': 'snake_case_name stays\n',
  'inline html': 'Press <kbd>Ctrl</kbd> now.\n',
  'bullet list': '- one\n- two\n- three\n',
  'bullet list with marks': '- **bold** item\n- item with [link](https://a.b)\n- item with `code`\n',
  'nested bullets': '- parent\n  - child\n    - grandchild\n  - second child\n- sibling\n',
  'numbered list': '1. first\n2. second\n3. third\n',
  'numbered list starting at 5': '5. five\n6. six\n',
  'numbered list with ten items': '1. a\n2. b\n3. c\n4. d\n5. e\n6. f\n7. g\n8. h\n9. i\n10. j\n',
  'nested numbered': '1. step\n   1. sub step\n   2. another\n2. next\n',
  'mixed nesting': '- bullet\n  1. numbered inside\n     - bullet again\n',
  'task list': '- [ ] todo\n- [x] done\n',
  'nested tasks': '- [ ] parent task\n  - [x] sub task\n  - [ ] open sub task\n',
  'empty task': '- [ ]\n- [x] done\n',
  'literal checkbox text in a bullet': '- \\[ ] not a task\n',
  'tasks mixed with bullets': '- plain\n- [ ] task\n- plain again\n',
  'bullet then numbered list': '- a\n- b\n\n1. one\n2. two\n',
  'paragraph inside list item': '- item\n\n  continued paragraph\n- next\n',
  'code inside list item': '- item\n\n  ```js\n  x()\n  ```\n- next\n',
  'multi-line list item': '- first line\n  second line\n',
  'empty list item': '- a\n-\n- c\n',
  'heading inside list item': '-\n  ## heading in item\n',
  'numbered child starting at 3': '- a\n\n  3. c\n',
  quote: '> A quote.\n',
  'multi-line quote': '> line one\n> line two\n',
  'quote with two paragraphs': '> first\n>\n> second\n',
  'two separate quotes': '> one\n\n> two\n',
  'quote with list': '> intro\n> - a\n> - b\n',
  'nested quote': '> outer\n>\n> > inner\n',
  'empty quote': '>\n',
  'quote starting with a list': '>\n> - only a list\n',
  'quote with marks and mention': '> **Note**: ask [@Ada](svc://m/s/ada)\n',
  'code block with language': '```ts\nconst x: number = 1\n```\n',
  'code block without language': '```\nplain code\n```\n',
  'code block with meta': '```js title="a.js"\nlet a\n```\n',
  'empty code block': '```\n```\n',
  'code block with blank lines': '```py\ndef f():\n\n    return 1\n```\n',
  'code block containing a fence': '````md\n```\ninner\n```\n````\n',
  'code keeps markdown literal': '```\n# not a heading\n- not a list\n```\n',
  divider: 'above\n\n---\n\nbelow\n',
  'several dividers': '---\n\n---\n',
  table: '| a | b |\n| --- | --- |\n| 1 | 2 |\n',
  'table with alignment': '| left | center | right | none |\n| :-- | :-: | --: | --- |\n| 1 | 2 | 3 | 4 |\n',
  'table with inline marks': '| name | link |\n| --- | --- |\n| **bold** | [Doc](svc://doc1) |\n| `code` | [@Ada](svc://m/s/ada) |\n',
  'table with escaped pipe': '| expr |\n| --- |\n| a \\| b |\n| `x \\| y` |\n',
  'table with empty cells': '| a | b |\n| --- | --- |\n|  | 2 |\n',
  'header-only table': '| only |\n| --- |\n',
  'table in a list item': '- item\n\n  | a |\n  | --- |\n  | 1 |\n',
  'html block': '<div align="center">\n  <b>hi</b>\n</div>\n',
  'footnote kept as raw': 'Text with a note[^1].\n\n[^1]: The note.\n',
  'link reference definition kept as raw': 'See [docs][d].\n\n[d]: https://example.com/docs\n',
  'full document': [
    '# Project plan',
    '',
    'Owner: [@Ada](svc://m/space1/ada). Related: [Roadmap](svc://obj-roadmap).',
    '',
    '## Goals',
    '',
    '1. Ship the **editor**',
    '2. Keep *round trips* exact',
    '   - no ~~surprises~~',
    '',
    '## Tasks',
    '',
    '- [x] parse',
    '- [ ] render',
    '  - [ ] tables',
    '',
    '> Done is better than perfect.',
    '',
    '```ts',
    'export const answer = 42',
    '```',
    '',
    '---',
    '',
    '| step | state |',
    '| :-- | :-: |',
    '| parse | done |',
    '| diff | `wip` |',
    '',
  ].join('\n'),
  'meeting notes':
    '## Attendees\n\n- [@Ada](svc://m/s/ada)\n- [@Bob](svc://m/s/bob)\n\n## Decisions\n\n1. Use **fractional** positions\n2. Diff per block\n\n## Follow-ups\n\n- [ ] Write docs for [Editor](svc://editor-doc)\n',
  'deep nesting': '- a\n  - b\n    - c\n      - d\n        - e\n',
  'list item with quote child': '- item\n\n  > quoted in item\n',
  'unicode text': 'Grüße, 世界 — “quotes” and emoji 🎉.\n',
  'ampersand escaped': 'AT\\&T and ©.\n',
}

describe('markdown round trip: render(parse(md)) === md', () => {
  it('has at least 50 distinct documents', () => {
    expect(Object.keys(DOCS).length).toBeGreaterThanOrEqual(50)
    expect(new Set(Object.values(DOCS)).size).toBe(Object.keys(DOCS).length)
  })

  for (const [name, md] of Object.entries(DOCS)) {
    it(name, () => {
      const blocks = parse(md)
      expect(render(blocks)).toBe(md)
      // the blocks are a fixpoint too
      expect(parse(render(blocks))).toEqual(blocks)
    })
  }
})

describe('block mapping', () => {
  it('maps every construct onto the documented block fields', () => {
    const blocks = parse(DOCS['full document'])
    expect(blocks).toEqual([
      { type: 'heading', style: '1', text: 'Project plan' },
      { type: 'paragraph', text: 'Owner: [@Ada](svc://m/space1/ada). Related: [Roadmap](svc://obj-roadmap).' },
      { type: 'heading', style: '2', text: 'Goals' },
      { type: 'numbered', text: 'Ship the **editor**' },
      { type: 'numbered', text: 'Keep *round trips* exact' },
      { type: 'bullet', text: 'no ~~surprises~~', nav: { depth: 1 } },
      { type: 'heading', style: '2', text: 'Tasks' },
      { type: 'task', text: 'parse', checked: true },
      { type: 'task', text: 'render', checked: false },
      { type: 'task', text: 'tables', checked: false, nav: { depth: 1 } },
      { type: 'quote', text: 'Done is better than perfect.' },
      { type: 'code', style: 'ts', text: 'export const answer = 42' },
      { type: 'divider' },
      {
        type: 'table',
        style: 'left,center',
        rows: [
          ['step', 'state'],
          ['parse', 'done'],
          ['diff', '`wip`'],
        ],
      },
    ])
  })

  it('keeps a numbered list start on its first item only', () => {
    expect(parse('7. a\n8. b\n')).toEqual([
      { type: 'numbered', text: 'a', style: '7' },
      { type: 'numbered', text: 'b' },
    ])
  })

  it('nests quote content under the quote block', () => {
    expect(parse('> first\n>\n> second\n')).toEqual([
      { type: 'quote', text: 'first' },
      { type: 'paragraph', text: 'second', nav: { depth: 1 } },
    ])
  })

  it('normalizes other spellings to the normal form', () => {
    const cases: [string, string][] = [
      ['Title\n=====\n', '# Title\n'],
      ['Sub\n---\n', '## Sub\n'],
      ['* a\n* b\n', '- a\n- b\n'],
      ['+ a\n', '- a\n'],
      ['1) a\n2) b\n', '1. a\n2. b\n'],
      ['3. a\n3. b\n', '3. a\n4. b\n'],
      ['- a\n\n- b\n', '- a\n- b\n'],
      ['__bold__ _it_\n', '**bold** *it*\n'],
      ['***\n', '---\n'],
      ['~~~ts\nx\n~~~\n', '```ts\nx\n```\n'],
      ['    indented code\n', '```\nindented code\n```\n'],
      ['a  \nb\n', 'a\\\nb\n'],
      ['see https://example.com\n', 'see <https://example.com>\n'],
      ['|a|b|\n|-|:-:|\n|1|2|\n', '| a | b |\n| --- | :-: |\n| 1 | 2 |\n'],
      ['| a | b |\n| - | - |\n| 1 |\n', '| a | b |\n| --- | --- |\n| 1 |  |\n'],
      ['# Closed #\n', '# Closed\n'],
      ['> a\nlazy\n', '> a\n> lazy\n'],
      ['1. [ ] ordered task\n', '- [ ] ordered task\n'],
      ['text\n\n\n\nmore\n', 'text\n\nmore\n'],
      ['no final newline', 'no final newline\n'],
    ]
    for (const [input, normal] of cases) {
      expect(render(parse(input)), JSON.stringify(input)).toBe(normal)
      expect(render(parse(normal)), JSON.stringify(normal)).toBe(normal)
    }
  })

  it('renders a 1,000-block document that parses back to the same blocks', () => {
    const drafts = bigDrafts(1000)
    const md = render(drafts)
    expect(parse(md)).toEqual(drafts)
    expect(render(parse(md))).toBe(md)
  }, 300_000)

  it('collects svc:// references: object links, mentions, files', () => {
    const refs = svcRefs(parse(DOCS['mentions and links together'] + '\n| f |\n| --- |\n| [file](svc://f/s1/file1) |\n\n```\n[skip](svc://in-code)\n```\n'))
    expect(refs).toEqual([
      { kind: 'mention', url: 'svc://m/s1/ada', spaceId: 's1', identity: 'ada' },
      { kind: 'mention', url: 'svc://m/s1/bob', spaceId: 's1', identity: 'bob' },
      { kind: 'object', url: 'svc://plan1', objectId: 'plan1' },
      { kind: 'file', url: 'svc://f/s1/file1', spaceId: 's1', fileId: 'file1' },
    ])
  })
})
