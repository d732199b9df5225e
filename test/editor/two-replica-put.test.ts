import { describe, expect, it } from 'vitest'
import type { IngestItem } from '../../sync/replica/types.ts'
import { editorModule } from '../../sync/modules/editor/module.ts'
import { EDITOR_BLOCKS } from '../../sync/modules/editor/service.ts'
import { DEFAULT_MODULES } from '../../sync/modules/index.ts'
import { SpaceEngine } from '../../sync/space/space-engine.ts'
import { render } from '../../sync/modules/editor/index.ts'
import { deps, idFor, keyFor, pushAll } from '../helpers.ts'
import { twoMembers } from '../space/helpers.ts'
import { bigDrafts, materialize } from './helpers.ts'

/**
 * Concurrent PUTs of one document on two real replicas (two members of one space): each side
 * rewrites the markdown through the EditorService, the changes cross over by ingest in both
 * orders, and a third replica receives them in the opposite order. Merging is record by
 * record, so every edit of both sides survives and nothing else moves.
 */
const BLOCKS = 300
const base = render(materialize(bigDrafts(BLOCKS)))

type Doc = Record<string, unknown> & { id: string }

async function setup() {
  const { a, b, sync } = await twoMembers()
  await a.replica.addMember(idFor(3), 'reader')
  // The object carries a type declaring the shared editor dataset (spec "Editor").
  const docType = (await a.services.types.createType({ name: 'Doc', xKey: 'doc' })).id
  await a.services.types.createPart(docType, { key: 'body', datasets: [{ module: 'editor', shared: true }] })
  const obj = await a.createObject({ types: [docType] })
  expect(await a.services.of(editorModule).put(obj, EDITOR_BLOCKS, base)).toMatchObject({ inserted: BLOCKS })
  await sync()
  // A reader that never writes: it gets the two sides' changes in the order B, then A.
  const c = await SpaceEngine.open(await deps(3), a.spaceId, keyFor(3), { modules: DEFAULT_MODULES })
  expect((await pushAll(a.replica, c.replica)).rejected).toEqual([])
  await c.settled()
  const replicas = { a, b, c }
  for (const e of Object.values(replicas)) expect(await e.services.of(editorModule).markdown(obj, EDITOR_BLOCKS)).toBe(base)
  return { ...replicas, obj }
}

const known = async (e: SpaceEngine) => new Set((await e.replica.allChanges()).map((ch) => ch.id))
async function changesSince(e: SpaceEngine, before: Set<string>): Promise<IngestItem[]> {
  return (await e.replica.allChanges()).filter((ch) => !before.has(ch.id)).map(({ id, raw }) => ({ id, raw }))
}
async function deliver(to: SpaceEngine, items: IngestItem[]) {
  const rep = await to.replica.ingest(items)
  expect(rep.rejected).toEqual([])
  expect(rep.missing).toEqual([])
  await to.settled()
}
const docsById = async (e: SpaceEngine, obj: string) => new Map(((await e.datasetDocs(obj, EDITOR_BLOCKS)) as Doc[]).map((d) => [d.id, d]))
const markdownOf = (e: SpaceEngine, obj: string) => e.services.of(editorModule).markdown(obj, EDITOR_BLOCKS)

/** Both sides PUT from the same state; A's change reaches B, B's reaches A, C gets B's then A's. */
async function concurrentPuts(r: Awaited<ReturnType<typeof setup>>, mdA: string, mdB: string) {
  const { a, b, c, obj } = r
  const beforeA = await known(a)
  const beforeB = await known(b)
  const sumA = await a.services.of(editorModule).put(obj, EDITOR_BLOCKS, mdA)
  const sumB = await b.services.of(editorModule).put(obj, EDITOR_BLOCKS, mdB)
  const fromA = await changesSince(a, beforeA)
  const fromB = await changesSince(b, beforeB)
  expect(fromA).toHaveLength(1)
  expect(fromB).toHaveLength(1)
  await deliver(a, fromB)
  await deliver(b, fromA)
  await deliver(c, fromB)
  await deliver(c, fromA)
  return { sumA, sumB }
}

