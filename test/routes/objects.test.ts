import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { bootApp, call, expectError, newObject, newSpace, ok, type Booted } from './helpers.ts'

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
const rows = async (body: Record<string, unknown>) =>
  ok<{ records: Array<Record<string, any>>; total?: number; hasNext?: boolean }>(call(b.app, 'POST', `${S}/objects/query`, body))

describe('objects', () => {
  it('POST {S}/objects creates with types and initialProperties; the row has the spec fields', async () => {
    const typeId = await newType('book')
    const pages = await prop(typeId, { name: 'Pages', kind: 'number' })
    const objectId = await newObject(b.app, spaceId, { types: [typeId], initialProperties: { core: { name: 'Dune', tags: ['sf'] }, [typeId]: { [pages]: 412 } } })
    const { records } = await rows({ filter: { id: objectId } })
    expect(records).toHaveLength(1)
    const row = records[0]
    expect(row).toMatchObject({
      id: objectId,
      core: { name: 'Dune', tags: ['sf'], types: [typeId] },
      [typeId]: { [pages]: 412 },
      author: b.accountId,
      spaceId,
      modifiedBy: b.accountId,
    })
    expect(row.createdAt.$date).toMatch(/Z$/)
    expect(row.modifiedAt.$date).toMatch(/Z$/)
    expect(typeof row._ver.id).toBe('string')
    // Nothing appended server-side: an empty create carries no name.
    const bare = await newObject(b.app, spaceId)
    expect((await rows({ filter: { id: bare } })).records[0].core).toEqual({ types: [] })
  })

  it('POST {S}/objects: closed vocabulary, value checks, unknown types', async () => {
    const d = expectError(await call(b.app, 'POST', `${S}/objects`, { types: [], name: 'x' }), 400, 'request.unknown_field')
    expect(d).toMatchObject({ fields: ['name'], accepted: ['types', 'initialProperties'] })
    expectError(await call(b.app, 'POST', `${S}/objects`, { types: ['nope'] }), 404, 'type.not_found')
    const typeId = await newType('dated')
    const when = await prop(typeId, { name: 'When', kind: 'datetime' })
    expectError(await call(b.app, 'POST', `${S}/objects`, { types: [typeId], initialProperties: { [typeId]: { [when]: 'yesterday' } } }), 400, 'property.kind_mismatch')
    expectError(await call(b.app, 'POST', `${S}/objects`, { types: [typeId], initialProperties: { [typeId]: { unknownProp: 1 } } }), 404, 'property.not_found')
    expectError(await call(b.app, 'POST', `${S}/objects`, { initialProperties: { core: { types: ['x'] } } }), 400, 'request.invalid_field')
    expectError(await call(b.app, 'POST', `${S}/objects`, { types: 'book' }), 400, 'request.invalid_field')
    expectError(await call(b.app, 'POST', '/v1/spaces/nope/objects', {}), 404, 'space.not_found')
  })

  it('POST {S}/objects/query: filters (array fields match any element), sort, limit, offset, includeTotal, projection', async () => {
    const q = await newSpace(b.app, 'q')
    const Q = `/v1/spaces/${q}`
    for (const [name, tags, n] of [
      ['a', ['x', 'y'], 1],
      ['b', ['y'], 2],
      ['c', ['z'], 3],
      ['d', [], 4],
    ] as const) {
      await newObject(b.app, q, { initialProperties: { core: { name, tags: [...tags], description: `n${n}` } } })
    }
    const query = (body: Record<string, unknown>) => ok<{ records: Array<Record<string, any>>; total?: number; hasNext?: boolean }>(call(b.app, 'POST', `${Q}/objects/query`, body))
    const names = (r: { records: Array<Record<string, any>> }) => r.records.map((x) => x.core.name)
    expect(names(await query({ filter: { 'core.tags': 'y' }, sort: ['core.name'] }))).toEqual(['a', 'b'])
    expect(names(await query({ filter: { 'core.tags': { $in: ['x', 'z'] } }, sort: ['-core.name'] }))).toEqual(['c', 'a'])
    expect(names(await query({ filter: { 'core.name': { $gte: 'b', $lt: 'd' } }, sort: ['core.name'] }))).toEqual(['b', 'c'])
    expect(names(await query({ filter: { $or: [{ 'core.name': 'a' }, { 'core.name': 'd' }] }, sort: ['core.name'] }))).toEqual(['a', 'd'])
    expect(names(await query({ filter: { 'core.description': { $text: 'N3' } } }))).toEqual(['c'])
    expect(names(await query({ filter: { 'core.name': { $ne: 'a' }, 'core.types': { $size: 0 } }, sort: ['core.name'], limit: 1 }))).toEqual(['b'])
    const page = await query({ filter: { 'core.description': { $exists: true } }, sort: ['core.name'], limit: 2, offset: 1, includeTotal: true })
    expect(names(page)).toEqual(['b', 'c'])
    expect(page).toMatchObject({ total: 4, hasNext: true })
    const projected = await query({ filter: { 'core.name': 'a' }, projection: { 'core.name': 1 } })
    expect(projected.records).toEqual([{ id: expect.any(String), core: { name: 'a' } }])
    // Instants compare as {$date}; on an object's datetime field an ISO string means the same (issue 39 item 5).
    expect((await query({ filter: { createdAt: { $gte: { $date: '2000-01-01T00:00:00Z' } } } })).records.length).toBeGreaterThanOrEqual(4)
    expect((await query({ filter: { createdAt: { $gte: '2000-01-01T00:00:00Z' } } })).records.length).toBeGreaterThanOrEqual(4)

    expect(expectError(await call(b.app, 'POST', `${Q}/objects/query`, { filter: { 'core.name': { $like: 'a' } } }), 400, 'filter.unknown_operator')).toEqual({
      operator: '$like',
      path: 'core.name',
    })
    expectError(await call(b.app, 'POST', `${Q}/objects/query`, { filter: { $or: {} } }), 400, 'filter.invalid')
    expectError(await call(b.app, 'POST', `${Q}/objects/query`, { filter: { createdAt: { $gt: { $date: 'not a date' } } } }), 400, 'filter.invalid')
    expect(expectError(await call(b.app, 'POST', `${Q}/objects/query`, { filtre: {} }), 400, 'request.unknown_field')).toMatchObject({ fields: ['filtre'] })
    expectError(await call(b.app, 'POST', `${Q}/objects/query`, { objectId: 'x' }), 400, 'request.unknown_field')
    expectError(await call(b.app, 'POST', `${Q}/objects/query`, { limit: -1 }), 400, 'request.invalid_field')
    expectError(await call(b.app, 'POST', `${Q}/objects/query`, { limit: 10_001 }), 400, 'request.invalid_field')
    expectError(await call(b.app, 'POST', `${Q}/objects/query`, { sort: 'core.name' }), 400, 'request.invalid_field')
    expectError(await call(b.app, 'POST', `${Q}/objects/query`, { projection: { a: 1, b: 0 } }), 400, 'request.invalid_field')
    expectError(await call(b.app, 'POST', `${Q}/objects/query`, { mailboxCapacity: 16 }), 400, 'request.unknown_field')
    // null on optional fields means absent
    // The 4 objects: the space index row is a system row, left out unless core.types or id is named (issue 39 item 5).
    expect((await query({ filter: null, sort: null, limit: null })).records).toHaveLength(4)
  })

  it('DELETE {O}: tombstone; 404 sdk.not_found for unknown and already deleted objects', async () => {
    const obj = await newObject(b.app, spaceId, { initialProperties: { core: { name: 'gone' } } })
    await ok(call(b.app, 'DELETE', `${S}/objects/${obj}`), 204)
    expect((await rows({ filter: { id: obj } })).records).toEqual([])
    expectError(await call(b.app, 'DELETE', `${S}/objects/${obj}`), 404, 'sdk.not_found')
    expectError(await call(b.app, 'DELETE', `${S}/objects/nope`), 404, 'sdk.not_found')
    expectError(await call(b.app, 'POST', `${S}/query`, { objectId: obj, dataset: 'd' }), 404, 'object.not_found')
  })

  it('GET {O}/backlinks: objects whose relation values point at the object', async () => {
    const typeId = await newType('linker')
    const rel = await prop(typeId, { name: 'Ref', kind: 'string', format: 'relation' })
    const many = await prop(typeId, { name: 'Refs', kind: 'array', format: 'links', items: { kind: 'string' } })
    const target = await newObject(b.app, spaceId, { initialProperties: { core: { name: 'target' } } })
    const a = await newObject(b.app, spaceId, { types: [typeId], initialProperties: { [typeId]: { [rel]: `svc://${target}` } } })
    const c = await newObject(b.app, spaceId, { types: [typeId] })
    await ok(call(b.app, 'POST', `${S}/properties/${c}/set/${typeId}`, { [many]: ['svc://other', `svc://${target}`] }))
    const { backlinks } = await ok<{ backlinks: Array<{ objectId: string; typeId: string; propId: string }> }>(call(b.app, 'GET', `${S}/objects/${target}/backlinks`))
    expect(backlinks).toEqual(
      [
        { objectId: a, typeId, propId: rel },
        { objectId: c, typeId, propId: many },
      ].sort((x, y) => (x.objectId < y.objectId ? -1 : 1)),
    )
    expect(await ok(call(b.app, 'GET', `${S}/objects/unknown/backlinks`))).toEqual({ backlinks: [] })
    expectError(await call(b.app, 'POST', `${S}/properties/${a}/set/${typeId}`, { [rel]: target }), 400, 'property.format_violation')
    // A deleted linker stops linking.
    await ok(call(b.app, 'DELETE', `${S}/objects/${a}`), 204)
    expect((await ok(call(b.app, 'GET', `${S}/objects/${target}/backlinks`))).backlinks).toEqual([{ objectId: c, typeId, propId: many }])
  })
})
