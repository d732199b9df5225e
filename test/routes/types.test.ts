import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { bootApp, call, expectError, newObject, newSpace, ok, type Booted } from './helpers.ts'

let b: Booted
let S: string
beforeAll(async () => {
  b = await bootApp()
  S = `/v1/spaces/${await newSpace(b.app)}`
})
afterAll(() => b.close())

const newType = async (xKey: string, extra: Record<string, unknown> = {}) => (await ok<{ id: string }>(call(b.app, 'POST', `${S}/types`, { xKey, name: xKey, ...extra }), 201)).id

describe('types', () => {
  it('GET {S}/types lists built-ins in order, hidden ones only with includeHidden=true', async () => {
    const visible = await ok<{ types: Array<{ id: string }> }>(call(b.app, 'GET', `${S}/types`))
    expect(visible.types.map((t) => t.id)).toEqual(['core', 'type'])
    const all = await ok<{ types: Array<{ id: string }> }>(call(b.app, 'GET', `${S}/types?includeHidden=true`))
    expect(all.types.map((t) => t.id)).toEqual(['core', 'spaceIndex', 'type', 'dataview', 'page', 'miniapp', 'bin'])
    expectError(await call(b.app, 'GET', `${S}/types?includeHidden=maybe`), 400, 'request.invalid_field')
  })

  it('POST {S}/types: 201 TypeInfo; xKey required and unique; GET {T}; PATCH {T}; DELETE 501', async () => {
    const created = await ok(call(b.app, 'POST', `${S}/types`, { xKey: 'task', name: 'Task', description: 'todo', iconCid: 'i' }), 201)
    expect(created).toMatchObject({ xKey: 'task', name: 'Task', description: 'todo', iconCid: 'i', weight: 0, layout: '', hidden: false, meta: {} })
    const T = `${S}/types/${created.id}`
    expect(await ok(call(b.app, 'GET', T))).toEqual(created)
    const listed = await ok<{ types: Array<{ id: string }> }>(call(b.app, 'GET', `${S}/types`))
    expect(listed.types.map((t) => t.id)).toContain(created.id)

    expectError(await call(b.app, 'POST', `${S}/types`, { name: 'No key' }), 400, 'type.xkey_required')
    expectError(await call(b.app, 'POST', `${S}/types`, { xKey: '' }), 400, 'type.xkey_required')
    expect(expectError(await call(b.app, 'POST', `${S}/types`, { xKey: 'task' }), 409, 'type.xkey_conflict')).toMatchObject({ xKey: 'task', existingTypeId: created.id })
    expect(expectError(await call(b.app, 'POST', `${S}/types`, { xKey: 'page' }), 409, 'type.xkey_conflict')).toMatchObject({ existingTypeId: 'page' })
    expectError(await call(b.app, 'POST', `${S}/types`, { xKey: 'x', colour: 1 }), 400, 'request.unknown_field')

    await ok(call(b.app, 'PATCH', T, { name: 'Todo', weight: 3, meta: { a: 1 } }), 204)
    expect(await ok(call(b.app, 'GET', T))).toMatchObject({ name: 'Todo', weight: 3, meta: { a: 1 } })
    await ok(call(b.app, 'PATCH', T, { meta: { a: null } }), 204)
    expect((await ok(call(b.app, 'GET', T))).meta).toEqual({})
    expectError(await call(b.app, 'PATCH', T, { xKey: 'other' }), 400, 'request.unknown_field')
    expectError(await call(b.app, 'PATCH', T, {}), 400, 'request.missing_field')
    expectError(await call(b.app, 'PATCH', `${S}/types/page`, { name: 'Mine' }), 400, 'type.registered')
    expectError(await call(b.app, 'GET', `${S}/types/nope`), 404, 'type.not_found')
    expectError(await call(b.app, 'PATCH', `${S}/types/nope`, { name: 'x' }), 404, 'type.not_found')
    expectError(await call(b.app, 'DELETE', T), 501, 'sdk.not_implemented')
  })

  it('attach and detach a type after creation: 501 sdk.not_implemented', async () => {
    const typeId = await newType('attachable')
    const obj = await newObject(b.app, S.split('/').pop()!)
    expectError(await call(b.app, 'POST', `${S}/objects/${obj}/types/${typeId}`), 501, 'sdk.not_implemented')
    expectError(await call(b.app, 'DELETE', `${S}/objects/${obj}/types/${typeId}`), 501, 'sdk.not_implemented')
  })
})

