import { describe, expect, it } from 'vitest'
import { localFieldsModule } from '../../sync/modules/local-fields/module.ts'
import { twoMembers } from './helpers.ts'

const set = (path: string, value: unknown) => ({ type: '$set' as const, path, value: value as never })

describe('device-local dataset fields', () => {
  it('never leave the device: a member holding every change sees the synced fields only', async () => {
    const { a, b, svcA, sync } = await twoMembers()
    const t = await svcA.createType({ xKey: 'list' })
    const { datasets } = await svcA.createPart(t.id, { key: 'rows', datasets: [{ fields: { title: { mutableBy: 'any' }, mark: { scope: 'local' } } }] })
    const ds = datasets[0].collection
    const obj = await a.createObject({ types: [t.id] })
    await svcA.modify({ objectId: obj, dataset: ds, records: [{ id: 'r', ops: [set('title', 'T')] }] })
    const res = await svcA.modify({ scope: 'local', objectId: obj, dataset: ds, records: [{ id: 'r', ops: [set('mark', 'mine')] }] })
    expect(res).toMatchObject({ changeId: '', recordIds: ['r'] })
    await sync()
    const docs = async (engine: typeof a) => [...(await engine.datasetSource(obj, ds))]
    expect(await docs(a)).toEqual([expect.objectContaining({ id: 'r', title: 'T', mark: 'mine' })])
    expect(await docs(b)).toEqual([expect.objectContaining({ id: 'r', title: 'T' })])
    expect((await docs(b))[0]).not.toHaveProperty('mark')
    // b's own local value of the same field is b's alone.
    await b.services.types.modify({ scope: 'local', objectId: obj, dataset: ds, records: [{ id: 'r', ops: [set('mark', 'theirs')] }] })
    await sync()
    expect(await a.services.of(localFieldsModule).fieldsOf(obj, ds, 'r')).toEqual({ mark: 'mine' })
    expect(await b.services.of(localFieldsModule).fieldsOf(obj, ds, 'r')).toEqual({ mark: 'theirs' })
  })
})
