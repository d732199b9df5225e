/**
 * Issue 35, "How it is proven", end to end with real processes: a hub (`svc hub`, SQLite) and
 * two accounts' daemons with mDNS off that are never told each other's address, so each reaches
 * only the hub. Owner A shares a space with member B; A writes 1,000 objects and a file while B
 * is stopped, then stops; B starts and gets everything, the file's bytes included, from the hub
 * alone; B's reply reaches A when A starts again. A removed member and a stranger ask the hub
 * with the account's key and get nothing of the space's content.
 */
import { createHash, randomBytes } from 'node:crypto'
import { afterAll, describe, expect, it } from 'vitest'
import { identityOf, keyPairFromSeed } from '../../sync/crypto/keys.ts'
import { AccountDevice } from './account-device.ts'
import { Fleet, S, type Account } from './accounts.ts'
import { HubFleet } from './hub-process.ts'
import { api, ok, startDaemon, stopDaemon, until } from './daemons.ts'

const fleet = new Fleet()
const hubs = new HubFleet()
afterAll(async () => {
  hubs.close()
  await fleet.close()
})

const sha = (b: Uint8Array) => createHash('sha256').update(b).digest('hex')
const objectsIn = async (a: Account, spaceId: string): Promise<number> => (await ok(a.d, 'POST', `${S(spaceId)}/objects/query`, { limit: 1, includeTotal: true })).total

async function restart(fleetAccount: Account) {
  fleetAccount.d = await startDaemon(fleetAccount.d.dir, { mdns: false })
  fleet.daemons.push(fleetAccount.d)
  await until(`${fleetAccount.name} booted again`, async () => (await ok(fleetAccount.d, 'GET', '/v1/health')).account !== '', 60_000)
}

/** Whether a's daemon has ever been connected to b's (it must not: each reaches only the hub). */
async function linked(a: Account, b: Account): Promise<boolean> {
  const mine = await ok(a.d, 'GET', '/v1/debug/p2p')
  const theirs = await ok(b.d, 'GET', '/v1/debug/p2p')
  return (mine.peers as Array<{ peerId: string }>).some((p) => p.peerId === theirs.peerId)
}