describe('properties', () => {
  it('create, list, get, patch, delete; errors of each rule', async () => {
    const typeId = await newType('contact')
    const T = `${S}/types/${typeId}`
    expect(await ok(call(b.app, 'GET', `${T}/properties`))).toEqual({ properties: [] })
    const { propId } = await ok<{ propId: string }>(call(b.app, 'POST', `${T}/properties`, { name: 'Email', kind: 'string', format: 'email', xKey: 'email' }), 201)
    expect(propId.length).toBeLessThanOrEqual(11)
    const def = await ok(call(b.app, 'GET', `${T}/properties/${propId}`))
    expect(def).toMatchObject({ id: propId, typeId, kind: 'string', scope: 'synced', name: 'Email', xKey: 'email', xFormat: { type: 'email' } })
    expect((await ok(call(b.app, 'GET', `${T}/properties`))).properties).toEqual([def])

    // create errors
    expectError(await call(b.app, 'POST', `${T}/properties`, { name: 'N', kind: 'number', format: 'email' }), 400, 'property.format_invalid')
    expectError(await call(b.app, 'POST', `${T}/properties`, { name: 'E2', kind: 'string', xKey: 'email' }), 409, 'property.xkey_conflict')
    expectError(await call(b.app, 'POST', `${T}/properties`, { name: 'no kind' }), 400, 'request.missing_field')
    expectError(await call(b.app, 'POST', `${T}/properties`, { name: 'x', kind: 'string', colour: 1 }), 400, 'request.unknown_field')
    expectError(await call(b.app, 'POST', `${S}/types/page/properties`, { name: 'x', kind: 'string' }), 400, 'type.registered')
    expectError(await call(b.app, 'POST', `${S}/types/nope/properties`, { name: 'x', kind: 'string' }), 404, 'type.not_found')

    // patch rules
    const P = `${T}/properties/${propId}`
    await ok(call(b.app, 'PATCH', P, { set: { name: 'E-mail', 'xFormat.type': 'url', 'meta.index': 'none' } }), 204)
    expect(await ok(call(b.app, 'GET', P))).toMatchObject({ name: 'E-mail', xFormat: { type: 'url' }, meta: { index: 'none' } })
    expect(expectError(await call(b.app, 'PATCH', P, { set: { kind: 'number' } }), 400, 'property.immutable')).toMatchObject({ path: 'kind' })
    expectError(await call(b.app, 'PATCH', P, { set: { 'xFormat.type': 'number' } }), 400, 'property.format_invalid')
    expectError(await call(b.app, 'PATCH', P, { set: { meta: { a: 1 } } }), 400, 'request.invalid_field')
    expectError(await call(b.app, 'PATCH', P, { set: { bogus: 1 } }), 400, 'request.invalid_field')
    expectError(await call(b.app, 'PATCH', P, {}), 400, 'request.missing_field')
    await ok(call(b.app, 'POST', `${T}/properties`, { name: 'Phone', kind: 'string', xKey: 'phone' }), 201)
    expectError(await call(b.app, 'PATCH', P, { set: { xKey: 'phone' } }), 409, 'property.xkey_conflict')
    expectError(await call(b.app, 'PATCH', `${T}/properties/nope`, { set: { name: 'x' } }), 404, 'sdk.not_found')
    await ok(call(b.app, 'PATCH', P, { unset: ['meta'] }), 204)

    await ok(call(b.app, 'DELETE', P), 204)
    expectError(await call(b.app, 'GET', P), 404, 'sdk.not_found')
    expectError(await call(b.app, 'DELETE', P), 404, 'sdk.not_found')
    expect((await ok(call(b.app, 'GET', `${T}/properties`))).properties.map((p: { id: string }) => p.id)).not.toContain(propId)
  })

  it('typed values: POST {S}/properties/:objectId/set/:typeKey validates by slug and routes by scope', async () => {
    const spaceId = S.split('/').pop()!
    const typeId = await newType('person')
    const T = `${S}/types/${typeId}`
    const { propId: age } = await ok(call(b.app, 'POST', `${T}/properties`, { name: 'Age', kind: 'number', format: 'integer' }), 201)
    const { propId: note } = await ok(call(b.app, 'POST', `${T}/properties`, { name: 'Note', kind: 'string', scope: 'local' }), 201)
    const obj = await newObject(b.app, spaceId, { types: [typeId] })
    const res = await ok(call(b.app, 'POST', `${S}/properties/${obj}/set/${typeId}`, { [age]: 42, [note]: 'private' }))
    expect(res).toMatchObject({ recordIds: [obj], scoped: { local: [note] } })
    expect(typeof res.changeId).toBe('string')
    const row = (await ok(call(b.app, 'POST', `${S}/objects/query`, { filter: { id: obj } }))).records[0]
    // the local value is not in the synced row, but the caller's query shows it where the spec puts values
    expect(row[typeId]).toEqual({ [age]: 42, [note]: 'private' })
    // the {patch: map} form, and core
    await ok(call(b.app, 'POST', `${S}/properties/${obj}/set/core`, { patch: { name: 'Bob' } }))
    expect((await ok(call(b.app, 'POST', `${S}/objects/query`, { filter: { id: obj } }))).records[0].core.name).toBe('Bob')

    expect(expectError(await call(b.app, 'POST', `${S}/properties/${obj}/set/${typeId}`, { [age]: 4.5 }), 400, 'property.format_violation')).toMatchObject({
      propId: age,
      format: 'integer',
    })
    // a value not of the property's kind at all is the spec's other code
    expect(expectError(await call(b.app, 'POST', `${S}/properties/${obj}/set/${typeId}`, { [age]: 'forty' }), 400, 'property.kind_mismatch')).toMatchObject({
      propId: age,
      kind: 'number',
      format: 'integer',
    })
    expectError(await call(b.app, 'POST', `${S}/properties/${obj}/set/${typeId}`, { nope: 1 }), 404, 'property.not_found')
    expectError(await call(b.app, 'POST', `${S}/properties/${obj}/set/${typeId}`, {}), 400, 'request.missing_field')
    expectError(await call(b.app, 'POST', `${S}/properties/nope/set/core`, { name: 'x' }), 404, 'object.not_found')
    expectError(await call(b.app, 'POST', `${S}/properties/${obj}/set/nope`, { x: 1 }), 404, 'type.not_found')
    const other = await newType('other')
    expectError(await call(b.app, 'POST', `${S}/properties/${obj}/set/${other}`, { x: 1 }), 400, 'object.type_required')
    expectError(await call(b.app, 'POST', `${S}/properties/${obj}/set/core`, { types: ['x'] }), 400, 'request.invalid_field')
  })
})

