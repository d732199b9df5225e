import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { bootApp, call, expectError, listen, newObject, newSpace, ok, openSse, type Booted } from './helpers.ts'
import { bootAccount, eventually, exchange, offer } from './sharing-helpers.ts'
import { idFor } from '../helpers.ts'

let a: Booted // owner
let b: Booted
let c: Booted
beforeAll(async () => {
  ;[a, b, c] = await Promise.all([bootApp(), bootApp(), bootApp()])
})
afterAll(async () => {
  await Promise.all([a.close(), b.close(), c.close()])
})

const members = async (x: Booted, s: string, all = false) =>
  (await ok<{ members: Array<{ identity: string; role: string; status: string; self: boolean }> }>(call(x.app, 'GET', `/v1/spaces/${s}/members${all ? '?status=all' : ''}`)))
    .members
const ids = (list: Array<{ identity: string; status: string }>, status = 'active') => list.filter((m) => m.status === status).map((m) => m.identity)
/** The object's name as `x` reads it, or undefined when it cannot. */
async function nameOf(x: Booted, s: string, objectId: string): Promise<string | undefined> {
  const res = await ok<{ records: Array<{ core: { name?: string } }> }>(call(x.app, 'POST', `/v1/spaces/${s}/objects/query`, { filter: { id: objectId } }))
  return res.records[0]?.core.name
}
const named = (name: string) => ({ initialProperties: { core: { name } } })
const rename = (s: string, objectId: string) => ({ objectId, dataset: 'notes', records: [{ id: 'n1', ops: [{ type: '$set', path: 'text', value: 'x' }] }] })
const statusOf = async (x: Booted, s: string) => await ok<{ status: string; ownRole: string }>(call(x.app, 'GET', `/v1/spaces/${s}`))

