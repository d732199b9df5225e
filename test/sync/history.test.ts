import { describe, expect, it } from 'vitest'
import { SpaceReplica } from '../../sync/replica/space-replica.ts'
import { History } from '../../sync/space/history.ts'
import { spacePolicy } from '../../sync/space/schema.ts'
import { deps, keyFor } from '../helpers.ts'
import { modifyRecords } from '../../sync/space/modify.ts'

async function setup() {
  const r = await SpaceReplica.create({ ...(await deps(1)), policy: spacePolicy }, keyFor(1))
  const obj = await r.createObject()
  const v: string[] = []
  v.push((await modifyRecords(r, obj, 'tasks', [{ id: 'a', ops: [{ type: '$set', path: '', value: { t: 1 } }] }], ['trace-1'])).changeId)
  v.push((await modifyRecords(r, obj, 'tasks', [{ id: 'b', ops: [{ type: '$set', path: 't', value: 2 }] }])).changeId)
  v.push((await modifyRecords(r, obj, 'notes', [{ id: 'a', ops: [{ type: '$set', path: 'x', value: 'n' }] }])).changeId)
  v.push((await modifyRecords(r, obj, 'tasks', [{ id: 'a', ops: [{ type: '$set', path: 't', value: 3 }] }])).changeId)
  v.push((await modifyRecords(r, obj, 'chat_messages', [{ id: 'm', ops: [{ type: '$set', path: 'text', value: 'hi' }] }])).changeId)
  v.push((await r.write(obj, [{ op: 'delete', ds: 'tasks', id: 'b' }])).changeId)
  return { r, obj, v, h: new History(r, spacePolicy) }
}

describe('version history', () => {
  it('lists newest first, filters, pages with a cursor, leaves chat out', async () => {
    const { obj, v, h } = await setup()
    const all = await h.list(obj)
    expect(all.changes.map((c) => c.version)).toEqual([v[5], v[3], v[2], v[1], v[0]])
    expect(all.cursor).toBeNull()
    expect((await h.list(obj, { dataset: 'notes' })).changes.map((c) => c.version)).toEqual([v[2]])
    expect((await h.list(obj, { recordId: 'a', dataset: 'tasks' })).changes.map((c) => c.version)).toEqual([v[3], v[0]])
    expect((await h.list(obj, { traceId: 'trace-1' })).changes.map((c) => c.version)).toEqual([v[0]])
    const p1 = await h.list(obj, { limit: 2 })
    expect(p1.changes.map((c) => c.version)).toEqual([v[5], v[3]])
    const p2 = await h.list(obj, { limit: 2, cursor: p1.cursor! })
    expect(p2.changes.map((c) => c.version)).toEqual([v[2], v[1]])
    const co = await h.list(obj, { coalesce: true })
    expect(co.changes).toHaveLength(1)
    expect(co.changes[0].versions).toEqual([v[5], v[3], v[2], v[1], v[0]])
    await expect(h.list(obj, { limit: 0 })).rejects.toMatchObject({ code: 'request.invalid_field' })
  })

  it('shows state at a version, a record at a version, and the effect diff', async () => {
    const { obj, v, h } = await setup()
    expect(await h.view(obj, v[1])).toEqual({ tasks: { a: { t: 1 }, b: { t: 2 } } })
    expect(await h.view(obj, v[5], 'tasks')).toEqual({ tasks: { a: { t: 3 } } })
    expect(await h.recordAt(obj, v[5], 'tasks', 'b')).toEqual({ exists: true, deleted: true, record: { _deletedAt: { $date: expect.any(String) } } })
    expect(await h.recordAt(obj, v[0], 'tasks', 'b')).toEqual({ exists: false })
    expect(await h.recordAt(obj, v[3], 'tasks', 'a')).toEqual({ exists: true, deleted: false, record: { t: 3 } })
    expect(await h.diff(obj, v[3])).toEqual({ base: null, version: v[3], datasets: { tasks: [{ id: 'a', before: { t: 1 }, after: { t: 3 } }] } })
    const d = await h.diff(obj, v[5], { base: v[0] })
    expect(d.datasets.tasks).toEqual([{ id: 'a', before: { t: 1 }, after: { t: 3 } }])
    expect(d.datasets.notes).toEqual([{ id: 'a', before: null, after: { x: 'n' } }])
    await expect(h.view(obj, 'nope')).rejects.toMatchObject({ code: 'history.version_not_found' })
  })
})
