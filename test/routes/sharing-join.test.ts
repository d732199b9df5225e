import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { bootApp, call, expectError, newObject, newSpace, ok, type Booted } from './helpers.ts'
import { deliverJoins, exchange, offer } from './sharing-helpers.ts'

let a: Booted // owner
let b: Booted // joiner
let c: Booted // a writer (no manager)
beforeAll(async () => {
  ;[a, b, c] = await Promise.all([bootApp(), bootApp(), bootApp()])
})
afterAll(async () => {
  await Promise.all([a.close(), b.close(), c.close()])
})

type Member = { identity: string; role: string; status: string; name: string; request?: { recordId: string; status: string; permission: string } }
const members = async (x: Booted, s: string, all = false) => (await ok<{ members: Member[] }>(call(x.app, 'GET', `/v1/spaces/${s}/members${all ? '?status=all' : ''}`))).members
const info = (x: Booted, s: string) => ok<{ status: string; ownRole: string }>(call(x.app, 'GET', `/v1/spaces/${s}`))
const row = async (x: Booted, s: string) => (await ok<{ records: Array<Record<string, unknown>> }>(call(x.app, 'POST', '/v1/spaces/query', { filter: { id: s } }))).records[0]
const invite = async (x: Booted, s: string, permission = 'writer') =>
  (await ok<{ inviteToken: string }>(call(x.app, 'POST', `/v1/spaces/${s}/invites`, { permission }), 201)).inviteToken
const join = (x: Booted, inviteToken: string, metadata?: object) => call(x.app, 'POST', '/v1/spaces/join', { inviteToken, ...(metadata ? { metadata } : {}) })
const named = (name: string) => ({ initialProperties: { core: { name } } })

describe('invites', () => {
  it('create replaces any prior invite; list, get, revoke one, revoke all; tokens only on the minting account', async () => {
    const s = await newSpace(a.app, 'Invites')
    const first = await ok(call(a.app, 'POST', `/v1/spaces/${s}/invites`), 201)
    expect(first).toEqual({ spaceId: s, inviteToken: expect.any(String) })
    const second = await ok(call(a.app, 'POST', `/v1/spaces/${s}/invites`, { permission: 'writer' }), 201)
    const list = (await ok<{ invites: Array<{ recordId: string; permission: string; inviteToken?: string }> }>(call(a.app, 'GET', `/v1/spaces/${s}/invites`))).invites
    expect(list).toEqual([{ recordId: expect.any(String), permission: 'writer', inviteToken: second.inviteToken }])
    expect(first.inviteToken).not.toBe(second.inviteToken)
    expect(await ok(call(a.app, 'GET', `/v1/spaces/${s}/invites/${list[0].recordId}`))).toEqual(list[0])
    expectError(await call(a.app, 'GET', `/v1/spaces/${s}/invites/nope`), 404, 'invite.not_found')
    await ok(call(a.app, 'DELETE', `/v1/spaces/${s}/invites/${list[0].recordId}`), 204)
    expectError(await call(a.app, 'DELETE', `/v1/spaces/${s}/invites/${list[0].recordId}`), 404, 'invite.not_found')
    expect((await ok(call(a.app, 'GET', `/v1/spaces/${s}/invites`))).invites).toEqual([])
    // The token left the tech space with its invite.
    const tokens = await a.engine.account().tech.replica.listRecords(a.engine.account().techObject, 'invites')
    expect(tokens.filter((t) => !t.deleted && (t.value as { spaceId: string }).spaceId === s)).toEqual([])

    await invite(a, s)
    await ok(call(a.app, 'DELETE', `/v1/spaces/${s}/invites`), 204)
    await ok(call(a.app, 'DELETE', `/v1/spaces/${s}/invites`), 204)
    expect((await ok(call(a.app, 'GET', `/v1/spaces/${s}/invites`))).invites).toEqual([])
    expectError(await call(a.app, 'POST', `/v1/spaces/${s}/invites`, { permission: 'admin' }), 400, 'request.invalid_field')
    expectError(await call(a.app, 'POST', '/v1/spaces/nope/invites', {}), 404, 'space.not_found')

    // A writer is no manager: 403 acl.forbidden; it sees the live invites without their tokens.
    await ok(call(a.app, 'POST', `/v1/spaces/${s}/acl/add`, { identities: [c.accountId], permission: 'writer' }))
    const token = await invite(a, s)
    await offer(a, c, s)
    await ok(call(c.app, 'POST', `/v1/spaces/${s}/invite/accept`))
    expectError(await call(c.app, 'POST', `/v1/spaces/${s}/invites`, {}), 403, 'acl.forbidden')
    expectError(await call(c.app, 'DELETE', `/v1/spaces/${s}/invites`), 403, 'acl.forbidden')
    const seen = (await ok(call(c.app, 'GET', `/v1/spaces/${s}/invites`))).invites
    expect(seen).toEqual([{ recordId: expect.any(String), permission: 'writer' }])
    expect(token).not.toContain(seen[0].recordId)
  })
})

