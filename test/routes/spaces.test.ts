import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { bootApp, call, expectError, newSpace, ok, type Booted } from './helpers.ts'

let b: Booted
beforeAll(async () => {
  b = await bootApp()
})
afterAll(() => b.close())

describe('spaces', () => {
  it('POST /v1/spaces creates (201 SpaceInfo); GET lists active ones; GET {S} reads one', async () => {
    const info = await ok(call(b.app, 'POST', '/v1/spaces', { name: 'Team', description: 'd', iconCid: 'bafy' }), 201)
    expect(info).toMatchObject({
      name: 'Team',
      description: 'd',
      iconCid: 'bafy',
      spaceType: 'svc.space',
      author: b.accountId,
      ownRole: 'owner',
      settings: {},
      derived: false,
      status: 'active',
    })
    expect(typeof info.spaceIndexObjectId).toBe('string')
    expect(info.createdAt.$date).toMatch(/Z$/)
    const list = await ok<Array<{ id: string }>>(call(b.app, 'GET', '/v1/spaces'))
    expect(list.map((s) => s.id)).toContain(info.id)
    expect(await ok(call(b.app, 'GET', `/v1/spaces/${info.id}`))).toEqual(info)
  })

  it('POST /v1/spaces: name required, closed body', async () => {
    expectError(await call(b.app, 'POST', '/v1/spaces', {}), 400, 'request.missing_field')
    const d = expectError(await call(b.app, 'POST', '/v1/spaces', { name: 'x', colour: 'red' }), 400, 'request.unknown_field')
    expect(d).toMatchObject({ fields: ['colour'], accepted: ['name', 'description', 'iconCid'] })
    expectError(await call(b.app, 'POST', '/v1/spaces', { name: 5 }), 400, 'request.invalid_field')
  })

  it('PATCH {S}: absent keeps, empty string clears, at least one field', async () => {
    const id = await newSpace(b.app, 'Old')
    await ok(call(b.app, 'PATCH', `/v1/spaces/${id}`, { description: 'about' }), 204)
    expect(await ok(call(b.app, 'GET', `/v1/spaces/${id}`))).toMatchObject({ name: 'Old', description: 'about' })
    await ok(call(b.app, 'PATCH', `/v1/spaces/${id}`, { name: 'New', description: '' }), 204)
    expect(await ok(call(b.app, 'GET', `/v1/spaces/${id}`))).toMatchObject({ name: 'New', description: '' })
    expectError(await call(b.app, 'PATCH', `/v1/spaces/${id}`, {}), 400, 'request.missing_field')
    expectError(await call(b.app, 'PATCH', '/v1/spaces/nope', { name: 'x' }), 404, 'space.not_found')
  })

  it('PATCH {S}/settings: set and unset, at least one entry, same key twice refused, scalars only', async () => {
    const id = await newSpace(b.app)
    await ok(call(b.app, 'PATCH', `/v1/spaces/${id}/settings`, { set: { notifyMode: 'mentions', pinned: true } }), 204)
    expect((await ok(call(b.app, 'GET', `/v1/spaces/${id}`))).settings).toEqual({ notifyMode: 'mentions', pinned: true })
    await ok(call(b.app, 'PATCH', `/v1/spaces/${id}/settings`, { unset: ['pinned'] }), 204)
    expect((await ok(call(b.app, 'GET', `/v1/spaces/${id}`))).settings).toEqual({ notifyMode: 'mentions' })
    expectError(await call(b.app, 'PATCH', `/v1/spaces/${id}/settings`, {}), 400, 'request.missing_field')
    expectError(await call(b.app, 'PATCH', `/v1/spaces/${id}/settings`, { set: {}, unset: [] }), 400, 'request.missing_field')
    expect(expectError(await call(b.app, 'PATCH', `/v1/spaces/${id}/settings`, { set: { a: 1 }, unset: ['a'] }), 400, 'request.invalid_field')).toMatchObject({ field: 'a' })
    expectError(await call(b.app, 'PATCH', `/v1/spaces/${id}/settings`, { set: { a: { deep: 1 } } }), 400, 'request.invalid_field')
    expectError(await call(b.app, 'PATCH', `/v1/spaces/${id}/settings`, { set: { notifyMode: 'loud' } }), 400, 'request.invalid_field')
    expectError(await call(b.app, 'PATCH', '/v1/spaces/nope/settings', { set: { a: 1 } }), 404, 'space.not_found')
  })

  it('DELETE {S}: sticky tombstone, listed with ?status=deleted or all; 404 after', async () => {
    const id = await newSpace(b.app, 'Doomed')
    await ok(call(b.app, 'DELETE', `/v1/spaces/${id}`), 204)
    const active = await ok<Array<{ id: string }>>(call(b.app, 'GET', '/v1/spaces'))
    expect(active.map((s) => s.id)).not.toContain(id)
    const deleted = await ok<Array<{ id: string; status: string }>>(call(b.app, 'GET', '/v1/spaces?status=deleted'))
    expect(deleted.find((s) => s.id === id)?.status).toBe('deleted')
    const all = await ok<Array<{ id: string; status: string }>>(call(b.app, 'GET', '/v1/spaces?status=all'))
    expect(all.map((s) => s.id)).toEqual(expect.arrayContaining([id, ...active.map((s) => s.id)]))
    expect((await ok(call(b.app, 'GET', `/v1/spaces/${id}`))).status).toBe('deleted')
    expectError(await call(b.app, 'DELETE', `/v1/spaces/${id}`), 404, 'space.not_found')
    expectError(await call(b.app, 'DELETE', '/v1/spaces/nope'), 404, 'space.not_found')
    expectError(await call(b.app, 'GET', '/v1/spaces/nope'), 404, 'space.not_found')
    expectError(await call(b.app, 'GET', '/v1/spaces?status=gone'), 400, 'request.invalid_field')
    expectError(await call(b.app, 'GET', '/v1/spaces?colour=1'), 400, 'request.unknown_field')
    // A deleted space serves no content routes.
    expectError(await call(b.app, 'POST', `/v1/spaces/${id}/objects`, {}), 404, 'space.not_found')
  })

  it('POST {S}/sync answers 204 at once without peers (and calls the P2P hook when present)', async () => {
    const id = await newSpace(b.app)
    await ok(call(b.app, 'POST', `/v1/spaces/${id}/sync`), 204)
    const synced: string[] = []
    ;(b.engine as unknown as { syncNow?: (s: string) => Promise<void> }).syncNow = async (s) => void synced.push(s)
    try {
      await ok(call(b.app, 'POST', `/v1/spaces/${id}/sync`), 204)
    } finally {
      delete (b.engine as unknown as { syncNow?: unknown }).syncNow
    }
    expect(synced).toEqual([id])
    expectError(await call(b.app, 'POST', '/v1/spaces/nope/sync'), 404, 'space.not_found')
  })
})

