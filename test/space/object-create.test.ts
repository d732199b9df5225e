import { describe, expect, it } from 'vitest'
import { AccountEngine } from '../../sync/space/account-engine.ts'
import { MemoryStorageAdapter } from '../../sync/storage/memory.ts'
import { defaultCryptoProvider } from '../../sync/crypto/provider.ts'
import { DEFAULT_MODULES } from '../../sync/modules/index.ts'
import { compileQuery } from '../../sync/query/index.ts'
import { SpaceEngine } from '../../sync/space/space-engine.ts'
import { deps, idFor, keyFor, pushAll, seededEnv } from '../helpers.ts'
import { expectCode, newSpace } from './helpers.ts'

/**
 * The rules `POST {S}/objects`, `{S}/objects/query` and `{S}/modify` apply hold when the engine
 * is called directly, as a web page calls the AccountEngine of the browser bundle: no HTTP here.
 */
async function accountSpace() {
  const account = await AccountEngine.open({
    storage: new MemoryStorageAdapter(),
    crypto: await defaultCryptoProvider(),
    env: seededEnv(1),
    accountKey: keyFor(1),
    modules: DEFAULT_MODULES,
  })
  const space = account.space((await account.createSpace({ name: 'S' })).id)
  return { account, space, svc: space.services.types }
}

describe('object creation rules in the engine', () => {
  it('a type that declares a chat dataset is refused (type.reserved_carrier)', async () => {
    const { engine, svc } = await newSpace()
    const chatType = await svc.createType({ xKey: 'mychat' })
    await svc.createPart(chatType.id, { key: 'chat', datasets: [{ module: 'chat' }] })
    const before = [...engine.objectDocs()].length
    await expectCode(engine.createObject({ types: [chatType.id] }), 'type.reserved_carrier', { typeId: chatType.id, field: 'types', module: 'chat' })
    expect([...engine.objectDocs()].length).toBe(before)
  })

  it('values are checked like a typed set: unknown property, bad format, removed property', async () => {
    const { engine, svc } = await newSpace()
    const t = await svc.createType({ xKey: 'task' })
    const n = (await svc.createProperty(t.id, { name: 'n', kind: 'number' })).propId
    const gone = (await svc.createProperty(t.id, { name: 'g', kind: 'string' })).propId
    await svc.deleteProperty(t.id, gone)
    await expectCode(engine.createObject({ types: [t.id], initialProperties: { [t.id]: { nope: 1 } } }), 'property.not_found')
    await expectCode(engine.createObject({ types: [t.id], initialProperties: { [t.id]: { [n]: 'x' } } }), 'property.kind_mismatch', { propId: n })
    await expectCode(engine.createObject({ initialProperties: { core: { types: ['x'] } } }), 'request.invalid_field')
    const id = await engine.createObject({ types: [t.id], initialProperties: { core: { name: 'A' }, [t.id]: { [n]: 2, [gone]: 'dropped' } } })
    expect(engine.objectDoc(id)).toMatchObject({ core: { name: 'A', types: [t.id] }, [t.id]: { [n]: 2 } })
    expect(engine.objectDoc(id)![t.id]).not.toHaveProperty(gone)
  })

  it('account and local values go to the scoped store, never the row; the object query lays them on', async () => {
    const { account, space, svc } = await accountSpace()
    const t = await svc.createType({ xKey: 'task' })
    const synced = (await svc.createProperty(t.id, { name: 's', kind: 'number' })).propId
    const acc = (await svc.createProperty(t.id, { name: 'a', kind: 'boolean', scope: 'account' })).propId
    const loc = (await svc.createProperty(t.id, { name: 'l', kind: 'string', scope: 'local' })).propId
    const id = await space.createObject({ types: [t.id], initialProperties: { [t.id]: { [synced]: 1, [acc]: true, [loc]: 'here' } } })
    expect(space.objectDoc(id)![t.id]).toEqual({ [synced]: 1 })
    expect(await account.scopedValues.rowsOf(space.spaceId, [id])).toEqual(new Map([[id, { [t.id]: { [acc]: true, [loc]: 'here' } }]]))
    const page = await svc.queryObjects(compileQuery({ filter: { id } }))
    expect(page.records[0][t.id]).toEqual({ [synced]: 1, [acc]: true, [loc]: 'here' })
    await account.close()
  })
})

