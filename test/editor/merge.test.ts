import { describe, expect, it } from 'vitest'
import { diffMarkdown, posGenerator, render, summarize } from '../../sync/modules/editor/index.ts'
import { applyDiff, bigDrafts, blocksOf, materialize, storeOf } from './helpers.ts'

/**
 * Two replicas start from the same blocks and PUT different versions of the document
 * concurrently. Each computes its ops against the common state; both sets of ops are then
 * applied to one block map keyed by id (what merging the two changes does, record by record).
 */
describe('concurrent PUTs from two replicas', () => {
  const base = materialize(bigDrafts(200))
  const md = render(base)

  // Replica A edits blocks 12 and 93 and inserts after Section 50.
  const mdA = md
    .replace('Paragraph 12 with', 'Paragraph 12 (by A) with')
    .replace('## Section 50\n', '## Section 50\n\nInserted by A.\n')
    .replace('Paragraph 93 with', 'Paragraph 93 (by A) with')
  // Replica B edits block 150, inserts at the same spot as A, changes a task.
  const mdB = md
    .replace('Paragraph 151 with', 'Paragraph 151 (by B) with')
    .replace('## Section 50\n', '## Section 50\n\nInserted by B.\n')
    .replace('- [ ] task 177', '- [x] task 177')

  const diffA = diffMarkdown(base, mdA, posGenerator('replica-A'))
  const diffB = diffMarkdown(base, mdB, posGenerator('replica-B'))

  it('each side writes only its own per-block ops', () => {
    expect(summarize(diffA)).toEqual({ inserted: 1, updated: 2, deleted: 0, unchanged: 198 })
    expect(summarize(diffB)).toEqual({ inserted: 1, updated: 2, deleted: 0, unchanged: 198 })
  })

  it('merging keeps both sides edits and every unrelated block, in either order', () => {
    const ab = blocksOf(applyDiff(applyDiff(storeOf(base), diffA, 'a'), diffB, 'b'))
    const ba = blocksOf(applyDiff(applyDiff(storeOf(base), diffB, 'b'), diffA, 'a'))
    const merged = render(ab)
    expect(render(ba)).toBe(merged)
    for (const s of ['Paragraph 12 (by A) with', 'Paragraph 93 (by A) with', 'Paragraph 151 (by B) with', '- [x] task 177', 'Inserted by A.', 'Inserted by B.']) {
      expect(merged).toContain(s)
    }
    // every other block is still there, untouched
    expect(ab.length).toBe(202)
    const touched = new Set([...diffA.updates, ...diffB.updates].map((u) => u.id))
    for (const b of base) if (!touched.has(b.id)) expect(ab.find((x) => x.id === b.id)).toEqual(b)
    // the two concurrent inserts at one spot got distinct positions, both right after Section 50
    const iA = merged.indexOf('Inserted by A.')
    const iB = merged.indexOf('Inserted by B.')
    const section = merged.indexOf('## Section 50\n')
    const next = merged.indexOf('Paragraph 51 with')
    expect(Math.min(iA, iB)).toBeGreaterThan(section)
    expect(Math.max(iA, iB)).toBeLessThan(next)
    expect(diffA.inserts[0].pos).not.toBe(diffB.inserts[0].pos)
  })

  it('a delete on one side and an edit of another block on the other both survive', () => {
    const mdDel = md.replace('## Section 60\n\n', '')
    const mdEdit = md.replace('Paragraph 61 with', 'Paragraph 61 (edited) with')
    const dDel = diffMarkdown(base, mdDel, posGenerator('A'))
    const dEdit = diffMarkdown(base, mdEdit, posGenerator('B'))
    expect(summarize(dDel)).toEqual({ inserted: 0, updated: 0, deleted: 1, unchanged: 199 })
    const merged = render(blocksOf(applyDiff(applyDiff(storeOf(base), dDel), dEdit)))
    expect(merged).not.toContain('## Section 60\n')
    expect(merged).toContain('Paragraph 61 (edited) with')
    expect(merged).toBe(md.replace('## Section 60\n\n', '').replace('Paragraph 61 with', 'Paragraph 61 (edited) with'))
  })
})
