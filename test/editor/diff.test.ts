import { describe, expect, it } from 'vitest'
import fc from 'fast-check'
import { diffBlocks, diffMarkdown, parse, posGenerator, render, summarize, type Block, type BlockDraft } from '../../sync/modules/editor/index.ts'
import { applyDiff, bigDrafts, blocksOf, contentOf, materialize, storeOf } from './helpers.ts'

const newPos = posGenerator('test-device')

describe('diffBlocks', () => {
  const drafts = bigDrafts(1000)
  const blocks = materialize(drafts)

  it('changing one block of 1,000 yields exactly one update and nothing else', () => {
    const next = drafts.map((d) => structuredClone(d))
    next[537] = { ...next[537], text: next[537].text + ' (edited)' }
    const diff = diffBlocks(blocks, next, newPos)
    expect(diff.inserts).toEqual([])
    expect(diff.deletes).toEqual([])
    expect(diff.updates).toEqual([{ id: blocks[537].id, set: { text: next[537].text }, unset: [] }])
    expect(diff.unchanged).toBe(999)
    expect(summarize(diff)).toEqual({ inserted: 0, updated: 1, deleted: 0, unchanged: 999 })
  })

  it('an insert in the middle is one insert positioned between its neighbours', () => {
    const next = [...drafts.slice(0, 400), { type: 'paragraph', text: 'new one' }, ...drafts.slice(400)]
    const diff = diffBlocks(blocks, next, newPos)
    expect(summarize(diff)).toEqual({ inserted: 1, updated: 0, deleted: 0, unchanged: 1000 })
    const pos = diff.inserts[0].pos
    expect(pos > blocks[399].nav!.pos! && pos < blocks[400].nav!.pos!).toBe(true)
    expect(diff.inserts[0].draft).toEqual({ type: 'paragraph', text: 'new one' })
  })

  it('a run of inserts gets increasing positions inside the gap', () => {
    const added: BlockDraft[] = Array.from({ length: 50 }, (_, i) => ({ type: 'paragraph', text: `added ${i}` }))
    const next = [...drafts.slice(0, 10), ...added, ...drafts.slice(10)]
    const diff = diffBlocks(blocks, next, newPos)
    expect(diff.inserts.length).toBe(50)
    const keys = diff.inserts.map((i) => i.pos)
    expect([...keys].sort()).toEqual(keys)
    expect(keys[0] > blocks[9].nav!.pos! && keys[49] < blocks[10].nav!.pos!).toBe(true)
  })

  it('a deleted block is one delete', () => {
    const next = [...drafts.slice(0, 700), ...drafts.slice(701)]
    const diff = diffBlocks(blocks, next, newPos)
    expect(diff.deletes).toEqual([blocks[700].id])
    expect(summarize(diff)).toEqual({ inserted: 0, updated: 0, deleted: 1, unchanged: 999 })
  })

  it('a moved block keeps its id: one update of nav.pos', () => {
    // move block 100 to after block 200
    const next = [...drafts.slice(0, 100), ...drafts.slice(101, 201), drafts[100], ...drafts.slice(201)]
    const diff = diffBlocks(blocks, next, newPos)
    expect(diff.inserts).toEqual([])
    expect(diff.deletes).toEqual([])
    expect(diff.updates).toHaveLength(1)
    const up = diff.updates[0]
    expect(up.id).toBe(blocks[100].id)
    expect(Object.keys(up.set)).toEqual(['nav.pos'])
    const p = up.set['nav.pos'] as string
    expect(p > blocks[200].nav!.pos! && p < blocks[201].nav!.pos!).toBe(true)
    const after = blocksOf(applyDiff(storeOf(blocks), diff))
    expect(after.map(contentOf)).toEqual(next.map(contentOf))
  })

  it('swapping two blocks is one move', () => {
    const small = materialize(parse('one\n\ntwo\n\nthree\n'))
    const diff = diffBlocks(small, parse('two\n\none\n\nthree\n'), newPos)
    expect(summarize(diff)).toEqual({ inserted: 0, updated: 1, deleted: 0, unchanged: 2 })
    expect(render(blocksOf(applyDiff(storeOf(small), diff)))).toBe('two\n\none\n\nthree\n')
  })

  it('sets and unsets only the fields that changed', () => {
    const cur = materialize([
      { type: 'paragraph', text: 'title' },
      { type: 'bullet', text: 'item', nav: { depth: 1 } },
      { type: 'task', text: 'todo', checked: false },
      { type: 'numbered', text: 'n', style: '4' },
      { type: 'code', style: 'js', text: 'x' },
    ])
    const next: BlockDraft[] = [
      { type: 'heading', style: '2', text: 'title' },
      { type: 'bullet', text: 'item' },
      { type: 'task', text: 'todo', checked: true },
      { type: 'numbered', text: 'n' },
      { type: 'code', text: 'x' },
    ]
    const diff = diffBlocks(cur, next, newPos)
    expect(diff.updates).toEqual([
      { id: cur[0].id, set: { type: 'heading', style: '2' }, unset: [] },
      { id: cur[1].id, set: {}, unset: ['nav.depth'] },
      { id: cur[2].id, set: { checked: true }, unset: [] },
      { id: cur[3].id, set: {}, unset: ['style'] },
      { id: cur[4].id, set: {}, unset: ['style'] },
    ])
  })

  it('pairs changed blocks by similarity inside a gap', () => {
    const cur = materialize(parse('keep\n\nalpha beta gamma\n\ndelta epsilon\n\nend\n'))
    const diff = diffBlocks(cur, parse('keep\n\nbrand new\n\ndelta epsilon zeta\n\nend\n'), newPos)
    // "alpha..." is replaced, "delta..." edited; two blocks out, two in: two updates in place
    expect(summarize(diff)).toEqual({ inserted: 0, updated: 2, deleted: 0, unchanged: 2 })
    const byId = new Map(diff.updates.map((u) => [u.id, u.set.text]))
    expect(byId.get(cur[2].id)).toBe('delta epsilon zeta')

    const cur2 = materialize(parse('a\n\nthe quick brown fox\n\nz\n'))
    const diff2 = diffBlocks(cur2, parse('a\n\nsomething else\n\nthe quick brown fox jumps\n\nz\n'), newPos)
    expect(diff2.updates).toEqual([{ id: cur2[1].id, set: { text: 'the quick brown fox jumps' }, unset: [] }])
    expect(diff2.inserts.map((i) => i.draft.text)).toEqual(['something else'])
  })

  it('sorts its input by nav.pos and repositions blocks with unusable positions', () => {
    const cur = materialize(parse('a\n\nb\n\nc\n'))
    const shuffled = [cur[2], cur[0], cur[1]]
    expect(summarize(diffBlocks(shuffled, parse('a\n\nb\n\nc\n'), newPos)).unchanged).toBe(3)
    const broken: Block[] = cur.map((b) => structuredClone(b))
    broken[1].nav!.pos = broken[0].nav!.pos // duplicate position
    const diff = diffBlocks(broken, parse('a\n\nb\n\nc\n'), newPos)
    const after = blocksOf(applyDiff(storeOf(broken), diff))
    expect(render(after)).toBe('a\n\nb\n\nc\n')
    expect(new Set(after.map((b) => b.nav!.pos)).size).toBe(3)
  })

  it('applying the ops always yields the next blocks (property)', () => {
    const draftArb = fc
      .record({
        type: fc.constantFrom('paragraph', 'heading', 'bullet', 'task'),
        text: fc.constantFrom('a', 'b', 'c', 'd', 'e', 'same'),
        depth: fc.integer({ min: 0, max: 1 }),
      })
      .map(({ type, text, depth }): BlockDraft => {
        const d: BlockDraft = { type, text }
        if (type === 'heading') d.style = '2'
        if (type === 'task') d.checked = text === 'a'
        if (depth) d.nav = { depth }
        return d
      })
    fc.assert(
      fc.property(fc.array(draftArb, { maxLength: 30 }), fc.array(draftArb, { maxLength: 30 }), (a, b) => {
        const cur = materialize(a)
        const diff = diffBlocks(cur, b, newPos)
        const after = blocksOf(applyDiff(storeOf(cur), diff))
        expect(after.map(contentOf)).toEqual(b.map(contentOf))
        if (JSON.stringify(a) === JSON.stringify(b)) expect(diff.inserts.length + diff.deletes.length + diff.updates.length).toBe(0)
        expect(diff.unchanged + diff.updates.length + diff.deletes.length).toBe(a.length)
      }),
      { numRuns: 400 },
    )
  })
})