describe('bulk object creation in the engine', () => {
  it('creates each entry as createObject would, two changes per object, ids in order; all or none', async () => {
    const { account, space, svc } = await accountSpace()
    const t = await svc.createType({ xKey: 'task' })
    const n = (await svc.createProperty(t.id, { name: 'n', kind: 'number' })).propId
    const loc = (await svc.createProperty(t.id, { name: 'l', kind: 'string', scope: 'local' })).propId
    const changesBefore = (await space.replica.allChanges()).length
    const ids = await space.createObjects([
      { types: [t.id], initialProperties: { core: { name: 'A' }, [t.id]: { [n]: 1, [loc]: 'mine' } } },
      {},
      { initialProperties: { core: { name: 'C', tags: ['x'] } } },
    ])
    expect(ids).toHaveLength(3)
    expect(space.objectDoc(ids[0])).toMatchObject({ core: { name: 'A', types: [t.id] }, [t.id]: { [n]: 1 } })
    expect(space.objectDoc(ids[0])![t.id]).not.toHaveProperty(loc)
    expect(await account.scopedValues.rowsOf(space.spaceId, [ids[0]])).toEqual(new Map([[ids[0], { [t.id]: { [loc]: 'mine' } }]]))
    expect(space.objectDoc(ids[1])!.core).toEqual({ types: [] })
    expect(space.objectDoc(ids[2])!.core).toEqual({ name: 'C', tags: ['x'], types: [] })
    // Each object is its root and one change writing its row.
    const changes = (await space.replica.allChanges()).slice(changesBefore)
    expect(changes.length).toBe(6)
    for (const id of ids) expect(space.replica.treeMeta(id)?.count).toBe(2)
    // All or none: a bad entry anywhere leaves the space as it was.
    const before = [...space.objectDocs()].length
    await expectCode(space.createObjects([{}, { types: [t.id], initialProperties: { [t.id]: { [n]: 'x' } } }]), 'property.kind_mismatch', { propId: n, index: 1 })
    await expectCode(space.createObjects([{}, {}, { types: ['nope'] }]), 'type.not_found', { typeId: 'nope', index: 2 })
    expect([...space.objectDocs()].length).toBe(before)
    await account.close()
  })

  it('a reader cannot create: space.read_only, nothing signed or applied', async () => {
    const a = await SpaceEngine.create(await deps(1), keyFor(1), { modules: DEFAULT_MODULES })
    await a.replica.addMember(idFor(2), 'reader')
    const b = await SpaceEngine.open(await deps(2), a.spaceId, keyFor(2), { modules: DEFAULT_MODULES })
    await pushAll(a.replica, b.replica)
    await b.settled()
    const before = (await b.replica.allChanges()).length
    await expectCode(b.createObjects([{ initialProperties: { core: { name: 'x' } } }]), 'space.read_only')
    expect((await b.replica.allChanges()).length).toBe(before)
  })
})

describe('data plane rules in the library', () => {
  it('modify: scope local signs no change; declared write-once fields are screened; deleteRecords keeps to the author rule', async () => {
    const { space, svc, account } = await accountSpace()
    const t = await svc.createType({ xKey: 'c' })
    const { datasets } = await svc.createPart(t.id, { key: 'items', datasets: [{ fields: { sku: { type: 'string' } } }] })
    const ds = datasets[0].collection
    const obj = await space.createObject({ types: [t.id] })
    const set = (path: string, value: string) => ({ type: '$set' as const, path, value })
    // Device-local fields (sync/modules/local-fields) never make a change.
    expect(await svc.modify({ objectId: obj, dataset: ds, scope: 'local', records: [] })).toMatchObject({ changeId: '' })
    await svc.modify({ objectId: obj, dataset: ds, records: [{ id: 'r', ops: [set('sku', 's1')] }] })
    const res = await svc.modify({ objectId: obj, dataset: ds, records: [{ id: 'r', ops: [set('sku', 's2')] }] })
    expect(res.rejections?.map((r) => r.code)).toEqual(['upsert.immutable_field'])
    expect(await svc.deleteRecords({ objectId: obj, dataset: ds, recordIds: ['r'] })).toMatchObject({ recordIds: ['r'] })
    await account.close()
  })
})