describe('the hub keeps a shared space while its members are offline (real processes)', () => {
  it('B gets 1,000 objects and a file from the hub alone; B’s reply reaches A; removed members and strangers get nothing', async () => {
    const [alice, bob] = await Promise.all(['alice', 'bob'].map((n) => fleet.account(n, { mdns: false })))
    const hub = await hubs.start(['--allow', bob.identity])
    // A is admitted by a token its operator minted; B by the allowlist.
    const token = await hubs.admit(hub, alice.identity)
    expect((await api(alice.d, 'POST', '/v1/hubs', { multiaddr: hub.addr, token })).status).toBe(201)
    expect((await api(bob.d, 'POST', '/v1/hubs', { multiaddr: hub.addr })).status).toBe(201)
    await until('both admitted', async () => {
      const [a, b] = await Promise.all([ok(alice.d, 'GET', '/v1/hubs'), ok(bob.d, 'GET', '/v1/hubs')])
      return a.hubs[0].admission === 'ok' && b.hubs[0].admission === 'ok'
    })

    // A shares a space with B; it reaches B through the hub.
    const space = await ok(alice.d, 'POST', '/v1/spaces', { name: 'Team' })
    await ok(alice.d, 'POST', `${S(space.id)}/acl/add`, { identities: [bob.identity], permission: 'writer' })
    await until('bob is offered the space', async () => (await api(bob.d, 'GET', S(space.id))).json?.status === 'invite_pending', 60_000, 200)
    await ok(bob.d, 'POST', `${S(space.id)}/invite/accept`)
    await until('bob holds the space', async () => (await api(bob.d, 'GET', S(space.id))).json?.status === 'active', 60_000, 200)
    await until('the space is kept for bob too', async () => (await ok(bob.d, 'GET', '/v1/hubs')).hubs[0].spaces.some((s: any) => s.spaceId === space.id && s.state === 'kept'))
    await stopDaemon(bob.d)

    // A writes 1,000 objects and a file while B is stopped.
    const before = await objectsIn(alice, space.id)
    for (let i = 0; i < 1000; i += 20) await Promise.all(Array.from({ length: 20 }, () => ok(alice.d, 'POST', `${S(space.id)}/objects`, {})))
    const { objectId } = await ok(alice.d, 'POST', `${S(space.id)}/objects`, {})
    const bytes = randomBytes(3 * 1024 * 1024 + 5)
    const res = await fetch(`${alice.d.url}${S(space.id)}/objects/${objectId}/files?name=report.bin`, {
      method: 'POST',
      headers: { 'content-type': 'application/octet-stream' },
      body: bytes,
    })
    const fileId = (await res.json()).fileId as string
    expect(res.status).toBe(201)
    // The hub confirms every block: the file turns durable on A with no other device online.
    await until('the file is durable on A (the hub holds its blocks)', async () => (await ok(alice.d, 'GET', `${S(space.id)}/files/${fileId}`)).state === 'durable', 120_000, 500)
    // Durable through the hub alone: A may offload its copy, and fetches it back from the hub later.
    await ok(alice.d, 'POST', `${S(space.id)}/files/${fileId}/offload`)
    expect(await ok(alice.d, 'GET', `${S(space.id)}/files/${fileId}`)).toMatchObject({ cached: false, cachedBlocks: 0 })
    const total = await objectsIn(alice, space.id)
    expect(total).toBe(before + 1001)
    await until('A synced the space with the hub after its last write', async () => {
      const st = await ok(alice.d, 'GET', `${S(space.id)}/sync-status`)
      return st.pending === 0 && st.hubs?.[0]?.state === 'kept' && st.hubs[0].lastSyncAt !== null
    })
    await stopDaemon(alice.d)

    // B starts with A gone: everything comes from the hub.
    await restart(bob)
    await until('B holds all 1,001 objects', async () => (await objectsIn(bob, space.id)) === total, 180_000, 500)
    const got = await fetch(`${bob.d.url}${S(space.id)}/files/${fileId}/content`, { signal: AbortSignal.timeout(120_000) })
    expect(got.status).toBe(200)
    expect(sha(Buffer.from(await got.arrayBuffer()))).toBe(sha(bytes))

    // B replies; A, started again after B stopped, gets it from the hub.
    const reply = await ok(bob.d, 'POST', `${S(space.id)}/modify`, {
      objectId,
      dataset: 'notes',
      records: [{ id: 'reply', ops: [{ type: '$set', path: 'v', value: 'from bob' }] }],
    })
    expect(reply).toBeDefined()
    await until('B synced its reply with the hub', async () => (await ok(bob.d, 'GET', `${S(space.id)}/sync-status`)).pending === 0)
    await stopDaemon(bob.d)
    await restart(alice)
    await until('A holds B’s reply', async () => {
      const r = await api(alice.d, 'POST', `${S(space.id)}/query`, { objectId, dataset: 'notes', sort: ['id'] })
      return r.status === 200 && r.json.records.some((x: any) => x.id === 'reply' && x.v === 'from bob')
    })
    const back = await fetch(`${alice.d.url}${S(space.id)}/files/${fileId}/content`, { signal: AbortSignal.timeout(120_000) })
    expect(sha(Buffer.from(await back.arrayBuffer()))).toBe(sha(bytes))
    await restart(bob)
    expect(await linked(alice, bob)).toBe(false)

    // C is put on the ACL, then removed; A writes on. C's key asks the hub: nothing of any object.
    const carol = keyPairFromSeed(new Uint8Array(randomBytes(32)))
    await ok(alice.d, 'POST', `${S(space.id)}/acl/add`, { identities: [identityOf(carol.publicKey)], permission: 'writer' })
    await ok(alice.d, 'DELETE', `${S(space.id)}/members/${identityOf(carol.publicKey)}`)
    await ok(alice.d, 'POST', `${S(space.id)}/objects`, {})
    await until('A synced the removal with the hub', async () => (await ok(alice.d, 'GET', `${S(space.id)}/sync-status`)).pending === 0)
    const stranger = keyPairFromSeed(new Uint8Array(randomBytes(32)))
    for (const [who, key] of [
      ['removed member', carol],
      ['stranger', stranger],
    ] as const) {
      const dev = await AccountDevice.start(key, space.id)
      try {
        await dev.dial(hub.addr, hub.peerId)
        const round = await dev.syncWith(hub.peerId).then(
          () => 'in sync',
          (err: unknown) => (err as Error).message,
        )
        expect(round, who).toMatch(/unknown_space/)
        // No object tree at all; the removed member may get the ACL records up to its removal
        // (the removal notice), the stranger not even those.
        expect(dev.replica.treeIds(), who).toEqual([])
        if (who === 'stranger') expect(dev.replica.known, who).toBe(false)
        else expect(dev.replica.acl.current().canRead(identityOf(carol.publicKey))).toBe(false)
      } finally {
        await dev.close()
      }
    }

    const health = await (await fetch(`${hub.operator}/health`)).json()
    expect(health).toMatchObject({ ok: true, spacesKept: expect.any(Number), peersConnected: expect.any(Number) })
    expect(health.changesStored).toBeGreaterThanOrEqual(1001)
    const metrics = await (await fetch(`${hub.operator}/metrics`)).text()
    expect(metrics).toMatch(/^svc_hub_spaces_kept \d+$/m)
    // Graceful shutdown: SIGTERM ends the hub with status 0.
    hub.proc.proc.kill('SIGTERM')
    expect(await hub.proc.exited).toBe(0)
  }, 600_000)
})
