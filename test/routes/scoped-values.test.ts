import { rmSync } from 'node:fs'
import type { FastifyInstance } from 'fastify'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { DaemonHost } from '../../node/daemon/daemon-host.ts'
import { AccountLifecycle } from '../../node/daemon/account-lifecycle.ts'
import { buildApp } from '../../server/app.ts'
import { stopGracefully } from '../../server/lifecycle.ts'
import { systemEnv } from '../../sync/core/env.ts'
import { accountValuesDataset } from '../../sync/space/scoped-values.ts'
import { bootApp, call, newObject, newSpace, ok, type Booted } from './helpers.ts'

/** A space with a type carrying one property per scope; the first call is a bundles read, so
 * the space's TypesService exists before any typed route hands it the account's store. */
async function setup(app: FastifyInstance) {
  const spaceId = await newSpace(app)
  const S = `/v1/spaces/${spaceId}`
  await ok(call(app, 'GET', `${S}/bundles`))
  const typeId = (await ok<{ id: string }>(call(app, 'POST', `${S}/types`, { xKey: 'task', name: 'Task' }), 201)).id
  const prop = async (body: Record<string, unknown>) => (await ok<{ propId: string }>(call(app, 'POST', `${S}/types/${typeId}/properties`, body), 201)).propId
  const synced = await prop({ name: 'Points', kind: 'number' })
  const fav = await prop({ name: 'Favourite', kind: 'boolean', scope: 'account' })
  const note = await prop({ name: 'Note', kind: 'string', scope: 'local' })
  const rows = async (body: Record<string, unknown>) => (await ok<{ records: Array<Record<string, any>> }>(call(app, 'POST', `${S}/objects/query`, body))).records
  const set = (objectId: string, body: Record<string, unknown>) => ok(call(app, 'POST', `${S}/properties/${objectId}/set/${typeId}`, body))
  return { spaceId, S, typeId, synced, fav, note, rows, set }
}

describe('account- and local-scope values over HTTP', () => {
  let b: Booted
  beforeAll(async () => {
    b = await bootApp()
  })
  afterAll(() => b.close())

  it('set, read back through objects query (overlay after selection, projection applied), unset', async () => {
    const { spaceId, typeId, synced, fav, note, rows, set } = await setup(b.app)
    const obj = await newObject(b.app, spaceId, { types: [typeId], initialProperties: { [typeId]: { [synced]: 3, [fav]: true } } })
    const plain = await newObject(b.app, spaceId, { types: [typeId], initialProperties: { [typeId]: { [synced]: 5 } } })
    expect(await set(obj, { [note]: 'mine' })).toMatchObject({ recordIds: [obj], scoped: { local: [note] } })

    // The space's replica row holds only the synced value: account/local ones never enter it,
    // not even from initialProperties.
    const account = b.engine.account()
    expect(account.space(spaceId).objectDoc(obj)![typeId]).toEqual({ [synced]: 3 })
    expect((await account.tech.replica.getRecord(account.techObject, accountValuesDataset(spaceId), obj))?.value).toEqual({ [typeId]: { [fav]: true } })

    const all = await rows({ filter: { 'core.types': typeId }, sort: [`${typeId}.${synced}`] })
    expect(all.map((r) => r[typeId])).toEqual([{ [synced]: 3, [fav]: true, [note]: 'mine' }, { [synced]: 5 }])
    // The overlay copies: the engine's row is unchanged after a query.
    expect(account.space(spaceId).objectDoc(obj)![typeId]).toEqual({ [synced]: 3 })

    // Projections see overlaid values.
    expect(await rows({ filter: { id: obj }, projection: { [`${typeId}.${fav}`]: 1 } })).toEqual([{ id: obj, [typeId]: { [fav]: true } }])
    expect((await rows({ filter: { id: obj }, projection: { [`${typeId}.${note}`]: 0, core: 0 } }))[0][typeId]).toEqual({ [synced]: 3, [fav]: true })
    expect(await rows({ filter: { id: obj }, projection: { id: 0, [`${typeId}.${note}`]: 1 } })).toEqual([{ [typeId]: { [note]: 'mine' } }])
    // Filters and sorts run on synced values only (documented): an account value does not match.
    expect(await rows({ filter: { [`${typeId}.${fav}`]: true } })).toEqual([])

    // null unsets, per scope.
    const res = await set(obj, { [fav]: null, [note]: null })
    expect(res.changeId).toBeUndefined()
    expect((await rows({ filter: { id: obj } }))[0][typeId]).toEqual({ [synced]: 3 })
    expect((await rows({ filter: { id: plain } }))[0][typeId]).toEqual({ [synced]: 5 })
    // and a value set again after an unset is back
    await set(obj, { [fav]: false })
    expect((await rows({ filter: { id: obj } }))[0][typeId]).toEqual({ [synced]: 3, [fav]: false })
  })
})

describe('restart', () => {
  it('account and local values survive an app restart over the same data root', async () => {
    const first = await bootApp()
    const { root, accountId } = first
    let app: FastifyInstance | undefined
    try {
      const { spaceId, typeId, synced, fav, note, set } = await setup(first.app)
      const obj = await newObject(first.app, spaceId, { types: [typeId] })
      await set(obj, { [synced]: 1, [fav]: true, [note]: 'kept on this device' })
      await stopGracefully(first.app, 1000)

      const engine = new DaemonHost({ dataRoot: root, noMdns: true, p2p: false })
      const session = new AccountLifecycle({ dataRoot: root, mode: 'standalone', engine, env: systemEnv })
      expect(await session.bootAtStart()).toBe(accountId)
      app = buildApp({ session, engine })
      const S = `/v1/spaces/${spaceId}`
      const after = (await ok<{ records: Array<Record<string, any>> }>(call(app, 'POST', `${S}/objects/query`, { filter: { id: obj } }))).records
      expect(after[0][typeId]).toEqual({ [synced]: 1, [fav]: true, [note]: 'kept on this device' })
    } finally {
      if (app) await stopGracefully(app, 1000)
      rmSync(root, { recursive: true, force: true })
    }
  })
})
