import { describe, expect, it } from 'vitest'
import { SvcError } from '../../sync/core/errors.ts'
import { applyEdits, patchMarkdown, posGenerator, render, summarize } from '../../sync/modules/editor/index.ts'
import { applyDiff, bigDrafts, blocksOf, materialize, storeOf } from './helpers.ts'

const DOC = '# Plan\n\nShip the editor.\n\n- [ ] parse\n- [ ] render\n- [ ] diff\n\nShip the docs.\n'

function codeOf(f: () => unknown): { code: string; details?: Record<string, unknown> } {
  try {
    f()
  } catch (e) {
    expect(e).toBeInstanceOf(SvcError)
    return { code: (e as SvcError).code, details: (e as SvcError).details }
  }
  throw new Error('expected an error')
}

describe('applyEdits', () => {
  it('replaces a unique match', () => {
    expect(applyEdits(DOC, [{ oldText: '- [ ] parse', newText: '- [x] parse' }])).toBe(DOC.replace('- [ ] parse', '- [x] parse'))
  })

  it('applies several edits, each matched against the original rendering', () => {
    const out = applyEdits(DOC, [
      { oldText: '# Plan', newText: '# Plan v2' },
      { oldText: 'render', newText: 'render\n- [ ] layout' },
      { oldText: 'Ship the docs.', newText: 'Ship the docs and the **bench**.' },
    ])
    expect(out).toBe('# Plan v2\n\nShip the editor.\n\n- [ ] parse\n- [ ] render\n- [ ] layout\n- [ ] diff\n\nShip the docs and the **bench**.\n')
  })

  it('replaceAll replaces every non-overlapping occurrence', () => {
    expect(applyEdits(DOC, [{ oldText: '- [ ]', newText: '- [x]', replaceAll: true }])).toBe(DOC.replaceAll('- [ ]', '- [x]'))
    expect(applyEdits('aaaa', [{ oldText: 'aa', newText: 'b', replaceAll: true }])).toBe('bb')
  })

  it('400 markdown.no_match with details.editIndex', () => {
    const err = codeOf(() =>
      applyEdits(DOC, [
        { oldText: 'Plan', newText: 'P' },
        { oldText: 'nowhere', newText: 'x' },
      ]),
    )
    expect(err).toEqual({ code: 'markdown.no_match', details: { editIndex: 1 } })
    // replaceAll still needs at least one occurrence
    expect(codeOf(() => applyEdits(DOC, [{ oldText: 'zzz', newText: '', replaceAll: true }]))).toEqual({ code: 'markdown.no_match', details: { editIndex: 0 } })
  })

  it('400 markdown.ambiguous_match with details.occurrences and editIndex', () => {
    const err = codeOf(() => applyEdits(DOC, [{ oldText: 'Ship the', newText: 'Build the' }]))
    expect(err).toEqual({ code: 'markdown.ambiguous_match', details: { editIndex: 0, occurrences: 2 } })
    expect(codeOf(() => applyEdits(DOC, [{ oldText: '- [ ] ', newText: '' }])).details).toEqual({ editIndex: 0, occurrences: 3 })
    // overlapping occurrences count: "aa" occurs twice in "aaa"
    expect(codeOf(() => applyEdits('aaa', [{ oldText: 'aa', newText: 'b' }])).details).toEqual({ editIndex: 0, occurrences: 2 })
  })

  it('400 markdown.overlapping_edits with details.editIndices', () => {
    const err = codeOf(() =>
      applyEdits(DOC, [
        { oldText: '# Plan', newText: '# P' },
        { oldText: 'Ship the editor.', newText: 'x' },
        { oldText: 'the editor', newText: 'y' },
      ]),
    )
    expect(err).toEqual({ code: 'markdown.overlapping_edits', details: { editIndices: [1, 2] } })
    // a replaceAll edit overlapping a single edit
    expect(
      codeOf(() =>
        applyEdits(DOC, [
          { oldText: '[ ] parse', newText: 'p' },
          { oldText: '- [ ]', newText: '-', replaceAll: true },
        ]),
      ),
    ).toEqual({ code: 'markdown.overlapping_edits', details: { editIndices: [0, 1] } })
    // adjacent edits do not overlap
    expect(
      applyEdits('abcd', [
        { oldText: 'ab', newText: 'X' },
        { oldText: 'cd', newText: 'Y' },
      ]),
    ).toBe('XY')
  })

  it('rejects an empty oldText', () => {
    expect(codeOf(() => applyEdits(DOC, [{ oldText: '', newText: 'x' }]))).toEqual({
      code: 'request.invalid_field',
      details: { field: 'edits.0.oldText', editIndex: 0 },
    })
  })
})

describe('patchMarkdown (PATCH)', () => {
  const newPos = posGenerator('patcher')

  it('is all or nothing: a failing edit leaves the blocks untouched', () => {
    const blocks = materialize(bigDrafts(50))
    const before = JSON.stringify(blocks)
    expect(() =>
      patchMarkdown(
        blocks,
        [
          { oldText: 'Paragraph 1 with', newText: 'P1' },
          { oldText: 'missing', newText: '' },
        ],
        newPos,
      ),
    ).toThrow(SvcError)
    expect(JSON.stringify(blocks)).toBe(before)
  })

  it('one edit in a 1,000-block document is one block update', () => {
    const blocks = materialize(bigDrafts(1000))
    const diff = patchMarkdown(blocks, [{ oldText: '- [ ] task 437', newText: '- [x] task 437' }], newPos)
    expect(summarize(diff)).toEqual({ inserted: 0, updated: 1, deleted: 0, unchanged: 999 })
    expect(diff.updates[0]).toEqual({ id: blocks[437].id, set: { checked: true }, unset: [] })
  })

  it('edits that add and remove blocks', () => {
    const blocks = materialize(bigDrafts(30))
    const md = render(blocks)
    const diff = patchMarkdown(
      blocks,
      [
        { oldText: '## Section 10\n', newText: '## Section 10\n\n- new item\n' },
        { oldText: '## Section 20\n\n', newText: '' },
      ],
      newPos,
    )
    expect(summarize(diff)).toEqual({ inserted: 1, updated: 0, deleted: 1, unchanged: 29 })
    const after = render(blocksOf(applyDiff(storeOf(blocks), diff)))
    expect(after).toBe(md.replace('## Section 10\n', '## Section 10\n\n- new item\n').replace('## Section 20\n\n', ''))
  })
})