describe('direct add: invite_pending, accept, decline', () => {
  it('acl/add puts the account on the ACL; its offer leaves an invite_pending row; accept makes it active (200)', async () => {
    const s = await newSpace(a.app, 'Shared')
    expect(await ok(call(a.app, 'POST', `/v1/spaces/${s}/acl/add`, { identities: [b.accountId], permission: 'writer' }))).toEqual({ added: [b.accountId], unchanged: [] })
    expect(await ok(call(a.app, 'POST', `/v1/spaces/${s}/acl/add`, { identities: [b.accountId], permission: 'reader' }))).toEqual({ added: [], unchanged: [b.accountId] })
    expect(ids(await members(a, s))).toEqual([a.accountId, b.accountId])

    await offer(a, b, s)
    const pending = await ok<Array<{ id: string; status: string }>>(call(b.app, 'GET', '/v1/spaces?status=invite_pending'))
    expect(pending.map((r) => r.id)).toEqual([s])
    expect(await ok(call(b.app, 'GET', `/v1/spaces/${s}/members/me`))).toMatchObject({ identity: b.accountId, role: 'writer', status: 'invited', self: true })
    expectError(await call(b.app, 'POST', `/v1/spaces/${s}/objects/query`, {}), 403, 'space.not_joined')

    const accepted = await call(b.app, 'POST', `/v1/spaces/${s}/invite/accept`)
    expect(accepted.statusCode).toBe(200)
    expect(accepted.json()).toMatchObject({ id: s, status: 'active', ownRole: 'writer', author: a.accountId, name: 'Shared' })
    expectError(await call(b.app, 'POST', `/v1/spaces/${s}/invite/accept`), 409, 'space.not_invite_pending')
    expectError(await call(b.app, 'POST', `/v1/spaces/${s}/invite/decline`), 409, 'space.not_invite_pending')
    expect(await ok(call(b.app, 'GET', `/v1/spaces/${s}/members/me`))).toMatchObject({ status: 'active', role: 'writer' })

    // The writer's writes reach the owner.
    const o = await newObject(b.app, s, named('from b'))
    await exchange(b, a, s)
    expect(await nameOf(a, s, o)).toBe('from b')
  })

  it('invite/decline is sticky for that add, non-terminal for a later one; DELETE of a pending row declines', async () => {
    const s = await newSpace(a.app, 'Declined')
    await ok(call(a.app, 'POST', `/v1/spaces/${s}/acl/add`, { identities: [b.accountId], permission: 'reader' }))
    await offer(a, b, s)
    expect((await statusOf(b, s)).status).toBe('invite_pending')
    await ok(call(b.app, 'POST', `/v1/spaces/${s}/invite/decline`), 204)
    expect((await statusOf(b, s)).status).toBe('deleted')
    expectError(await call(b.app, 'POST', `/v1/spaces/${s}/invite/accept`), 409, 'space.not_invite_pending')

    // The same add offered again: still declined.
    await b.engine.account().sharing.offered(s, a.accountId)
    await exchange(a, b, s)
    expect((await statusOf(b, s)).status).toBe('deleted')

    // Removed and added again: a new add re-offers the space.
    await ok(call(a.app, 'DELETE', `/v1/spaces/${s}/members/${b.accountId}`), 204)
    await ok(call(a.app, 'POST', `/v1/spaces/${s}/acl/add`, { identities: [b.accountId], permission: 'reader' }))
    await offer(a, b, s)
    expect((await statusOf(b, s)).status).toBe('invite_pending')

    // DELETE {S} of a pending row is a decline, not a sticky tombstone.
    await ok(call(b.app, 'DELETE', `/v1/spaces/${s}`), 204)
    const row = (
      await ok<{ records: Array<{ id: string; status: string; deletedReason?: string; deletedAt?: unknown }> }>(call(b.app, 'POST', '/v1/spaces/query', { filter: { id: s } }))
    ).records[0]
    expect(row).toMatchObject({ status: 'deleted', deletedReason: 'declined' })
    expect(row.deletedAt).toBeUndefined()
  })

  it('invite accept and decline: 404 space.not_found for an unknown space', async () => {
    expectError(await call(b.app, 'POST', '/v1/spaces/nope/invite/accept'), 404, 'space.not_found')
    expectError(await call(b.app, 'POST', '/v1/spaces/nope/invite/decline'), 404, 'space.not_found')
    expectError(await call(b.app, 'GET', '/v1/spaces/nope/members/me'), 404, 'space.not_found')
    expectError(await call(b.app, 'GET', '/v1/spaces/nope/members'), 404, 'space.not_found')
  })

  it('acl/add body: identities must be keys, not the caller, at most 100; admin only by the owner', async () => {
    const s = await newSpace(a.app)
    expectError(await call(a.app, 'POST', `/v1/spaces/${s}/acl/add`, { identities: ['not-base58-0OIl'], permission: 'reader' }), 400, 'request.invalid_field')
    expectError(await call(a.app, 'POST', `/v1/spaces/${s}/acl/add`, { identities: [a.accountId], permission: 'reader' }), 400, 'request.invalid_field')
    expectError(await call(a.app, 'POST', `/v1/spaces/${s}/acl/add`, { identities: [], permission: 'reader' }), 400, 'request.invalid_field')
    expectError(await call(a.app, 'POST', `/v1/spaces/${s}/acl/add`, { identities: [b.accountId], permission: 'owner' }), 400, 'request.invalid_field')
    expectError(await call(a.app, 'POST', `/v1/spaces/${s}/acl/add`, { identities: [b.accountId] }), 400, 'request.missing_field')
    expectError(await call(a.app, 'POST', `/v1/spaces/${s}/acl/add`, { identities: [b.accountId], permission: 'reader', role: 'x' }), 400, 'request.unknown_field')
  })
})