describe('parts and dataset declarations', () => {
  it('parts CRUD, datasets on parts, declaration patch and remove, and every declaration error', async () => {
    const typeId = await newType('project')
    const T = `${S}/types/${typeId}`
    const part = await ok(
      call(b.app, 'POST', `${T}/parts`, { key: 'tasks', name: 'Tasks', datasets: [{ idRule: 'user', fields: { title: { type: 'string', mutableBy: 'any' } } }] }),
      201,
    )
    expect(part).toMatchObject({ partId: expect.any(String), datasets: [{ datasetDefId: 'tasks', collection: `${typeId}_tasks` }] })
    const parts = await ok(call(b.app, 'GET', `${T}/parts`))
    expect(parts.parts).toEqual([expect.objectContaining({ id: part.partId, key: 'tasks', name: 'Tasks', datasets: [expect.objectContaining({ key: 'tasks', idRule: 'user' })] })])

    const Pt = `${T}/parts/${part.partId}`
    await ok(call(b.app, 'PATCH', Pt, { set: { name: 'Todo', pos: 2 } }), 204)
    expect((await ok(call(b.app, 'GET', `${T}/parts`))).parts[0]).toMatchObject({ name: 'Todo', pos: 2 })
    expectError(await call(b.app, 'PATCH', Pt, { set: { key: 'other' } }), 400, 'request.invalid_field')
    expectError(await call(b.app, 'PATCH', `${T}/parts/nope`, { set: { name: 'x' } }), 404, 'sdk.not_found')

    const ds = await ok(call(b.app, 'POST', `${Pt}/datasets`, { key: 'notes', fields: { body: { type: 'string' } } }), 201)
    expect(ds).toEqual({ datasetDefId: 'notes', collection: `${typeId}_notes` })
    const editor = await ok(call(b.app, 'POST', `${Pt}/datasets`, { module: 'editor', shared: true }), 201)
    expect(editor).toEqual({ datasetDefId: 'blocks', collection: 'editor_blocks' })

    expect(expectError(await call(b.app, 'POST', `${Pt}/datasets`, { key: 'notes' }), 409, 'dataset.key_conflict')).toMatchObject({ key: 'notes' })
    expectError(await call(b.app, 'POST', `${Pt}/datasets`, { key: 'm1', module: 'editor', fields: { a: {} } }), 409, 'dataset.module_owned')
    expectError(await call(b.app, 'POST', `${Pt}/datasets`, { key: 'm2', module: 'chat', shared: false }), 400, 'dataset.shared_conflict')
    expectError(await call(b.app, 'POST', `${Pt}/datasets`, { key: 'm3', module: 'video' }), 400, 'dataset.module_unknown')
    expectError(await call(b.app, 'POST', `${Pt}/datasets`, { key: 'm4', idMaxLen: 5 }), 400, 'dataset.decl_invalid')
    expectError(await call(b.app, 'POST', `${Pt}/datasets`, { key: 'bad key!' }), 400, 'dataset.decl_invalid')
    expectError(await call(b.app, 'POST', `${Pt}/datasets`, { key: 'x', colour: 1 }), 400, 'request.unknown_field')
    expectError(await call(b.app, 'POST', `${T}/parts`, { key: 'tasks' }), 409, 'dataset.key_conflict')
    expectError(await call(b.app, 'POST', `${T}/parts`, { name: 'no key' }), 400, 'request.missing_field')
    expectError(await call(b.app, 'POST', `${S}/types/page/parts`, { key: 'k' }), 400, 'type.registered')

    // Declaration patch and remove (svc's routes).
    await ok(call(b.app, 'PATCH', `${T}/datasets/notes`, { set: { displayName: 'Notes', 'fields.done': { type: 'boolean', mutableBy: 'any' } } }), 204)
    const listing = await ok(call(b.app, 'GET', `${S}/datasets`))
    const notes = listing.datasets.find((d: { name: string }) => d.name === `${typeId}_notes`)
    expect(notes).toMatchObject({ owners: [typeId], module: null, schema: { title: 'Notes', properties: { done: { type: 'boolean', 'x-mutableBy': 'any' } } } })
    expect(expectError(await call(b.app, 'PATCH', `${T}/datasets/notes`, { set: { key: 'n2' } }), 400, 'dataset.immutable')).toMatchObject({ path: 'key' })
    expectError(await call(b.app, 'PATCH', `${T}/datasets/nope`, { set: { displayName: 'x' } }), 404, 'dataset.not_found')
    await ok(call(b.app, 'DELETE', `${T}/datasets/notes`), 204)
    expectError(await call(b.app, 'DELETE', `${T}/datasets/notes`), 404, 'dataset.not_found')

    await ok(call(b.app, 'DELETE', Pt), 204)
    expect(await ok(call(b.app, 'GET', `${T}/parts`))).toEqual({ parts: [] })
    expectError(await call(b.app, 'DELETE', Pt), 404, 'sdk.not_found')
  })
})
