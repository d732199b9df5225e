import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { MAX_OBJECTS_PER_CREATE, OBJECT_CREATE_PAGE } from '../../sync/core/limits.ts'
import { bootApp, call, expectError, newSpace, ok, type Booted } from './helpers.ts'

let b: Booted
let spaceId: string
let S: string
beforeAll(async () => {
  b = await bootApp()
  spaceId = await newSpace(b.app)
  S = `/v1/spaces/${spaceId}`
})
afterAll(() => b.close())

const newType = async (xKey: string) => (await ok<{ id: string }>(call(b.app, 'POST', `${S}/types`, { xKey, name: xKey }), 201)).id
const prop = async (typeId: string, body: Record<string, unknown>) => (await ok<{ propId: string }>(call(b.app, 'POST', `${S}/types/${typeId}/properties`, body), 201)).propId
const query = (body: Record<string, unknown>) => ok<{ records: Array<Record<string, any>>; total?: number }>(call(b.app, 'POST', `${S}/objects/query`, body))
const count = async () => (await query({ limit: 1, includeTotal: true })).total!
const batch = (objects: unknown) => call(b.app, 'POST', `${S}/objects/batch`, { objects })

describe('POST {S}/objects/batch', () => {
  it('creates every entry as POST {S}/objects would, ids in input order, over several pages', async () => {
    const typeId = await newType('ticket')
    const points = await prop(typeId, { name: 'Points', kind: 'number' })
    const mine = await prop(typeId, { name: 'Mine', kind: 'boolean', scope: 'local' })
    const n = OBJECT_CREATE_PAGE * 2 + 7
    const objects: Array<Record<string, unknown>> = Array.from({ length: n }, (_, i) => ({
      types: [typeId],
      initialProperties: { core: { name: `T${i}`, tags: [`t${i % 3}`] }, [typeId]: { [points]: i, ...(i === 5 ? { [mine]: true } : {}) } },
    }))
    objects[3] = { types: [], initialProperties: {} }
    const { objectIds } = await ok<{ objectIds: string[] }>(batch(objects), 201)
    expect(objectIds).toHaveLength(n)
    expect(new Set(objectIds).size).toBe(n)
    const { records } = await query({ filter: { 'core.types': typeId }, sort: [`${typeId}.${points}`], limit: 1000 })
    expect(records.map((r) => r.id)).toEqual(objectIds.filter((_, i) => i !== 3))
    expect(records[0]).toMatchObject({ id: objectIds[0], core: { name: 'T0', tags: ['t0'], types: [typeId] }, [typeId]: { [points]: 0 }, author: b.accountId, spaceId })
    // Nothing appended server-side; a local-scope value stays out of the row, and the query lays it on.
    expect((await query({ filter: { id: objectIds[3] } })).records[0].core).toEqual({ types: [] })
    expect((await query({ filter: { id: objectIds[5] } })).records[0][typeId]).toEqual({ [points]: 5, [mine]: true })
    // Every object is an ordinary one: it can be written to and deleted.
    await ok(call(b.app, 'POST', `${S}/properties/${objectIds[1]}/set/core`, { name: 'renamed' }))
    expect((await query({ filter: { id: objectIds[1] } })).records[0].core.name).toBe('renamed')
    await ok(call(b.app, 'DELETE', `${S}/objects/${objectIds[2]}`), 204)
    expect((await query({ filter: { id: objectIds[2] } })).records).toEqual([])
  })

  it('all or none: the first entry that fails answers the single create code with its index, and nothing is created', async () => {
    const typeId = await newType('dated')
    const when = await prop(typeId, { name: 'When', kind: 'datetime' })
    const good = { types: [typeId], initialProperties: { core: { name: 'fine' } } }
    const before = await count()
    const cases: Array<[unknown[], number, string, Record<string, unknown>]> = [
      [[good, { types: ['nope'] }], 404, 'type.not_found', { typeId: 'nope', index: 1 }],
      [[good, good, { types: [typeId], initialProperties: { [typeId]: { [when]: 'yesterday' } } }], 400, 'property.kind_mismatch', { propId: when, index: 2 }],
      [[{ types: [typeId], initialProperties: { [typeId]: { unknownProp: 1 } } }], 404, 'property.not_found', { index: 0 }],
      [[good, { initialProperties: { core: { types: ['x'] } } }], 400, 'request.invalid_field', { index: 1 }],
      [
        [good, { initialProperties: { [typeId]: { [when]: { $date: '2026-01-01T00:00:00Z' } } } }],
        400,
        'request.invalid_field',
        { field: `initialProperties.${typeId}`, index: 1 },
      ],
    ]
    for (const [objects, status, code, details] of cases) expect(expectError(await batch(objects), status, code)).toMatchObject(details)
    expect(await count()).toBe(before)
  })

  it('a type only the system may carry is refused as by POST {S}/objects', async () => {
    const chatType = await newType('mychat')
    await ok(call(b.app, 'POST', `${S}/types/${chatType}/parts`, { key: 'chat', datasets: [{ module: 'chat' }] }), 201)
    const before = await count()
    expect(expectError(await batch([{}, { types: [chatType] }]), 400, 'type.reserved_carrier')).toMatchObject({ typeId: chatType, index: 1 })
    expect(await count()).toBe(before)
  })

  it('the body: closed vocabulary at both levels, at least one and at most MAX_OBJECTS_PER_CREATE entries', async () => {
    expect(expectError(await call(b.app, 'POST', `${S}/objects/batch`, { objects: [{}], pageSize: 3 }), 400, 'request.unknown_field')).toMatchObject({
      fields: ['pageSize'],
      accepted: ['objects'],
    })
    expect(expectError(await batch([{}, { name: 'x' }]), 400, 'request.unknown_field')).toMatchObject({ fields: ['objects.1.name'] })
    expectError(await call(b.app, 'POST', `${S}/objects/batch`, {}), 400, 'request.missing_field')
    expectError(await batch([]), 400, 'request.invalid_field')
    expectError(await batch({}), 400, 'request.invalid_field')
    expectError(await batch([{ types: 'x' }]), 400, 'request.invalid_field')
    const before = await count()
    expect(expectError(await batch(Array.from({ length: MAX_OBJECTS_PER_CREATE + 1 }, () => ({}))), 400, 'request.invalid_field')).toMatchObject({ field: 'objects' })
    expect(await count()).toBe(before)
    // Exactly the bound is accepted.
    expect((await ok<{ objectIds: string[] }>(batch(Array.from({ length: MAX_OBJECTS_PER_CREATE }, () => ({}))), 201)).objectIds).toHaveLength(MAX_OBJECTS_PER_CREATE)
    expect(await count()).toBe(before + MAX_OBJECTS_PER_CREATE)
    expectError(await call(b.app, 'POST', '/v1/spaces/nope/objects/batch', { objects: [{}] }), 404, 'space.not_found')
  })

  it('is in the OpenAPI document with its bound', async () => {
    const doc = await ok<{ paths: Record<string, any> }>(call(b.app, 'GET', '/v1/openapi.json'))
    const op = doc.paths['/v1/spaces/{spaceId}/objects/batch'].post
    expect(op.requestBody.content['application/json'].schema.properties.objects).toMatchObject({ minItems: 1, maxItems: MAX_OBJECTS_PER_CREATE })
    expect(Object.keys(op.responses)).toContain('201')
  })
})