describe('join, accept, decline, withdraw', () => {
  it('join answers 202 with a joining row; the request appears as a pending member; accept makes the joiner active', async () => {
    const s = await newSpace(a.app, 'Joinable')
    const o = await newObject(a.app, s, named('hello'))
    const token = await invite(a, s)
    const res = await join(b, token, { name: 'Bob' })
    expect(res.statusCode).toBe(202)
    expect(res.json()).toMatchObject({ id: s, status: 'joining', ownRole: 'none' })
    expect((await ok<Array<{ id: string }>>(call(b.app, 'GET', '/v1/spaces?status=joining'))).map((r) => r.id)).toContain(s)
    expect(await ok(call(b.app, 'GET', `/v1/spaces/${s}/members/me`))).toMatchObject({ identity: b.accountId, status: 'pending', role: 'none' })
    // Content routes wait for the approval.
    expectError(await call(b.app, 'POST', `/v1/spaces/${s}/objects/query`, {}), 409, 'space.not_accepted')
    expectError(await call(b.app, 'GET', `/v1/spaces/${s}/members`), 409, 'space.not_accepted')
    // Joining again with the same token is the same request.
    expect((await join(b, token)).statusCode).toBe(202)

    expect(await deliverJoins(b, a, s)).toEqual(['pending'])
    const pending = (await members(a, s)).find((m) => m.identity === b.accountId)!
    expect(pending).toMatchObject({ role: 'none', status: 'pending', name: 'Bob', request: { status: 'pending', permission: 'writer' } })

    const accepted = await ok(call(a.app, 'POST', `/v1/spaces/${s}/acl/accept`, { request: pending.request!.recordId }))
    expect(accepted).toMatchObject({ identity: b.accountId, role: 'writer', status: 'active' })
    expectError(await call(a.app, 'POST', `/v1/spaces/${s}/acl/accept`, { identity: b.accountId }), 409, 'space.join_not_pending')
    expect(await deliverJoins(b, a, s)).toEqual(['accepted'])
    expect(await ok(call(b.app, 'GET', `/v1/spaces/${s}/members/me`))).toMatchObject({ status: 'pending' })
    expectError(await call(b.app, 'POST', `/v1/spaces/${s}/acl/cancel-join`), 409, 'space.join_not_pending')

    await exchange(a, b, s)
    expect(await info(b, s)).toMatchObject({ status: 'active', ownRole: 'writer' })
    expect(await ok(call(b.app, 'GET', `/v1/spaces/${s}/members/me`))).toMatchObject({ status: 'active', role: 'writer', name: 'Bob' })
    const found = await ok(call(b.app, 'POST', `/v1/spaces/${s}/objects/query`, { filter: { id: o } }))
    expect(found.records[0].core.name).toBe('hello')
    // A member joining again: the space exists here, nothing to join (spec: 409 space.exists).
    expect(expectError(await join(b, token), 409, 'space.exists')).toMatchObject({ spaceId: s, role: 'writer' })
    expect(await info(b, s)).toMatchObject({ status: 'active', ownRole: 'writer' })

    // After the account deletes the space, a token of it is 409 space.deleted.
    await ok(call(b.app, 'DELETE', `/v1/spaces/${s}`), 204)
    expectError(await join(b, await invite(a, s)), 409, 'space.deleted')
  })

  it('a declined join deletes the row (reason declined); a later join re-requests', async () => {
    const s = await newSpace(a.app, 'Declines')
    expect((await join(b, await invite(a, s))).statusCode).toBe(202)
    await deliverJoins(b, a, s)
    await ok(call(a.app, 'POST', `/v1/spaces/${s}/acl/decline`, { identity: b.accountId }), 204)
    expectError(await call(a.app, 'POST', `/v1/spaces/${s}/acl/decline`, { identity: b.accountId }), 409, 'space.join_not_pending')
    expect((await members(a, s, true)).find((m) => m.identity === b.accountId)).toMatchObject({ status: 'declined' })
    expect((await members(a, s)).map((m) => m.identity)).toEqual([a.accountId])

    expect(await deliverJoins(b, a, s)).toEqual(['declined'])
    expect(await row(b, s)).toMatchObject({ status: 'deleted', deletedReason: 'declined' })
    expect(await ok(call(b.app, 'GET', `/v1/spaces/${s}/members/me`))).toMatchObject({ status: 'declined' })
    expectError(await call(b.app, 'POST', `/v1/spaces/${s}/acl/cancel-join`), 409, 'space.join_not_pending')

    const res = await join(b, await invite(a, s))
    expect(res.statusCode).toBe(202)
    expect(await row(b, s)).toMatchObject({ status: 'joining' })
    expect((await row(b, s)).deletedReason).toBeUndefined()
  })

  it('cancel-join withdraws a pending join (reason withdrawn); the owner sees it cancelled; a later join re-requests', async () => {
    const s = await newSpace(a.app, 'Withdrawn')
    const token = await invite(a, s)
    await join(b, token)
    await deliverJoins(b, a, s)
    await ok(call(b.app, 'POST', `/v1/spaces/${s}/acl/cancel-join`), 204)
    expect(await row(b, s)).toMatchObject({ status: 'deleted', deletedReason: 'withdrawn' })
    expect(await ok(call(b.app, 'GET', `/v1/spaces/${s}/members/me`))).toMatchObject({ status: 'cancelled' })
    expectError(await call(b.app, 'POST', `/v1/spaces/${s}/acl/cancel-join`), 409, 'space.join_not_pending')
    expect(await deliverJoins(b, a, s)).toEqual(['cancelled'])
    // Answered: the cancel is not sent again.
    expect(await deliverJoins(b, a, s)).toEqual([])
    expect((await members(a, s, true)).find((m) => m.identity === b.accountId)).toMatchObject({ status: 'cancelled' })
    expectError(await call(a.app, 'POST', `/v1/spaces/${s}/acl/accept`, { identity: b.accountId }), 409, 'space.join_not_pending')

    expect((await join(b, token)).statusCode).toBe(202)
    expect(await deliverJoins(b, a, s)).toEqual(['pending'])
    // DELETE {S} of a joining row withdraws it too (a cancel goes out): no sticky tombstone.
    await ok(call(b.app, 'DELETE', `/v1/spaces/${s}`), 204)
    const r = await row(b, s)
    expect(r).toMatchObject({ status: 'deleted', deletedReason: 'withdrawn' })
    expect(r.deletedAt).toBeUndefined()
    expect(await deliverJoins(b, a, s)).toEqual(['cancelled'])
    expect((await members(a, s)).map((m) => m.identity)).toEqual([a.accountId])
    expect((await join(b, token)).statusCode).toBe(202)
  })

  it('a token for a space the account was added to directly accepts that invite (202, the spec join answer)', async () => {
    const s = await newSpace(a.app, 'Both ways')
    const token = await invite(a, s)
    await ok(call(a.app, 'POST', `/v1/spaces/${s}/acl/add`, { identities: [b.accountId], permission: 'reader' }))
    await offer(a, b, s)
    expect((await info(b, s)).status).toBe('invite_pending')
    const res = await join(b, token)
    expect(res.statusCode).toBe(202)
    expect(res.json()).toMatchObject({ status: 'active', ownRole: 'reader' })
    expect(await deliverJoins(b, a, s)).toEqual([])
  })

  it('bad tokens and request bodies', async () => {
    const s = await newSpace(a.app)
    expectError(await join(b, 'garbage'), 400, 'invite.invalid')
    expectError(await join(b, ''), 400, 'invite.invalid')
    expectError(await join(b, 'x'.repeat(5000)), 400, 'invite.invalid')
    expectError(await call(b.app, 'POST', '/v1/spaces/join', {}), 400, 'request.missing_field')
    expectError(await call(b.app, 'POST', '/v1/spaces/join', { inviteToken: 'x', extra: 1 }), 400, 'request.unknown_field')
    expectError(await join(b, await invite(a, s), { name: 5 }), 400, 'request.invalid_field')
    expectError(await call(a.app, 'POST', `/v1/spaces/${s}/acl/accept`, { request: 'nope' }), 404, 'acl.request_not_found')
    expectError(await call(a.app, 'POST', `/v1/spaces/${s}/acl/decline`, { identity: c.accountId }), 404, 'acl.request_not_found')
    expectError(await call(a.app, 'POST', `/v1/spaces/${s}/acl/accept`, {}), 400, 'request.missing_field')
    expectError(await call(a.app, 'POST', `/v1/spaces/${s}/acl/accept`, { request: 'a', identity: c.accountId }), 400, 'request.invalid_field')
    expectError(await call(b.app, 'POST', '/v1/spaces/nope/acl/cancel-join'), 404, 'space.not_found')
    expectError(await call(a.app, 'POST', `/v1/spaces/${s}/acl/cancel-join`), 409, 'space.join_not_pending')
    // Not a manager of the space.
    await deliverJoins(b, a, s)
    await ok(call(a.app, 'POST', `/v1/spaces/${s}/acl/add`, { identities: [c.accountId], permission: 'writer' }))
    await offer(a, c, s)
    await ok(call(c.app, 'POST', `/v1/spaces/${s}/invite/accept`))
    expectError(await call(c.app, 'POST', `/v1/spaces/${s}/acl/accept`, { identity: b.accountId }), 403, 'acl.forbidden')
    expectError(await call(c.app, 'POST', `/v1/spaces/${s}/acl/decline`, { identity: b.accountId }), 403, 'acl.forbidden')
  })
})