describe('members: list, role, remove, permission rules', () => {
  let s: string
  beforeAll(async () => {
    s = await newSpace(a.app, 'Team')
    await ok(call(a.app, 'POST', `/v1/spaces/${s}/acl/add`, { identities: [b.accountId], permission: 'admin' }))
    await ok(call(a.app, 'POST', `/v1/spaces/${s}/acl/add`, { identities: [c.accountId], permission: 'writer' }))
    await offer(a, b, s)
    await offer(a, c, s)
    await ok(call(b.app, 'POST', `/v1/spaces/${s}/invite/accept`))
    await ok(call(c.app, 'POST', `/v1/spaces/${s}/invite/accept`))
  })

  it('GET {S}/members: owner first, then by role; every member sees the same list', async () => {
    const list = await members(a, s)
    expect(list.map((m) => [m.identity, m.role, m.status])).toEqual([
      [a.accountId, 'owner', 'active'],
      [b.accountId, 'admin', 'active'],
      [c.accountId, 'writer', 'active'],
    ])
    expect(list.find((m) => m.self)!.identity).toBe(a.accountId)
    const fromC = await members(c, s)
    expect(fromC.map((m) => [m.identity, m.role])).toEqual(list.map((m) => [m.identity, m.role]))
    expectError(await call(a.app, 'GET', `/v1/spaces/${s}/members?status=removed`), 400, 'request.invalid_field')
  })

  it('only managers change roles (403 acl.forbidden); only the owner grants admin; the owner and oneself are not targets', async () => {
    expectError(await call(c.app, 'PATCH', `/v1/spaces/${s}/members/${b.accountId}`, { role: 'reader' }), 403, 'acl.forbidden')
    expectError(await call(c.app, 'POST', `/v1/spaces/${s}/acl/add`, { identities: [a.accountId], permission: 'reader' }), 403, 'acl.forbidden')
    expectError(await call(c.app, 'DELETE', `/v1/spaces/${s}/members/${b.accountId}`), 403, 'acl.forbidden')
    // b is an admin, not the owner.
    expectError(await call(b.app, 'PATCH', `/v1/spaces/${s}/members/${c.accountId}`, { role: 'admin' }), 403, 'acl.forbidden')
    expectError(await call(b.app, 'PATCH', `/v1/spaces/${s}/members/${a.accountId}`, { role: 'reader' }), 403, 'acl.forbidden')
    expectError(await call(b.app, 'PATCH', `/v1/spaces/${s}/members/${b.accountId}`, { role: 'reader' }), 403, 'acl.forbidden')
    expectError(await call(a.app, 'PATCH', `/v1/spaces/${s}/members/${a.accountId}`, { role: 'reader' }), 403, 'acl.forbidden')
    expectError(await call(a.app, 'PATCH', `/v1/spaces/${s}/members/${'1'.repeat(44)}`, { role: 'reader' }), 404, 'member.not_found')
    expectError(await call(a.app, 'PATCH', `/v1/spaces/${s}/members/${c.accountId}`, { role: 'owner' }), 400, 'request.invalid_field')
    expectError(await call(a.app, 'PATCH', `/v1/spaces/${s}/members/${c.accountId}`, {}), 400, 'request.missing_field')
    expectError(await call(a.app, 'PATCH', '/v1/spaces/nope/members/x', { role: 'reader' }), 404, 'space.not_found')
  })

  it('an admin demotes a writer to reader: the reader writes nothing (403 space.read_only, before anything is sealed)', async () => {
    await ok(call(b.app, 'PATCH', `/v1/spaces/${s}/members/${c.accountId}`, { role: 'reader' }), 204)
    await exchange(b, c, s)
    expect((await statusOf(c, s)).ownRole).toBe('reader')
    const space = c.engine.account().space(s)
    const before = (await space.replica.allChanges()).length
    expectError(await call(c.app, 'POST', `/v1/spaces/${s}/objects`, named('nope')), 403, 'space.read_only')
    expectError(await call(c.app, 'PATCH', `/v1/spaces/${s}`, { name: 'renamed' }), 403, 'space.read_only')
    expectError(await call(c.app, 'POST', `/v1/spaces/${s}/bundles`, { id: 'notes/v1', name: 'Notes', derived: true }), 403, 'space.read_only')
    expectError(await call(c.app, 'POST', `/v1/spaces/${s}/bundles`, { id: 'plain/v1', name: 'Plain' }), 403, 'space.read_only')
    expect((await space.replica.allChanges()).length).toBe(before)
    // Account-private settings stay writable.
    await ok(call(c.app, 'PATCH', `/v1/spaces/${s}/settings`, { set: { notifyMode: 'none' } }), 204)
  })

  it('remove rotates the read key; the removed member keeps its copy, reads nothing new; only the owner removes an admin', async () => {
    expectError(await call(b.app, 'DELETE', `/v1/spaces/${s}/members/${a.accountId}`), 403, 'acl.forbidden')
    await exchange(b, a, s)
    const keyBefore = a.engine.account().space(s).replica.acl.current().readKeyId
    await ok(call(a.app, 'DELETE', `/v1/spaces/${s}/members/${c.accountId}`), 204)
    expect(a.engine.account().space(s).replica.acl.current().readKeyId).not.toBe(keyBefore)
    expectError(await call(a.app, 'DELETE', `/v1/spaces/${s}/members/${c.accountId}`), 404, 'member.not_found')
    expect(ids(await members(a, s))).toEqual([a.accountId, b.accountId])
    expect(ids(await members(a, s, true), 'removed')).toEqual([c.accountId])

    const secret = await newObject(a.app, s, named('after removal'))
    await exchange(a, c, s)
    expect(await statusOf(c, s)).toMatchObject({ status: 'active', ownRole: 'none' })
    expect(await nameOf(c, s, secret)).toBeUndefined()
    const newest = a.engine.account().space(s).replica.acl.current().readKeyId!
    expect(c.engine.account().space(s).replica.keyring.get(newest)).toBeUndefined()
    expect(await ok(call(c.app, 'GET', `/v1/spaces/${s}/members/me`))).toMatchObject({ status: 'removed', role: 'none' })

    await ok(call(a.app, 'DELETE', `/v1/spaces/${s}/members/${b.accountId}`), 204)
  })
})

