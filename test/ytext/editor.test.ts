import { describe, expect, it } from 'vitest'
import { editorModule } from '../../sync/modules/editor/module.ts'
import { EDITOR_BLOCKS } from '../../sync/modules/editor/service.ts'
import { DEFAULT_MODULES } from '../../sync/modules/index.ts'
import { SpaceEngine } from '../../sync/space/space-engine.ts'
import { deps, keyFor, pushAll } from '../helpers.ts'
import { twoMembers } from '../space/helpers.ts'

/**
 * The editor writes text edits as Yjs updates (sync/modules/editor/text-deltas.ts) on real
 * replicas: two members edit one paragraph concurrently, by markdown PATCH and by block patch,
 * and after sync every replica shows both edits, with the same state digest.
 */
async function setup() {
  const { a, b, sync } = await twoMembers()
  const docType = (await a.services.types.createType({ name: 'Doc', xKey: 'doc' })).id
  await a.services.types.createPart(docType, { key: 'body', datasets: [{ module: 'editor', shared: true }] })
  const obj = await a.createObject({ types: [docType] })
  await a.services.of(editorModule).put(obj, EDITOR_BLOCKS, '# Title\n\nThe quick fox jumps.\n\nSecond paragraph.\n')
  await sync()
  return { a, b, sync, obj }
}

const md = (e: SpaceEngine, obj: string) => e.services.of(editorModule).markdown(obj, EDITOR_BLOCKS)
const paragraphId = async (e: SpaceEngine, obj: string, starts: string) =>
  ((await e.datasetDocs(obj, EDITOR_BLOCKS)) as Array<{ id: string; text?: string }>).find((d) => d.text?.startsWith(starts))!.id

describe('editor text deltas', () => {
  it('two concurrent markdown PATCHes of one paragraph: GET markdown shows both on both sides', async () => {
    const { a, b, sync, obj } = await setup()
    await a.services.of(editorModule).patch(obj, EDITOR_BLOCKS, [{ oldText: 'quick fox', newText: 'quick brown fox' }])
    await b.services.of(editorModule).patch(obj, EDITOR_BLOCKS, [{ oldText: 'jumps.', newText: 'jumps over the dog.' }])
    await sync()
    const expected = '# Title\n\nThe quick brown fox jumps over the dog.\n\nSecond paragraph.\n'
    expect(await md(a, obj)).toBe(expected)
    expect(await md(b, obj)).toBe(expected)
    expect(await a.replica.stateDigest()).toBe(await b.replica.stateDigest())
  })

  it('block patch and markdown PUT of the same text merge, and a third replica agrees in the other order', async () => {
    const { a, b, sync, obj } = await setup()
    const id = await paragraphId(a, obj, 'The quick')
    await a.services.of(editorModule).patchBlock(obj, EDITOR_BLOCKS, id, { set: { text: 'The very quick fox jumps.' } })
    await b.services.of(editorModule).put(obj, EDITOR_BLOCKS, '# Title\n\nThe quick fox jumps high.\n\nSecond paragraph.\n')
    const c = await SpaceEngine.open(await deps(3), a.spaceId, keyFor(1), { modules: DEFAULT_MODULES })
    await pushAll(b.replica, c.replica)
    await pushAll(a.replica, c.replica)
    await c.settled()
    await sync()
    const expected = '# Title\n\nThe very quick fox jumps high.\n\nSecond paragraph.\n'
    expect(await md(a, obj)).toBe(expected)
    expect(await md(b, obj)).toBe(expected)
    expect(await md(c, obj)).toBe(expected)
    expect(await c.replica.stateDigest()).toBe(await a.replica.stateDigest())
    // Queries see the plain string, and the write was a text op, not a set of the leaf.
    const doc = (await a.datasetDocs(obj, EDITOR_BLOCKS)).find((d) => (d as { id: string }).id === id) as unknown as { text: string }
    expect(doc.text).toBe('The very quick fox jumps high.')
  })

  it('two devices of one account editing offline keep both (a salt per process keeps their Yjs ids apart)', async () => {
    const { a, sync, obj } = await setup()
    const a2 = await SpaceEngine.open(await deps(4), a.spaceId, keyFor(1), { modules: DEFAULT_MODULES })
    await pushAll(a.replica, a2.replica)
    await a2.settled()
    await a.services.of(editorModule).patch(obj, EDITOR_BLOCKS, [{ oldText: 'Second', newText: 'The second' }])
    await a2.services.of(editorModule).patch(obj, EDITOR_BLOCKS, [{ oldText: 'paragraph.', newText: 'paragraph, edited.' }])
    await pushAll(a2.replica, a.replica)
    await pushAll(a.replica, a2.replica)
    await a.settled()
    await a2.settled()
    await sync()
    expect(await md(a, obj)).toContain('The second paragraph, edited.')
    expect(await md(a2, obj)).toBe(await md(a, obj))
  })

  it('a plain set of the text replaces it, and a later edit applies on top', async () => {
    const { a, b, sync, obj } = await setup()
    const id = await paragraphId(a, obj, 'The quick')
    await a.services.of(editorModule).patch(obj, EDITOR_BLOCKS, [{ oldText: 'quick', newText: 'slow' }])
    await sync()
    await b.write(obj, [{ op: 'set', ds: EDITOR_BLOCKS, id, path: 'text', value: 'Replaced.' }])
    await sync()
    expect(await md(a, obj)).toContain('\n\nReplaced.\n\n')
    await a.services.of(editorModule).patch(obj, EDITOR_BLOCKS, [{ oldText: 'Replaced.', newText: 'Replaced, then edited.' }])
    await b.services.of(editorModule).patch(obj, EDITOR_BLOCKS, [{ oldText: 'Replaced.', newText: 'Now replaced.' }])
    await sync()
    expect(await md(a, obj)).toContain('\n\nNow replaced, then edited.\n\n')
    expect(await md(b, obj)).toBe(await md(a, obj))
  })
})
