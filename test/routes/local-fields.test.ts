import { rmSync } from 'node:fs'
import type { FastifyInstance } from 'fastify'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { DaemonHost } from '../../node/daemon/daemon-host.ts'
import { AccountLifecycle } from '../../node/daemon/account-lifecycle.ts'
import { buildApp } from '../../server/app.ts'
import { stopGracefully } from '../../server/lifecycle.ts'
import { SERVER_MODULES } from '../../server/modules/index.ts'
import { systemEnv } from '../../sync/core/env.ts'
import { localFieldsModule } from '../../sync/modules/local-fields/module.ts'
import { bootApp, call, expectError, listen, newObject, newSpace, ok, openSse, type Booted, type Frame } from './helpers.ts'

// The synced path's tests are data-plane.test.ts; these are the same routes with `scope: "local"`.
let b: Booted
let spaceId: string
let S: string
let obj: string
beforeAll(async () => {
  b = await bootApp()
  spaceId = await newSpace(b.app)
  S = `/v1/spaces/${spaceId}`
  obj = await newObject(b.app, spaceId)
})
afterAll(() => b.close())

const query = (body: Record<string, unknown>) => ok<{ records: Array<Record<string, any>>; total?: number; hasNext?: boolean }>(call(b.app, 'POST', `${S}/query`, body))
const modify = (body: Record<string, unknown>) => ok(call(b.app, 'POST', `${S}/modify`, body))

/**
 * `POST {S}/modify` with `scope: "local"` beside the synced path: a field the declaration marks
 * `scope: local` is stored on this device, never in a change, and merged into the record on read.
 */