describe('derived spaces', () => {
  it('GET /v1/spaces/derived resolves without creating; POST creates idempotently with a stable id', async () => {
    const before = await ok<{ spaces: Array<{ name: string; spaceId: string; created: boolean }> }>(call(b.app, 'GET', '/v1/spaces/derived'))
    const personal = before.spaces.find((s) => s.name === 'personal')!
    expect(personal.created).toBe(false)
    const a = await ok(call(b.app, 'POST', '/v1/spaces/derived/personal'), 201)
    expect(a).toMatchObject({ id: personal.spaceId, derived: true, status: 'active', ownRole: 'owner' })
    const again = await ok(call(b.app, 'POST', '/v1/spaces/derived/personal'), 201)
    expect(again.id).toBe(a.id)
    const after = await ok<{ spaces: Array<{ name: string; created: boolean; status?: string }> }>(call(b.app, 'GET', '/v1/spaces/derived'))
    expect(after.spaces.find((s) => s.name === 'personal')).toMatchObject({ created: true, status: 'active' })
    expectError(await call(b.app, 'POST', '/v1/spaces/derived/nonsense'), 404, 'space.derived_unknown')
    expectError(await call(b.app, 'DELETE', `/v1/spaces/${a.id}`), 409, 'space.derived_undeletable')
  })

  it('POST /v1/spaces/derived/:name on a deleted derived row: 409 space.deleted', async () => {
    // Only another device can tombstone a derived row (DELETE refuses); write the synced tombstone directly.
    const account = b.engine.account()
    const { spaces } = await ok<{ spaces: Array<{ name: string; spaceId: string }> }>(call(b.app, 'GET', '/v1/spaces/derived'))
    const archive = spaces.find((s) => s.name === 'archive')!
    await ok(call(b.app, 'POST', '/v1/spaces/derived/archive'), 201)
    await account.tech.replica.write(account.techObject, [{ op: 'set', ds: 'spaces', id: archive.spaceId, path: 'deletedAt', value: { $date: new Date().toISOString() } }])
    expectError(await call(b.app, 'POST', '/v1/spaces/derived/archive'), 409, 'space.deleted')
  })
})

