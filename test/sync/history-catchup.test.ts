import { describe, expect, it } from 'vitest'
import { SpaceReplica } from '../../sync/replica/space-replica.ts'
import { History } from '../../sync/space/history.ts'
import { spacePolicy } from '../../sync/space/schema.ts'
import { deps, idFor, keyFor, pushAll } from '../helpers.ts'

/**
 * History caches a tree's decoded changes and, after commits, opens only the new ones. Whatever
 * arrives after the first read (local writes, a peer's concurrent changes with lower lamports,
 * large batches), a cached History must list exactly what a fresh one reads from storage.
 */
async function twoReplicas() {
  const a = await SpaceReplica.create({ ...(await deps(1)), policy: spacePolicy }, keyFor(1))
  await a.addMember(idFor(2), 'writer')
  const b = await SpaceReplica.open({ ...(await deps(2)), policy: spacePolicy }, a.spaceId, keyFor(2))
  const obj = await a.createObject()
  await pushAll(a, b)
  return { a, b, obj }
}

const set = (id: string, v: number) => [{ op: 'set' as const, ds: 'tasks', id, path: 'v', value: v }]

async function everything(h: History, obj: string) {
  const out: string[] = []
  let cursor: string | undefined
  for (;;) {
    const page = await h.list(obj, { limit: 200, ...(cursor ? { cursor } : {}) })
    out.push(...page.changes.map((c) => c.version))
    if (!page.cursor) return out
    cursor = page.cursor
  }
}

describe('version history after the first read', () => {
  it('lists local writes and a peer’s concurrent changes exactly as a fresh read does', async () => {
    const { a, b, obj } = await twoReplicas()
    for (let i = 0; i < 5; i++) await a.write(obj, set('x', i))
    const cached = new History(a, spacePolicy)
    expect(await everything(cached, obj)).toHaveLength(5)

    // B writes concurrently (its lamports start below A's); A keeps writing too.
    for (let i = 0; i < 3; i++) await b.write(obj, set('y', i))
    const mine = await a.write(obj, set('x', 99))
    expect((await cached.list(obj, { limit: 1 })).changes[0].version).toBe(mine.changeId)
    expect((await pushAll(b, a)).rejected).toEqual([])
    const merged = await everything(cached, obj)
    expect(merged).toHaveLength(9)
    expect(merged).toEqual(await everything(new History(a, spacePolicy), obj))

    // A batch large enough to take the re-sort path.
    for (let i = 0; i < 100; i++) await b.write(obj, set(`z${i % 3}`, i))
    expect((await pushAll(b, a)).rejected).toEqual([])
    const big = await everything(cached, obj)
    expect(big).toHaveLength(109)
    expect(big).toEqual(await everything(new History(a, spacePolicy), obj))

    // Views of a version that arrived after the first read.
    const last = big[0]
    expect(await cached.view(obj, last, 'tasks')).toEqual(await new History(a, spacePolicy).view(obj, last, 'tasks'))
  })

  it('reads issued together after a write all see it', async () => {
    const { a, obj } = await twoReplicas()
    await a.write(obj, set('x', 0))
    const h = new History(a, spacePolicy)
    await h.list(obj)
    const { changeId } = await a.write(obj, set('x', 1))
    const pages = await Promise.all([h.list(obj), h.list(obj), h.list(obj, { limit: 1 })])
    for (const p of pages) expect(p.changes[0].version).toBe(changeId)
  })

  it('a read started before a write finishes loading and then includes it', async () => {
    const { a, obj } = await twoReplicas()
    for (let i = 0; i < 20; i++) await a.write(obj, set('x', i))
    const h = new History(a, spacePolicy)
    const first = h.list(obj)
    const w = a.write(obj, set('x', 100))
    await first
    const { changeId } = await w
    const all = await everything(h, obj)
    expect(all[0]).toBe(changeId)
    expect(all).toHaveLength(21)
    expect(all).toEqual(await everything(new History(a, spacePolicy), obj))
  })
})