describe('member names', () => {
  it("a member's profile, once its key is readable, names it in the list", async () => {
    const s = await newSpace(a.app, 'Named')
    await ok(call(a.app, 'POST', `/v1/spaces/${s}/acl/add`, { identities: [b.accountId], permission: 'reader' }))
    await offer(a, b, s)
    await ok(call(b.app, 'POST', `/v1/spaces/${s}/invite/accept`))
    expect((await members(a, s)).find((m) => m.identity === b.accountId)).toMatchObject({ name: '' })
    await b.engine.account().space(s).replica.setProfile({ name: 'Bea', iconCid: 'bafyb' })
    await exchange(b, a, s)
    expect((await members(a, s)).find((m) => m.identity === b.accountId)).toMatchObject({ name: 'Bea', iconCid: 'bafyb' })
  })
})

describe('guest role', () => {
  it('a guest reads, writes nothing (403 space.read_only); its removal leaves guest_revoked, still readable; DELETE is non-terminal', async () => {
    const s = await newSpace(a.app, 'Guests')
    const o = await newObject(a.app, s, named('public note'))
    await a.engine.account().space(s).replica.addMember(b.accountId, 'guest')
    await offer(a, b, s)
    await ok(call(b.app, 'POST', `/v1/spaces/${s}/invite/accept`))
    expect(await statusOf(b, s)).toMatchObject({ status: 'active', ownRole: 'guest' })
    expectError(await call(b.app, 'POST', `/v1/spaces/${s}/objects`, named('x')), 403, 'space.read_only')
    expectError(await call(b.app, 'POST', `/v1/spaces/${s}/modify`, rename(s, o)), 403, 'space.read_only')
    expectError(await call(b.app, 'DELETE', `/v1/spaces/${s}/objects/${o}`), 403, 'space.read_only')
    expectError(await call(b.app, 'PATCH', `/v1/spaces/${s}`, { name: 'mine' }), 403, 'space.read_only')
    expectError(await call(b.app, 'PATCH', `/v1/spaces/${s}/members/${a.accountId}`, { role: 'reader' }), 403, 'acl.forbidden')

    await ok(call(a.app, 'DELETE', `/v1/spaces/${s}/members/${b.accountId}`), 204)
    await exchange(a, b, s)
    expect(await statusOf(b, s)).toMatchObject({ status: 'guest_revoked', ownRole: 'none' })
    expect(await nameOf(b, s, o)).toBe('public note')

    await ok(call(b.app, 'DELETE', `/v1/spaces/${s}`), 204)
    const row = (await ok<{ records: Array<Record<string, unknown>> }>(call(b.app, 'POST', '/v1/spaces/query', { filter: { id: s } }))).records[0]
    expect(row).toMatchObject({ status: 'deleted', deletedReason: 'deleted' })
    expect(row.deletedAt).toBeUndefined()
  })
})