describe('device-local fields (modify scope: local)', () => {
  let typeId: string
  let ds: string
  let item: string
  const local = (body: Record<string, unknown>) => modify({ scope: 'local', objectId: item, dataset: ds, ...body })
  const set = (path: string, value: unknown) => ({ type: '$set', path, value })
  beforeAll(async () => {
    typeId = (await ok(call(b.app, 'POST', `${S}/types`, { xKey: 'reading' }), 201)).id
    const part = await ok(
      call(b.app, 'POST', `${S}/types/${typeId}/parts`, {
        key: 'list',
        datasets: [{ fields: { title: { type: 'string', mutableBy: 'any' }, collapsed: { type: 'boolean', scope: 'local' }, seen: { type: 'number', scope: 'local' } } }],
      }),
      201,
    )
    ds = part.datasets[0].collection
    item = await newObject(b.app, spaceId, { types: [typeId] })
    await modify({
      objectId: item,
      dataset: ds,
      records: [
        { id: 'a', ops: [set('title', 'A')] },
        { id: 'b', ops: [set('title', 'B')] },
      ],
    })
  })

  it('the listing marks the fields local; a local write names no change and reads back merged into the record', async () => {
    const { datasets } = await ok(call(b.app, 'GET', `${S}/datasets`))
    const entry = datasets.find((d: { name: string }) => d.name === ds)
    expect(entry.schema.properties.collapsed['x-scope']).toBe('local')
    expect(entry.schema.properties.title['x-scope']).toBe('synced')

    const history = async () => (await ok(call(b.app, 'GET', `${S}/objects/${item}/history?dataset=${ds}`))).changes.length
    const before = await history()
    const res = await local({ records: [{ id: 'a', ops: [set('collapsed', true), { type: '$inc', path: 'seen', value: 2 }] }] })
    expect(res).toEqual({ versionId: expect.any(String), changeId: '', recordIds: ['a'] })
    await local({ records: [{ id: 'a', ops: [{ type: '$inc', path: 'seen', value: 3 }] }] })
    // No change was written: the version history and the stored (synced) record know nothing of it.
    expect(await history()).toBe(before)
    const stored = await b.engine.account().space(spaceId).replica.getRecord(item, ds, 'a')
    expect(stored?.value).toEqual({ title: 'A' })
    // Reads merge it: filters and sorts see it like a synced field.
    const rows = await query({ objectId: item, dataset: ds, sort: ['id'] })
    expect(rows.records).toEqual([
      { id: 'a', title: 'A', collapsed: true, seen: 5, _ver: { id: expect.any(String) } },
      { id: 'b', title: 'B', _ver: { id: expect.any(String) } },
    ])
    expect((await query({ objectId: item, dataset: ds, filter: { collapsed: true } })).records.map((r) => r.id)).toEqual(['a'])
    expect((await query({ objectId: item, dataset: ds, sort: ['-seen', 'id'] })).records.map((r) => r.id)).toEqual(['a', 'b'])
    // A synced edit of the record keeps the local fields; $unset removes one.
    await modify({ objectId: item, dataset: ds, records: [{ id: 'a', ops: [set('title', 'A2')] }] })
    await local({ records: [{ id: 'a', ops: [{ type: '$unset', path: 'seen' }] }] })
    expect((await query({ objectId: item, dataset: ds, filter: { id: 'a' } })).records[0]).toEqual({ id: 'a', title: 'A2', collapsed: true, _ver: { id: expect.any(String) } })
  })

  it('each path writes only its own fields: the other scope, missing and deleted records are rejected op by op', async () => {
    await modify({ objectId: item, dataset: ds, records: [{ id: 'gone', ops: [set('title', 'G')] }] })
    await ok(call(b.app, 'POST', `${S}/delete-records`, { objectId: item, dataset: ds, recordIds: ['gone'] }))
    const res = await local({
      records: [
        { id: 'b', ops: [set('title', 'not local'), set('collapsed', false), set('nope', 1), { type: '$inc', path: 'collapsed', value: 1 }] },
        { id: 'missing', ops: [set('collapsed', true)] },
        { id: 'gone', ops: [set('collapsed', true)] },
      ],
    })
    expect(res.recordIds).toEqual(['b'])
    expect(res.rejections.map((r: { recordId: string; index: number; code: string }) => [r.recordId, r.index, r.code])).toEqual([
      ['b', 0, 'upsert.rejected'],
      ['b', 2, 'upsert.rejected'],
      ['b', 3, 'dataset.validation'],
      ['missing', 0, 'upsert.rejected'],
      ['gone', 0, 'upsert.record_deleted'],
    ])
    // The synced path refuses a local field (it would reach every member) and writes the rest.
    const synced = await modify({ objectId: item, dataset: ds, records: [{ id: 'b', ops: [set('collapsed', true), set('title', 'B2')] }] })
    expect(synced.rejections).toEqual([{ recordId: 'b', index: 0, code: 'upsert.rejected', reason: expect.stringContaining('device-local') }])
    expect((await query({ objectId: item, dataset: ds, filter: { id: 'b' } })).records[0]).toEqual({ id: 'b', title: 'B2', collapsed: false, _ver: { id: expect.any(String) } })
    // A dataset without declarations has no local fields; the body errors are the synced path's.
    await modify({ objectId: obj, dataset: 'tasks', records: [{ id: 't1', ops: [set('title', 'synced')] }] })
    const free = await modify({ scope: 'local', objectId: obj, dataset: 'tasks', records: [{ id: 't1', ops: [set('title', 'x')] }] })
    expect(free).toMatchObject({
      changeId: '',
      recordIds: [],
      rejections: [{ recordId: 't1', index: 0, code: 'upsert.rejected', reason: expect.stringContaining('not a device-local field') }],
    })
    expectError(await call(b.app, 'POST', `${S}/modify`, { scope: 'local', objectId: null, dataset: ds, records: [] }), 400, 'object.id_required')
    expectError(await call(b.app, 'POST', `${S}/modify`, { scope: 'local', objectId: item, dataset: ds, records: [{ id: 'a', ops: [], x: 1 }] }), 400, 'request.unknown_field')
  })

  it('live windows get a local write as an updated frame', async () => {
    const base = await listen(b.app)
    const s = await openSse(`${base}${S}/query/subscribe`, { objectId: item, dataset: ds, sort: ['id'], limit: 10 })
    try {
      await s.until((f) => f.some((x) => x.event === 'snapshot'))
      await local({ records: [{ id: 'b', ops: [set('seen', 7)] }] })
      const frames = await s.until((f: Frame[]) => f.some((x) => x.event === 'changes'))
      const change = frames.find((x) => x.event === 'changes')!.data[0]
      expect(change.updated).toEqual([{ id: 'b', doc: expect.objectContaining({ id: 'b', collapsed: false, seen: 7 }), ops: [{ type: '$set', path: 'seen', value: 7 }] }])
    } finally {
      s.destroy()
    }
  })

  it('deleting a record drops its local fields', async () => {
    await modify({ objectId: item, dataset: ds, records: [{ id: 'c', ops: [set('title', 'C')] }] })
    await local({ records: [{ id: 'c', ops: [set('collapsed', true)] }] })
    const svc = b.engine.account().space(spaceId).services.of(localFieldsModule)
    expect(await svc.fieldsOf(item, ds, 'c')).toEqual({ collapsed: true })
    await ok(call(b.app, 'POST', `${S}/delete-records`, { objectId: item, dataset: ds, recordIds: ['c'] }))
    await expect.poll(() => svc.fieldsOf(item, ds, 'c')).toBeUndefined()
  })
})

