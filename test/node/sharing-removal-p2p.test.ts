import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { call, ok } from '../routes/helpers.ts'
import { connectedPair, until, type P2PDaemon } from './p2p-daemons.ts'

/**
 * Removal reaching the removed account's daemon (docs/protocol.md, "Removal notice"): two
 * accounts' daemons over real libp2p on loopback (no mDNS), connected by address.
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

const objectName = async (x: P2PDaemon, s: string, id: string) =>
  (await ok(call(x.app, 'POST', `/v1/spaces/${s}/objects/query`, { filter: { id } }))).records[0]?.core.name as string | undefined

describe('a removed account hears of its removal over libp2p', () => {
  it('the owner revokes the guest key: the guest row becomes guest_revoked, its copy stays readable, new writes never arrive', async () => {
    const s = (await ok(call(a.app, 'POST', '/v1/spaces', { name: 'Guests' }), 201)).id as string
    const old = (await ok(call(a.app, 'POST', `/v1/spaces/${s}/objects`, { initialProperties: { core: { name: 'old' } } }), 201)).objectId as string
    const guest = await ok(call(a.app, 'POST', `/v1/spaces/${s}/guest-key`))
    expect((await call(b.app, 'POST', '/v1/spaces/join', { inviteToken: guest.inviteToken })).statusCode).toBe(202)
    await until('the guest active', async () => (await statusOf(b, s)).status === 'active', 20_000)
    await until('the old object on the guest', async () => (await objectName(b, s, old)) === 'old')

    await ok(call(a.app, 'DELETE', `/v1/spaces/${s}/guest-key`), 204)
    const fresh = (await ok(call(a.app, 'POST', `/v1/spaces/${s}/objects`, { initialProperties: { core: { name: 'after' } } }), 201)).objectId as string
    await until('the guest told', async () => (await statusOf(b, s)).status === 'guest_revoked', 20_000)
    expect((await statusOf(b, s)).ownRole).toBe('none')
    expect(await objectName(b, s, old)).toBe('old')
    // Several scheduler periods (300 ms) later, the owner's new write is still not there.
    await new Promise((r) => setTimeout(r, 1_500))
    expect(await objectName(b, s, fresh)).toBeUndefined()
    expect(await objectName(a, s, fresh)).toBe('after')
  }, 60_000)

  it('the owner removes a writer: its row stays active with ownRole none, read-only, and its rounds back off', async () => {
    const s = (await ok(call(a.app, 'POST', '/v1/spaces', { name: 'Writers' }), 201)).id as string
    await ok(call(a.app, 'POST', `/v1/spaces/${s}/acl/add`, { identities: [b.accountId], permission: 'writer' }))
    await until('the invite_pending row', async () => (await ok(call(b.app, 'GET', '/v1/spaces?status=invite_pending'))).some((r: { id: string }) => r.id === s))
    expect((await call(b.app, 'POST', `/v1/spaces/${s}/invite/accept`)).statusCode).toBeLessThan(300)
    const mine = (await ok(call(b.app, 'POST', `/v1/spaces/${s}/objects`, { initialProperties: { core: { name: 'by b' } } }), 201)).objectId as string
    await until("b's write on the owner", async () => (await objectName(a, s, mine)) === 'by b')

    await ok(call(a.app, 'DELETE', `/v1/spaces/${s}/members/${b.accountId}`), 204)
    await until('the writer told', async () => (await statusOf(b, s)).ownRole === 'none', 20_000)
    expect((await statusOf(b, s)).status).toBe('active')
    expect(await objectName(b, s, mine)).toBe('by b')
    const res = await call(b.app, 'POST', `/v1/spaces/${s}/objects`, { initialProperties: { core: { name: 'no' } } })
    expect(res.statusCode).toBe(403)
    // Its rounds about the space back off (the 1st, 2nd, 4th, 8th... scheduled chance): over
    // ten scheduler periods (300 ms) a handful, where a member runs one or more a period.
    const rounds = () => [...(b.engine.p2p()!.scheduler.stats.get(s)?.values() ?? [])].reduce((n, x) => n + x.rounds, 0)
    await new Promise((r) => setTimeout(r, 600))
    const settled = rounds()
    await new Promise((r) => setTimeout(r, 3_000))
    expect(rounds() - settled).toBeLessThanOrEqual(3)
  }, 60_000)
})