describe('{S}/members/subscribe', () => {
  it('sends member frames added, changed, removed (previous null on added)', async () => {
    const s = await newSpace(a.app, 'Watched')
    const url = await listen(a.app)
    const sse = await openSse(`${url}/v1/spaces/${s}/members/subscribe`)
    await sse.until((f) => f.some((x) => x.event === 'ready'))
    await ok(call(a.app, 'POST', `/v1/spaces/${s}/acl/add`, { identities: [b.accountId], permission: 'reader' }))
    await ok(call(a.app, 'PATCH', `/v1/spaces/${s}/members/${b.accountId}`, { role: 'writer' }), 204)
    await ok(call(a.app, 'DELETE', `/v1/spaces/${s}/members/${b.accountId}`), 204)
    const frames = (await sse.until((f) => f.filter((x) => x.event === 'member').length >= 3)).filter((x) => x.event === 'member')
    expect(frames.map((f) => [f.data.kind, f.data.member.identity, f.data.member.role, f.data.previous?.role ?? null])).toEqual([
      ['added', b.accountId, 'reader', null],
      ['changed', b.accountId, 'writer', 'reader'],
      ['removed', b.accountId, 'none', 'writer'],
    ])
    expect(frames[2].data.member.status).toBe('removed')
    sse.destroy()
    expectError(await call(a.app, 'GET', '/v1/spaces/nope/members/subscribe'), 404, 'space.not_found')
  })

  it('more than 16 frames at once: the newest are dropped and counted in a lagged frame', async () => {
    const s = await newSpace(a.app, 'Crowded')
    await ok(call(a.app, 'POST', `/v1/spaces/${s}/acl/add`, { identities: [b.accountId], permission: 'reader' }))
    await offer(a, b, s)
    await ok(call(b.app, 'POST', `/v1/spaces/${s}/invite/accept`))
    const many = Array.from({ length: 20 }, (_, i) => idFor(100 + i))
    await ok(call(a.app, 'POST', `/v1/spaces/${s}/acl/add`, { identities: many, permission: 'reader' }))
    const url = await listen(b.app)
    const sse = await openSse(`${url}/v1/spaces/${s}/members/subscribe`)
    await sse.until((f) => f.some((x) => x.event === 'ready'))
    // One ingest of every add: one ACL move, twenty frames at once.
    await exchange(a, b, s)
    const frames = await sse.until((f) => f.some((x) => x.event === 'lagged'))
    expect(frames.filter((x) => x.event === 'member').length).toBe(16)
    expect(frames.find((x) => x.event === 'lagged')!.data).toEqual({ total: 4 })
    sse.destroy()
  })
})

describe('two devices of the invited account', () => {
  it('the invite_pending row reaches the other device; accepting there before the space content arrives is 202; a decline is synced', async () => {
    const b1 = await bootAccount()
    const b2 = await bootAccount({ mnemonic: b1.mnemonic! })
    try {
      expect(b2.accountId).toBe(b1.accountId)
      const tech = b1.engine.account().tech.spaceId
      const s = await newSpace(a.app, 'Two devices')
      await ok(call(a.app, 'POST', `/v1/spaces/${s}/acl/add`, { identities: [b1.accountId], permission: 'writer' }))
      await offer(a, b1, s)
      await exchange(b1, b2, tech)
      await eventually(async () => (await call(b2.app, 'GET', `/v1/spaces/${s}`)).json().status === 'invite_pending')
      // b2 holds the row but not the space's ACL and key yet.
      const accepted = await call(b2.app, 'POST', `/v1/spaces/${s}/invite/accept`)
      expect(accepted.statusCode).toBe(202)
      expect(accepted.json()).toMatchObject({ status: 'active' })
      await exchange(a, b2, s)
      expect((await ok(call(b2.app, 'GET', `/v1/spaces/${s}`))).ownRole).toBe('writer')

      const s2 = await newSpace(a.app, 'Declined on one device')
      await ok(call(a.app, 'POST', `/v1/spaces/${s2}/acl/add`, { identities: [b1.accountId], permission: 'reader' }))
      await offer(a, b1, s2)
      await exchange(b1, b2, tech)
      await eventually(async () => (await call(b2.app, 'GET', `/v1/spaces/${s2}`)).json().status === 'invite_pending')
      await ok(call(b2.app, 'POST', `/v1/spaces/${s2}/invite/decline`), 204)
      await exchange(b2, b1, tech)
      await eventually(async () => (await call(b1.app, 'GET', `/v1/spaces/${s2}`)).json().status === 'deleted')
      expectError(await call(b1.app, 'POST', `/v1/spaces/${s2}/invite/accept`), 409, 'space.not_invite_pending')
    } finally {
      await Promise.all([b1.close(), b2.close()])
    }
  })
})