describe('tech-space queries and datasets', () => {
  it('POST /v1/spaces/query: raw rows of spaces (default) and profile; other datasets 400', async () => {
    const id = await newSpace(b.app, 'Queried')
    const res = await ok<{ records: Array<{ id: string; spaceId: string; status: string }>; total: number; hasNext: boolean }>(
      call(b.app, 'POST', '/v1/spaces/query', { filter: { spaceId: id }, includeTotal: true }),
    )
    expect(res.records).toHaveLength(1)
    expect(res.records[0]).toMatchObject({ id, spaceId: id, spaceType: 'svc.space', derived: false, status: 'active' })
    expect(res.records[0]).toHaveProperty('_ver.id')
    expect(res).toMatchObject({ total: 1, hasNext: false })
    const all = await ok<{ records: unknown[] }>(call(b.app, 'POST', '/v1/spaces/query', { dataset: 'spaces', sort: ['-createdAt'], limit: 2 }))
    expect(all.records).toHaveLength(2)

    await ok(call(b.app, 'PUT', '/v1/account/metadata', { name: 'Me' }), 204)
    const profile = await ok<{ records: Array<{ id: string; name: string }> }>(call(b.app, 'POST', '/v1/spaces/query', { dataset: 'profile' }))
    expect(profile.records).toEqual([expect.objectContaining({ id: 'me', name: 'Me' })])

    expect(expectError(await call(b.app, 'POST', '/v1/spaces/query', { dataset: 'settings' }), 400, 'request.invalid_field')).toMatchObject({ field: 'dataset' })
    expectError(await call(b.app, 'POST', '/v1/spaces/query', { objectId: 'x' }), 400, 'request.unknown_field')
    expect(expectError(await call(b.app, 'POST', '/v1/spaces/query', { filter: { spaceId: { $regex: 'a' } } }), 400, 'filter.unknown_operator')).toMatchObject({
      operator: '$regex',
      path: 'spaceId',
    })
    expectError(await call(b.app, 'POST', '/v1/spaces/query', { filter: { $and: 5 } }), 400, 'filter.invalid')
    expectError(await call(b.app, 'POST', '/v1/spaces/query/subscribe', { dataset: 'other' }), 400, 'request.invalid_field')
    expectError(await call(b.app, 'POST', '/v1/spaces/query/subscribe', { mailboxCapacity: 4 }), 400, 'request.invalid_field')
  })

  it('GET /v1/datasets lists the tech-space system datasets; GET {S}/datasets the space collections', async () => {
    const tech = await ok<{ datasets: Array<{ name: string; schema: { properties: Record<string, unknown> } }> }>(call(b.app, 'GET', '/v1/datasets'))
    expect(tech.datasets.map((d) => d.name)).toEqual(['spaces', 'profile', 'invites', 'settings'])
    expect(tech.datasets[0].schema.properties.spaceId).toMatchObject({ type: 'string', 'x-scope': 'synced' })
    const id = await newSpace(b.app)
    const ds = await ok<{ datasets: Array<{ name: string; module: string | null; shared?: boolean }> }>(call(b.app, 'GET', `/v1/spaces/${id}/datasets`))
    expect(ds.datasets).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ name: 'chat_messages', module: 'chat', shared: true }),
        expect.objectContaining({ name: 'editor_blocks', module: 'editor', shared: true }),
      ]),
    )
    expectError(await call(b.app, 'GET', '/v1/spaces/nope/datasets'), 404, 'space.not_found')
  })
})

describe('OpenAPI', () => {
  it('documents the routes of this area: strict bodies, except /modify which drops unknown keys', async () => {
    const doc = (await call(b.app, 'GET', '/v1/openapi.json')).json<{ paths: Record<string, Record<string, Record<string, unknown>>> }>()
    const op = (method: string, path: string) => doc.paths[path]?.[method]
    expect(op('post', '/v1/spaces/{spaceId}/modify')).toMatchObject({ 'x-strict': false, 'x-unknown-keys': 'drop' })
    for (const [m, p] of [
      ['post', '/v1/spaces'],
      ['put', '/v1/account/metadata'],
      ['post', '/v1/spaces/query'],
      ['post', '/v1/spaces/query/subscribe'],
      ['patch', '/v1/spaces/{spaceId}/settings'],
      ['post', '/v1/spaces/{spaceId}/objects'],
      ['post', '/v1/spaces/{spaceId}/objects/query'],
      ['post', '/v1/spaces/{spaceId}/objects/query/subscribe'],
      ['post', '/v1/spaces/{spaceId}/query'],
      ['post', '/v1/spaces/{spaceId}/query/subscribe'],
      ['post', '/v1/spaces/{spaceId}/upsert'],
      ['post', '/v1/spaces/{spaceId}/delete-records'],
      ['post', '/v1/spaces/{spaceId}/types'],
      ['post', '/v1/spaces/{spaceId}/types/{typeId}/properties'],
      ['post', '/v1/spaces/{spaceId}/types/{typeId}/parts/{partId}/datasets'],
    ]) {
      expect(op(m, p), `${m} ${p}`).toMatchObject({ 'x-strict': true })
    }
    for (const [m, p] of [
      ['get', '/v1/account'],
      ['get', '/v1/identities'],
      ['get', '/v1/identities/{identity}'],
      ['get', '/v1/spaces/derived'],
      ['post', '/v1/spaces/derived/{name}'],
      ['get', '/v1/datasets'],
      ['get', '/v1/spaces/{spaceId}/datasets'],
      ['post', '/v1/spaces/{spaceId}/sync'],
      ['delete', '/v1/spaces/{spaceId}/objects/{objectId}'],
      ['get', '/v1/spaces/{spaceId}/objects/{objectId}/backlinks'],
      ['post', '/v1/spaces/{spaceId}/properties/{objectId}/set/{typeKey}'],
    ]) {
      expect(op(m, p), `${m} ${p}`).toBeDefined()
    }
  })
})