describe('diffMarkdown (PUT)', () => {
  const drafts = bigDrafts(1000)
  const blocks = materialize(drafts)
  const md = render(blocks)

  it('changing one block of a 1,000-block document writes exactly one update', () => {
    const next = md.replace('Paragraph 611 with', 'Paragraph 611 (changed) with')
    const diff = diffMarkdown(blocks, next, newPos)
    expect(summarize(diff)).toEqual({ inserted: 0, updated: 1, deleted: 0, unchanged: 999 })
    expect(diff.updates[0].id).toBe(blocks[611].id)
    expect(diff.updates[0].set).toEqual({ text: drafts[611].text!.replace('Paragraph 611 with', 'Paragraph 611 (changed) with') })
  })

  it('an unchanged document writes nothing', () => {
    expect(summarize(diffMarkdown(blocks, md, newPos))).toEqual({ inserted: 0, updated: 0, deleted: 0, unchanged: 1000 })
  })

  it('insert, delete and structural edits in a large document stay local', () => {
    const insert = md.replace('## Section 500\n', '## Section 500\n\nA new paragraph.\n')
    const d1 = diffMarkdown(blocks, insert, newPos)
    expect(summarize(d1)).toEqual({ inserted: 1, updated: 0, deleted: 0, unchanged: 1000 })
    expect(d1.inserts[0].pos > blocks[500].nav!.pos! && d1.inserts[0].pos < blocks[501].nav!.pos!).toBe(true)

    const del = md.replace(`${render([drafts[303]])}\n`, '')
    expect(summarize(diffMarkdown(blocks, del, newPos))).toEqual({ inserted: 0, updated: 0, deleted: 1, unchanged: 999 })

    // a paragraph turned into a heading, a bullet indented under its predecessor
    const structural = md.replace('\nParagraph 702 with', '\n### Paragraph 702 with').replace('- item 706 with', '  - item 706 with')
    const d3 = diffMarkdown(blocks, structural, newPos)
    expect(summarize(d3)).toEqual({ inserted: 0, updated: 2, deleted: 0, unchanged: 998 })
    expect(d3.updates.map((u) => u.set)).toEqual([{ type: 'heading', style: '3' }, { 'nav.depth': 1 }])
  })

  it('never touches blocks markdown does not show', () => {
    const cur = materialize([
      { type: 'paragraph', text: 'one' },
      { type: 'paragraph', text: '' },
      { type: 'embed', text: 'a widget only some client knows' },
      { type: 'paragraph', text: 'two' },
      { type: 'paragraph', text: 'three' },
      { type: 'paragraph', text: 'four' },
    ])
    expect(render(cur)).toBe('one\n\ntwo\n\nthree\n\nfour\n')
    const diff = diffMarkdown(cur, 'one\n\ntwo!\n\nthree\n\nfour\n', newPos)
    expect(summarize(diff)).toEqual({ inserted: 0, updated: 1, deleted: 0, unchanged: 5 })
    const full = diffMarkdown(cur, 'replaced\n', newPos)
    expect(full.deletes).not.toContain(cur[1].id)
    expect(full.deletes).not.toContain(cur[2].id)
  })
})