describe('guest key', () => {
  it('owner only, same token on repeat; a guest token joins as guest (auto-accepted), reads, writes nothing', async () => {
    const s = await newSpace(a.app, 'Guests')
    const o = await newObject(a.app, s, named('for guests'))
    const g1 = await ok(call(a.app, 'POST', `/v1/spaces/${s}/guest-key`))
    expect(g1).toEqual({ spaceId: s, inviteToken: expect.any(String) })
    expect(await ok(call(a.app, 'POST', `/v1/spaces/${s}/guest-key`))).toEqual(g1)
    // A member invite does not replace the guest key.
    await invite(a, s)
    expect(await ok(call(a.app, 'POST', `/v1/spaces/${s}/guest-key`))).toEqual(g1)
    expect((await ok(call(a.app, 'GET', `/v1/spaces/${s}/invites`))).invites.map((i: { permission: string }) => i.permission).sort()).toEqual(['guest', 'writer'])

    await ok(call(a.app, 'POST', `/v1/spaces/${s}/acl/add`, { identities: [c.accountId], permission: 'admin' }))
    await offer(a, c, s)
    await ok(call(c.app, 'POST', `/v1/spaces/${s}/invite/accept`))
    expectError(await call(c.app, 'POST', `/v1/spaces/${s}/guest-key`), 403, 'acl.forbidden')
    expectError(await call(c.app, 'DELETE', `/v1/spaces/${s}/guest-key`), 403, 'acl.forbidden')
    const guestInvite = (await ok(call(a.app, 'GET', `/v1/spaces/${s}/invites`))).invites.find((i: { permission: string }) => i.permission === 'guest')
    expectError(await call(c.app, 'DELETE', `/v1/spaces/${s}/invites/${guestInvite.recordId}`), 403, 'acl.forbidden')

    expect((await join(b, g1.inviteToken)).statusCode).toBe(202)
    expect(await deliverJoins(b, a, s)).toEqual(['accepted'])
    await exchange(a, b, s)
    expect(await info(b, s)).toMatchObject({ status: 'active', ownRole: 'guest' })
    expectError(await call(b.app, 'POST', `/v1/spaces/${s}/objects`, named('no')), 403, 'space.read_only')
    // A guest token of a space already read: the guest again, or the owner itself (spec: 409 space.exists).
    expectError(await join(b, g1.inviteToken), 409, 'space.exists')
    expectError(await join(a, g1.inviteToken), 409, 'space.exists')

    // Revoke: the guest is removed, the key rotates; its copy stays readable; old tokens die.
    await ok(call(a.app, 'DELETE', `/v1/spaces/${s}/guest-key`), 204)
    await ok(call(a.app, 'DELETE', `/v1/spaces/${s}/guest-key`), 204)
    await exchange(a, b, s)
    expect(await info(b, s)).toMatchObject({ status: 'guest_revoked', ownRole: 'none' })
    expect((await ok(call(b.app, 'POST', `/v1/spaces/${s}/objects/query`, { filter: { id: o } }))).records[0].core.name).toBe('for guests')
    const g2 = await ok(call(a.app, 'POST', `/v1/spaces/${s}/guest-key`))
    expect(g2.inviteToken).not.toBe(g1.inviteToken)

    // The guest drops its copy: deleted, not sticky; the old token asks but no peer answers it.
    await ok(call(b.app, 'DELETE', `/v1/spaces/${s}`), 204)
    expect(await row(b, s)).toMatchObject({ status: 'deleted', deletedReason: 'deleted' })
    expect((await join(b, g1.inviteToken)).statusCode).toBe(202)
    expect(await deliverJoins(b, a, s)).toEqual([undefined])
    // The fresh token re-adds it.
    expect((await join(b, g2.inviteToken)).statusCode).toBe(202)
    expect(await deliverJoins(b, a, s)).toEqual(['accepted'])
    await exchange(a, b, s)
    expect(await info(b, s)).toMatchObject({ status: 'active', ownRole: 'guest' })
  })
})

describe('DELETE {S}', () => {
  it('a derived space answers 409 space.derived_undeletable; an unknown one 404', async () => {
    const d = await ok(call(a.app, 'POST', '/v1/spaces/derived/personal'), 201)
    expectError(await call(a.app, 'DELETE', `/v1/spaces/${d.id}`), 409, 'space.derived_undeletable')
    expectError(await call(a.app, 'DELETE', '/v1/spaces/nope'), 404, 'space.not_found')
  })
})
