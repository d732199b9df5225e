import fc from 'fast-check'
import { afterEach, describe, expect, it } from 'vitest'
import { diffMarkdown, plainParagraphs } from '../../sync/modules/editor/markdown.ts'
import { parse } from '../../sync/modules/editor/parse.ts'
import { posGenerator, renderBlocks } from '../../sync/modules/editor/index.ts'
import { materialize } from './helpers.ts'

/**
 * An edit inside one plain paragraph is diffed with a stand-in for its text instead of parsing
 * it (sync/modules/editor/markdown.ts, plainParagraphStandIn): the result must be exactly what
 * the full diff gives, on documents of every kind of block around it, including stored blocks
 * not in normal form and an HTML block left open that swallows what follows.
 */
afterEach(() => {
  plainParagraphs.standIn = true
})

const word = fc.stringMatching(/^[a-z0-9]{1,6}$/)
const plainText = fc.array(word, { minLength: 1, maxLength: 6 }).map((w) => w.join(' '))

const blockArb: fc.Arbitrary<Record<string, unknown>> = fc.oneof(
  { weight: 6, arbitrary: plainText.map((text) => ({ type: 'paragraph', text })) },
  { weight: 1, arbitrary: plainText.map((text) => ({ type: 'paragraph', text: `*${text}* [x]` })) },
  { weight: 1, arbitrary: plainText.map((text) => ({ type: 'paragraph', text, nav: { depth: 1 } })) },
  { weight: 1, arbitrary: plainText.map((text) => ({ type: 'paragraph', text, style: 'odd' })) },
  { weight: 1, arbitrary: plainText.map((text) => ({ type: 'heading', style: '2', text })) },
  { weight: 1, arbitrary: plainText.map((text) => ({ type: 'bullet', text })) },
  { weight: 1, arbitrary: plainText.map((text) => ({ type: 'numbered', text })) },
  { weight: 1, arbitrary: plainText.map((text) => ({ type: 'quote', text })) },
  { weight: 1, arbitrary: plainText.map((text) => ({ type: 'code', text })) },
  { weight: 1, arbitrary: fc.constantFrom('<pre>', '<!-- open', '<div>', '[ref]: https://x.example').map((text) => ({ type: 'raw', text })) },
  { weight: 1, arbitrary: fc.constant({ type: 'divider' }) },
  { weight: 1, arbitrary: fc.constant({ type: 'paragraph', text: '' }) },
)

const editArb = fc.record({ at: fc.nat(10_000), del: fc.nat(3), ins: fc.stringMatching(/^[a-z ]{0,3}$/) })

describe('an edit inside one plain paragraph', () => {
  it('gives the diff the full parse gives', () => {
    let fast = 0
    fc.assert(
      fc.property(fc.array(blockArb, { minLength: 1, maxLength: 8 }), fc.array(editArb, { minLength: 1, maxLength: 3 }), (drafts, edits) => {
        const blocks = materialize(drafts as never)
        const old = renderBlocks(blocks)
        let next = old
        for (const e of edits) {
          const at = e.at % (next.length + 1)
          next = next.slice(0, at) + e.ins + next.slice(at + e.del)
        }
        const pos = posGenerator('t')
        plainParagraphs.standIn = false
        const full = diffMarkdown(blocks, next, pos)
        plainParagraphs.standIn = true
        const withStandIn = diffMarkdown(blocks, next, pos)
        expect(withStandIn).toEqual(full)
        const served = plainParagraphs.served
        plainParagraphs.standIn = true
        diffMarkdown(blocks, next, pos)
        if (plainParagraphs.served > served) fast++
      }),
      { numRuns: 600 },
    )
    expect(fast).toBeGreaterThan(20)
  })

  it('takes the stand-in path for typing into a long paragraph', () => {
    const long = Array.from({ length: 2000 }, (_, i) => 'abcdefghij'[i % 10]).join('')
    const blocks = materialize([{ type: 'paragraph', text: long }])
    const next = long.slice(0, 1000) + 'Q' + long.slice(1000) + '\n'
    const served = plainParagraphs.served
    expect(diffMarkdown(blocks, next, posGenerator('t'))).toEqual({
      inserts: [],
      updates: [{ id: blocks[0].id, set: { text: next.trimEnd() }, unset: [] }],
      deletes: [],
      unchanged: 0,
    })
    expect(plainParagraphs.served).toBe(served + 1)
  })

  it('plain words parse as themselves', () => {
    fc.assert(
      fc.property(plainText, (text) => {
        expect(parse(text + '\n')).toEqual([{ type: 'paragraph', text }])
      }),
    )
  })
})
