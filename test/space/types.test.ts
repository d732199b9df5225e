import { describe, expect, it } from 'vitest'
import { BUILTIN_TYPES } from '../../sync/space/schema.ts'
import { expectCode, newSpace } from './helpers.ts'

describe('types', () => {
  it('lists built-ins in spec order, then user types; hidden ones only with includeHidden', async () => {
    const { svc } = await newSpace()
    expect(svc.listTypes().map((t) => t.id)).toEqual(['core', 'type'])
    expect(svc.listTypes({ includeHidden: true }).map((t) => t.id)).toEqual(['core', 'spaceIndex', 'type', 'dataview', 'page', 'miniapp', 'bin'])
    expect(BUILTIN_TYPES.map((t) => t.id)).toEqual(['core', 'spaceIndex', 'type', 'dataview', 'page', 'miniapp', 'bin'])
    const a = await svc.createType({ xKey: 'task', name: 'Task' })
    const b = await svc.createType({ xKey: 'root', name: 'Bundle root', hidden: true })
    const c = await svc.createType({ xKey: 'note' })
    expect(svc.listTypes().map((t) => t.id)).toEqual(['core', 'type', a.id, c.id])
    expect(svc.listTypes({ includeHidden: true }).map((t) => t.id)).toEqual(['core', 'spaceIndex', 'type', 'dataview', 'page', 'miniapp', 'bin', a.id, b.id, c.id])
  })

  it('create returns TypeInfo; get answers it; unknown ids are 404 type.not_found', async () => {
    const { svc, engine } = await newSpace()
    const t = await svc.createType({ xKey: 'task', name: 'Task', description: 'to do', iconCid: 'bafy', weight: 2, layout: 'todo', meta: { color: 'red', gone: null } })
    expect(t).toEqual({ id: t.id, name: 'Task', description: 'to do', iconCid: 'bafy', xKey: 'task', weight: 2, layout: 'todo', hidden: false, meta: { color: 'red' } })
    expect(svc.getType(t.id)).toEqual(t)
    expect(engine.objectDoc(t.id)).toMatchObject({ core: { types: ['type'] }, type: { xKey: 'task', name: 'Task' } })
    expect(engine.typeExists(t.id)).toBe(true)
    expect(svc.getType('page')).toMatchObject({ id: 'page', xKey: 'page', hidden: true })
    await expectCode(() => svc.getType('nope'), 'type.not_found', { typeId: 'nope' })
    // An ordinary object is not a type.
    const o = await engine.createObject({ types: [t.id] })
    await engine.settled()
    await expectCode(() => svc.getType(o), 'type.not_found')
  })

  it('xKey is required and unique among xKeys and ids of every type', async () => {
    const { svc } = await newSpace()
    await expectCode(svc.createType({ name: 'x' }), 'type.xkey_required')
    await expectCode(svc.createType({ xKey: '' }), 'type.xkey_required')
    await expectCode(svc.createType({ xKey: 'has space' }), 'request.invalid_field')
    const t = await svc.createType({ xKey: 'task' })
    const hidden = await svc.createType({ xKey: 'secret', hidden: true })
    await expectCode(svc.createType({ xKey: 'task' }), 'type.xkey_conflict', { xKey: 'task', existingTypeId: t.id })
    await expectCode(svc.createType({ xKey: 'secret' }), 'type.xkey_conflict', { xKey: 'secret', existingTypeId: hidden.id })
    await expectCode(svc.createType({ xKey: 'page' }), 'type.xkey_conflict', { xKey: 'page', existingTypeId: 'page' })
    await expectCode(svc.createType({ xKey: t.id }), 'type.xkey_conflict', { xKey: t.id, existingTypeId: t.id })
  })

  it('concurrent creates with one xKey: exactly one wins (read-then-create is serialized)', async () => {
    const { svc } = await newSpace()
    const results = await Promise.allSettled([svc.createType({ xKey: 'dup' }), svc.createType({ xKey: 'dup' })])
    expect(results.map((r) => r.status).sort()).toEqual(['fulfilled', 'rejected'])
    expect(svc).toBe(svc.engine.services.types)
  })

  it('patch: absent keeps, meta is per key with null unsetting, bad fields refused', async () => {
    const { svc } = await newSpace()
    const t = await svc.createType({ xKey: 'task', name: 'Task', meta: { a: 1, b: 2 } })
    await svc.patchType(t.id, { description: 'new', hidden: true, weight: 5, layout: 'x', iconCid: 'cid', meta: { a: null, c: { deep: true } } })
    expect(svc.getType(t.id)).toEqual({ ...t, description: 'new', hidden: true, weight: 5, layout: 'x', iconCid: 'cid', meta: { b: 2, c: { deep: true } } })
    await svc.patchType(t.id, { name: 'Renamed' })
    expect(svc.getType(t.id).name).toBe('Renamed')
    await expectCode(svc.patchType(t.id, {}), 'request.missing_field')
    await expectCode(svc.patchType(t.id, { weight: 'heavy' }), 'request.invalid_field', { field: 'weight' })
    await expectCode(svc.patchType(t.id, { hidden: 'yes' }), 'request.invalid_field', { field: 'hidden' })
    await expectCode(svc.patchType(t.id, { meta: 'x' }), 'request.invalid_field', { field: 'meta' })
    await expectCode(svc.patchType(t.id, { xKey: 'other' } as never), 'request.invalid_field')
    await expectCode(svc.patchType('nope', { name: 'x' }), 'type.not_found')
  })

  it('built-in types are frozen: 400 type.registered', async () => {
    const { svc } = await newSpace()
    for (const id of ['page', 'dataview', 'miniapp', 'bin', 'core']) await expectCode(svc.patchType(id, { name: 'x' }), 'type.registered', { typeId: id })
  })

  it('delete, attach and detach answer 501 sdk.not_implemented', async () => {
    const { svc } = await newSpace()
    const t = await svc.createType({ xKey: 'task' })
    await expectCode(svc.deleteType(t.id), 'sdk.not_implemented')
    await expectCode(svc.attachType('o', t.id), 'sdk.not_implemented')
    await expectCode(svc.detachType('o', t.id), 'sdk.not_implemented')
  })
})