describe('concurrent markdown PUTs on two replicas', () => {
  it('keep both sides edits and inserts, and every unrelated block untouched', async () => {
    const r = await setup()
    const { a, b, c, obj } = r
    const baseDocs = await docsById(a, obj)
    const mdA = base
      .replace('Paragraph 12 with', 'Paragraph 12 (by A) with')
      .replace('## Section 50\n', '## Section 50\n\nInserted by A.\n')
      .replace('Paragraph 93 with', 'Paragraph 93 (by A) with')
    const mdB = base
      .replace('Paragraph 151 with', 'Paragraph 151 (by B) with')
      .replace('## Section 50\n', '## Section 50\n\nInserted by B.\n')
      .replace('- [ ] task 177', '- [x] task 177')
    const { sumA, sumB } = await concurrentPuts(r, mdA, mdB)
    expect(sumA).toEqual({ inserted: 1, updated: 2, deleted: 0, unchanged: BLOCKS - 2 })
    expect(sumB).toEqual({ inserted: 1, updated: 2, deleted: 0, unchanged: BLOCKS - 2 })

    const merged = await markdownOf(a, obj)
    expect(await markdownOf(b, obj)).toBe(merged)
    expect(await markdownOf(c, obj)).toBe(merged)

    // The two inserts sit between Section 50 and what followed it, ordered by their positions.
    const docs = await docsById(a, obj)
    const inserted = [...docs.values()].filter((d) => !baseDocs.has(d.id))
    expect(inserted.map((d) => d.text).sort()).toEqual(['Inserted by A.', 'Inserted by B.'])
    const pos = (d: Doc) => (d.nav as { pos: string }).pos
    expect(pos(inserted[0])).not.toBe(pos(inserted[1]))
    const [first, second] = inserted.sort((x, y) => (pos(x) < pos(y) ? -1 : 1)).map((d) => d.text)
    const expected = base
      .replace('Paragraph 12 with', 'Paragraph 12 (by A) with')
      .replace('Paragraph 93 with', 'Paragraph 93 (by A) with')
      .replace('Paragraph 151 with', 'Paragraph 151 (by B) with')
      .replace('- [ ] task 177', '- [x] task 177')
      .replace('## Section 50\n', `## Section 50\n\n${first}\n\n${second}\n`)
    expect(merged).toBe(expected)

    // Every replica holds the same records; the blocks neither side edited are as they were.
    for (const e of [b, c]) expect(await docsById(e, obj)).toEqual(docs)
    expect(docs.size).toBe(BLOCKS + 2)
    const edited = new Set(['Paragraph 12 (by A)', 'Paragraph 93 (by A)', 'Paragraph 151 (by B)', 'task 177'])
    let untouched = 0
    for (const [id, before] of baseDocs) {
      const after = docs.get(id)!
      if ([...edited].some((s) => String(after.text).startsWith(s))) {
        expect(after).not.toEqual(before)
        continue
      }
      expect(after).toEqual(before)
      untouched++
    }
    expect(untouched).toBe(BLOCKS - 4)
  })

  it('a delete on one side and an edit of another block on the other both survive', async () => {
    const r = await setup()
    const { a, b, c, obj } = r
    const mdA = base.replace('## Section 60\n\n', '')
    const mdB = base.replace('Paragraph 61 with', 'Paragraph 61 (edited) with')
    const { sumA, sumB } = await concurrentPuts(r, mdA, mdB)
    expect(sumA).toEqual({ inserted: 0, updated: 0, deleted: 1, unchanged: BLOCKS - 1 })
    expect(sumB).toEqual({ inserted: 0, updated: 1, deleted: 0, unchanged: BLOCKS - 1 })
    const expected = base.replace('## Section 60\n\n', '').replace('Paragraph 61 with', 'Paragraph 61 (edited) with')
    for (const e of [a, b, c]) expect(await markdownOf(e, obj)).toBe(expected)
    expect((await docsById(a, obj)).size).toBe(BLOCKS - 1)
  })

  it('edits of one block on both sides converge to the same text everywhere', async () => {
    const r = await setup()
    const { a, b, c, obj } = r
    await concurrentPuts(r, base.replace('Paragraph 41 with', 'Paragraph 41 (A) with'), base.replace('Paragraph 41 with', 'Paragraph 41 (B) with'))
    const merged = await markdownOf(a, obj)
    expect(await markdownOf(b, obj)).toBe(merged)
    expect(await markdownOf(c, obj)).toBe(merged)
    // The block's text merges character by character (sync/crdt/ytext.ts): both insertions are
    // kept, in one order every replica agrees on; the rest of the document is intact.
    expect([base.replace('Paragraph 41 with', 'Paragraph 41 (A) (B) with'), base.replace('Paragraph 41 with', 'Paragraph 41 (B) (A) with')]).toContain(merged)
  })
})