describe('device-local fields across a restart, and without the module', () => {
  it('survive an app restart over the same data root', async () => {
    const first = await bootApp()
    const { root, accountId } = first
    let app: FastifyInstance | undefined
    try {
      const sid = await newSpace(first.app)
      const SP = `/v1/spaces/${sid}`
      const t = (await ok(call(first.app, 'POST', `${SP}/types`, { xKey: 'kept' }), 201)).id
      const part = await ok(call(first.app, 'POST', `${SP}/types/${t}/parts`, { key: 'rows', datasets: [{ fields: { n: {}, pinned: { scope: 'local' } } }] }), 201)
      const collection = part.datasets[0].collection
      const o = await newObject(first.app, sid, { types: [t] })
      await ok(call(first.app, 'POST', `${SP}/modify`, { objectId: o, dataset: collection, records: [{ id: 'r', ops: [{ type: '$set', path: 'n', value: 1 }] }] }))
      await ok(
        call(first.app, 'POST', `${SP}/modify`, {
          scope: 'local',
          objectId: o,
          dataset: collection,
          records: [{ id: 'r', ops: [{ type: '$set', path: 'pinned', value: 'top' }] }],
        }),
      )
      await stopGracefully(first.app, 1000)

      const engine = new DaemonHost({ dataRoot: root, noMdns: true, p2p: false })
      const session = new AccountLifecycle({ dataRoot: root, mode: 'standalone', engine, env: systemEnv })
      expect(await session.bootAtStart()).toBe(accountId)
      app = buildApp({ session, engine })
      const after = await ok(call(app, 'POST', `${SP}/query`, { objectId: o, dataset: collection }))
      expect(after.records).toEqual([{ id: 'r', n: 1, pinned: 'top', _ver: { id: expect.any(String) } }])
    } finally {
      if (app) await stopGracefully(app, 1000)
      rmSync(root, { recursive: true, force: true })
    }
  })

  it('a server whose modules leave device-local fields out answers 501 sdk.not_implemented', async () => {
    const bare = await bootApp({ modules: SERVER_MODULES.filter((m) => m.name !== localFieldsModule.name) })
    try {
      const sid = await newSpace(bare.app)
      const o = await newObject(bare.app, sid)
      expectError(await call(bare.app, 'POST', `/v1/spaces/${sid}/modify`, { scope: 'local', objectId: o, dataset: 'x', records: [] }), 501, 'sdk.not_implemented')
    } finally {
      await bare.close()
    }
  })
})
