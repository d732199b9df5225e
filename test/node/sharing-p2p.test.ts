import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { call, ok } from '../routes/helpers.ts'
import { connectedPair, until, type P2PDaemon } from './p2p-daemons.ts'

/**
 * Two accounts' daemons with real libp2p on loopback (no mDNS), connected by address: the
 * sharing flows end to end over the wire, driven through the HTTP API.
 */
let a: P2PDaemon
let b: P2PDaemon
beforeAll(async () => {
  ;[a, b] = await connectedPair()
}, 60_000)
afterAll(async () => {
  await Promise.all([a?.close(), b?.close()])
})

const statusOf = async (x: P2PDaemon, s: string) => await ok<{ status: string; ownRole: string }>(call(x.app, 'GET', `/v1/spaces/${s}`))

describe('sharing over libp2p on loopback', () => {
  it('invite, join over the wire, the request reaches the owner, accept, the joiner becomes an active writer and syncs', async () => {
    const s = (await ok(call(a.app, 'POST', '/v1/spaces', { name: 'Over the wire' }), 201)).id as string
    const o = (await ok(call(a.app, 'POST', `/v1/spaces/${s}/objects`, { initialProperties: { core: { name: 'first' } } }), 201)).objectId as string
    const { inviteToken } = await ok(call(a.app, 'POST', `/v1/spaces/${s}/invites`, { permission: 'writer' }), 201)
    expect((await call(b.app, 'POST', '/v1/spaces/join', { inviteToken, metadata: { name: 'Bea' } })).statusCode).toBe(202)

    const request = await until('the request on the owner', async () =>
      (await ok(call(a.app, 'GET', `/v1/spaces/${s}/members`))).members.find((m: { status: string }) => m.status === 'pending'),
    )
    expect(request).toMatchObject({ identity: b.accountId, name: 'Bea', request: { permission: 'writer' } })
    await ok(call(a.app, 'POST', `/v1/spaces/${s}/acl/accept`, { identity: b.accountId }))

    await until('the joiner active', async () => (await statusOf(b, s)).status === 'active')
    expect(await statusOf(b, s)).toMatchObject({ ownRole: 'writer' })
    await until('the first object on the joiner', async () => {
      const r = await ok(call(b.app, 'POST', `/v1/spaces/${s}/objects/query`, { filter: { id: o } }))
      return r.records[0]?.core.name === 'first'
    })
    // The joiner's write reaches the owner.
    const mine = (await ok(call(b.app, 'POST', `/v1/spaces/${s}/objects`, { initialProperties: { core: { name: 'from b' } } }), 201)).objectId
    await until('the joiner write on the owner', async () => {
      const r = await ok(call(a.app, 'POST', `/v1/spaces/${s}/objects/query`, { filter: { id: mine } }))
      return r.records[0]?.core.name === 'from b'
    })
  }, 60_000)

  it('a declined join settles the joiner row as deleted (reason declined) over the wire; a guest key join is auto-accepted and read-only', async () => {
    const s = (await ok(call(a.app, 'POST', '/v1/spaces', { name: 'Declines and guests' }), 201)).id as string
    const { inviteToken } = await ok(call(a.app, 'POST', `/v1/spaces/${s}/invites`, {}), 201)
    expect((await call(b.app, 'POST', '/v1/spaces/join', { inviteToken })).statusCode).toBe(202)
    await until('the request on the owner', async () => (await ok(call(a.app, 'GET', `/v1/spaces/${s}/members`))).members.some((m: { status: string }) => m.status === 'pending'))
    await ok(call(a.app, 'POST', `/v1/spaces/${s}/acl/decline`, { identity: b.accountId }), 204)
    await until('the joiner told', async () => (await statusOf(b, s)).status === 'deleted', 20_000)
    expect((await ok(call(b.app, 'GET', `/v1/spaces/${s}/members/me`))).status).toBe('declined')

    const guest = await ok(call(a.app, 'POST', `/v1/spaces/${s}/guest-key`))
    expect((await call(b.app, 'POST', '/v1/spaces/join', { inviteToken: guest.inviteToken })).statusCode).toBe(202)
    await until('the guest active', async () => (await statusOf(b, s)).status === 'active', 20_000)
    expect((await statusOf(b, s)).ownRole).toBe('guest')
    const res = await call(b.app, 'POST', `/v1/spaces/${s}/objects`, { initialProperties: { core: { name: 'no' } } })
    expect(res.statusCode).toBe(403)
    expect(res.json().error.code).toBe('space.read_only')
  }, 60_000)

  it('direct add: the added account gets an invite_pending row through an offer, and accepts', async () => {
    const s = (await ok(call(a.app, 'POST', '/v1/spaces', { name: 'Added' }), 201)).id as string
    await ok(call(a.app, 'POST', `/v1/spaces/${s}/acl/add`, { identities: [b.accountId], permission: 'reader' }))
    await until('the invite_pending row', async () => (await ok(call(b.app, 'GET', '/v1/spaces?status=invite_pending'))).some((r: { id: string }) => r.id === s))
    const res = await call(b.app, 'POST', `/v1/spaces/${s}/invite/accept`)
    expect([200, 202]).toContain(res.statusCode)
    expect(res.json()).toMatchObject({ status: 'active', ownRole: 'reader' })
  }, 60_000)
})
