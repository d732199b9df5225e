/**
 * Issue 35, "Two hub processes on one PostgreSQL": a real PostgreSQL, two `svc hub` processes
 * sharing it, and two accounts' daemons that each reach one hub only (mDNS off, never told each
 * other's address). A syncs through the first, B through the second: they converge, and a live
 * write from A reaches B within 2 s (PostgreSQL NOTIFY carries it from one process to the other).
 */
import { afterAll, describe, expect, it } from 'vitest'
import { startPg, type PgCluster } from '../fixtures/pg-fixture.ts'
import { Fleet, S } from './accounts.ts'
import { HubFleet } from './hub-process.ts'
import { api, datasetState, ok, until } from './daemons.ts'

const fleet = new Fleet()
const hubs = new HubFleet()
let pg: PgCluster | undefined
afterAll(async () => {
  hubs.close()
  await fleet.close()
  pg?.stop()
})

describe('two hub processes on one PostgreSQL', () => {
  it('A through the first, B through the second: they converge, and a live write reaches B within 2 s', async () => {
    pg = startPg()
    const [alice, bob] = await Promise.all(['alice', 'bob'].map((n) => fleet.account(n, { mdns: false })))
    const allow = [alice.identity, bob.identity]
    const first = await hubs.start(['--postgres', pg.url, '--allow', allow.join(',')])
    const second = await hubs.start(['--postgres', pg.url, '--allow', allow.join(',')])
    expect(first.store).toBe('postgres')
    expect(first.peerId).not.toBe(second.peerId)
    await ok(alice.d, 'POST', '/v1/hubs', { multiaddr: first.addr })
    await ok(bob.d, 'POST', '/v1/hubs', { multiaddr: second.addr })

    const space = await ok(alice.d, 'POST', '/v1/spaces', { name: 'Shared' })
    const { objectId } = await ok(alice.d, 'POST', `${S(space.id)}/objects`, {})
    await ok(alice.d, 'POST', `${S(space.id)}/acl/add`, { identities: [bob.identity], permission: 'writer' })
    await until('bob is offered the space through the second hub', async () => (await api(bob.d, 'GET', S(space.id))).json?.status === 'invite_pending', 90_000, 200)
    await ok(bob.d, 'POST', `${S(space.id)}/invite/accept`)
    await until('bob holds the space', async () => (await api(bob.d, 'GET', S(space.id))).json?.status === 'active', 60_000, 200)

    // Both write; both converge, each through its own hub process.
    for (let i = 0; i < 30; i++) {
      await ok(alice.d, 'POST', `${S(space.id)}/modify`, { objectId, dataset: 'notes', records: [{ id: `a${i}`, ops: [{ type: '$set', path: 'v', value: i }] }] })
      await ok(bob.d, 'POST', `${S(space.id)}/modify`, { objectId, dataset: 'notes', records: [{ id: `b${i}`, ops: [{ type: '$set', path: 'v', value: i }] }] })
    }
    await until(
      'A and B converge',
      async () => {
        const [a, b] = await Promise.all([datasetState(alice.d, space.id, objectId, 'notes'), datasetState(bob.d, space.id, objectId, 'notes')])
        return a === b && a.includes('"a29"') && a.includes('"b29"')
      },
      90_000,
      300,
    )

    // Live writes: each reaches B within 2 s (the slowest of five is what the target bounds).
    const delays: number[] = []
    for (let i = 0; i < 5; i++) {
      const id = `live${i}`
      const t0 = Date.now()
      await ok(alice.d, 'POST', `${S(space.id)}/modify`, { objectId, dataset: 'notes', records: [{ id, ops: [{ type: '$set', path: 'v', value: 'now' }] }] })
      await until(
        `B holds ${id}`,
        async () => (await api(bob.d, 'POST', `${S(space.id)}/query`, { objectId, dataset: 'notes', limit: 1000 })).json?.records?.some((r: { id: string }) => r.id === id),
        10_000,
        25,
      )
      delays.push(Date.now() - t0)
    }
    console.log(JSON.stringify({ liveWriteMsThroughTwoHubs: delays }))
    expect(Math.max(...delays)).toBeLessThan(2_000)
    const health = await (await fetch(`${second.operator}/health`)).json()
    expect(health).toMatchObject({ ok: true, store: 'postgres' })
  }, 300_000)
})
