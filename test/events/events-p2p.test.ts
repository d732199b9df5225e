import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { DaemonHost } from '../../node/daemon/daemon-host.ts'
import { keyPairFromSeed } from '../../sync/crypto/keys.ts'
import { eventsModule } from '../../sync/modules/events/module.ts'
import { checkSubscribe, type DeliveredEvent } from '../../sync/modules/events/envelope.ts'
import { ownerToken } from '../../sync/modules/events/namespace.ts'
import { keyFor } from '../helpers.ts'
import { call, expectError, listen, ok, openSse, type SseClient } from '../routes/helpers.ts'
import { connectedPair, until, type P2PDaemon } from '../node/p2p-daemons.ts'

/**
 * Network-scope events over real libp2p on loopback (no mDNS): two accounts' daemons sharing a
 * space, through the HTTP API; and two devices of one account for account scope.
 */
let a: P2PDaemon
let b: P2PDaemon
const streams: SseClient[] = []
beforeAll(async () => {
  ;[a, b] = await connectedPair()
}, 60_000)
afterAll(async () => {
  for (const s of streams) s.destroy()
  await Promise.all([a?.close(), b?.close()])
})

const statusOf = async (x: P2PDaemon, s: string) => ok<{ status: string; ownRole: string }>(call(x.app, 'GET', `/v1/spaces/${s}`))
async function subscribe(x: P2PDaemon, query: string): Promise<SseClient> {
  const url = x.app.server.listening ? `http://127.0.0.1:${(x.app.server.address() as { port: number }).port}` : await listen(x.app)
  const c = await openSse(`${url}/v1/events/subscribe?${query}`)
  streams.push(c)
  await c.until((f) => f.some((y) => y.event === 'ready'))
  return c
}
const eventsOf = (c: SseClient) => c.frames.filter((f) => f.event === 'event').map((f) => f.data)

describe('space events between two accounts over libp2p', () => {
  it("a space event from one member reaches the other account's subscriber, sealed, signed and attributed; a guest is refused", async () => {
    const s = (await ok(call(a.app, 'POST', '/v1/spaces', { name: 'Events over the wire' }), 201)).id as string
    const { inviteToken } = await ok(call(a.app, 'POST', `/v1/spaces/${s}/invites`, { permission: 'writer' }), 201)
    expect((await call(b.app, 'POST', '/v1/spaces/join', { inviteToken })).statusCode).toBe(202)
    await until('the request on the owner', async () => (await ok(call(a.app, 'GET', `/v1/spaces/${s}/members`))).members.some((m: { status: string }) => m.status === 'pending'))
    await ok(call(a.app, 'POST', `/v1/spaces/${s}/acl/accept`, { identity: b.accountId }))
    await until('b an active writer', async () => (await statusOf(b, s)).ownRole === 'writer' && (await statusOf(b, s)).status === 'active')

    const onB = await subscribe(b, `spaceId=${s}&type=ui.*&type=editor.cursor.*`)
    const onA = await subscribe(a, `spaceId=${s}&type=ui.*`)
    // At most once, no retry: publish until one arrives (links and keys settle on their own time).
    let published = 0
    await until('a space event on b', async () => {
      published++
      await ok(call(a.app, 'POST', '/v1/events', { type: 'ui.open_object', scope: 'space', spaceId: s, target: 'obj-1', data: { spaceId: s, objectId: 'obj-1', n: published } }))
      return eventsOf(onB).length > 0
    })
    const got = eventsOf(onB)[0]
    expect(got).toMatchObject({
      type: 'ui.open_object',
      scope: 'space',
      spaceId: s,
      target: 'obj-1',
      data: { spaceId: s, objectId: 'obj-1' },
      sender: { identity: a.accountId, self: false },
    })
    expect(eventsOf(onA)[0].sender).toEqual({ identity: a.accountId, self: true })
    // Each publish is delivered at most once.
    await new Promise((r) => setTimeout(r, 300))
    const ns = eventsOf(onB).map((e) => e.data.n)
    expect(new Set(ns).size).toBe(ns.length)

    // A burst within the rate (after the bucket refilled) arrives whole, in order, once each.
    await new Promise((r) => setTimeout(r, 2_100))
    const before = eventsOf(onB).length
    for (let i = 0; i < 50; i++) await ok(call(a.app, 'POST', '/v1/events', { type: 'ui.burst', scope: 'space', spaceId: s, data: { i, pad: 'x'.repeat(1024) } }))
    await onB.until((f) => f.filter((x) => x.event === 'event').length >= before + 50, 15_000)
    await new Promise((r) => setTimeout(r, 200))
    expect(
      eventsOf(onB)
        .slice(before)
        .map((e) => e.data.i),
    ).toEqual(Array.from({ length: 50 }, (_, i) => i))

    // The other way, and a cursor lands in b's own namespace on a.
    const cursorsOnA = await subscribe(a, `spaceId=${s}&type=editor.cursor.*`)
    await until('b cursor on a', async () => {
      await ok(call(b.app, 'POST', '/v1/events', { type: 'editor.cursor', scope: 'space', spaceId: s, target: 'obj-1', data: { pos: 7 } }))
      return eventsOf(cursorsOnA).length > 0
    })
    expect(eventsOf(cursorsOnA)[0]).toMatchObject({ type: `editor.cursor.${ownerToken(b.accountId)}`, sender: { identity: b.accountId, self: false }, data: { pos: 7 } })

    // A guest holds no network scope: 409 events.no_read_key, publishing and subscribing.
    const g = (await ok(call(a.app, 'POST', '/v1/spaces', { name: 'Guest space' }), 201)).id as string
    const guest = await ok(call(a.app, 'POST', `/v1/spaces/${g}/guest-key`))
    expect((await call(b.app, 'POST', '/v1/spaces/join', { inviteToken: guest.inviteToken })).statusCode).toBe(202)
    await until('the guest active', async () => (await statusOf(b, g)).status === 'active' && (await statusOf(b, g)).ownRole === 'guest', 30_000)
    expect(expectError(await call(b.app, 'POST', '/v1/events', { type: 'ui.open_space', scope: 'space', spaceId: g }), 409, 'events.no_read_key')).toMatchObject({ spaceId: g })
    expectError(await call(b.app, 'GET', `/v1/events/subscribe?spaceId=${g}`), 409, 'events.no_read_key')
    // The owner's space events are never sent to the guest's devices (recipients are full
    // members at the sender's ACL state), so nothing even reaches the guest's receiver.
    const droppedOnB = () => b.engine.account().services.of(eventsModule).networkStats()!.dropped
    const droppedBefore = { ...droppedOnB() }
    const noPeerBefore = a.engine.account().services.of(eventsModule).networkStats()!.unsent.no_peer ?? 0
    for (let i = 0; i < 3; i++) await ok(call(a.app, 'POST', '/v1/events', { type: 'ui.open_space', scope: 'space', spaceId: g }))
    await new Promise((r) => setTimeout(r, 300))
    expect(droppedOnB()).toEqual(droppedBefore)
    expect(a.engine.account().services.of(eventsModule).networkStats()!.unsent.no_peer).toBe(noPeerBefore + 3)
    // Device and account scope stay open to the guest's daemon.
    await ok(call(b.app, 'POST', '/v1/events', { type: 'ui.open_space', scope: 'device' }))
  }, 90_000)
})

describe('account events between two devices of one account over libp2p', () => {
  const cleanups: Array<() => Promise<void>> = []
  afterEach(async () => {
    for (const c of cleanups.splice(0).reverse()) await c()
  })
  async function device(n: number) {
    const dir = mkdtempSync(join(tmpdir(), `svc-evdev${n}-`))
    const engine = new DaemonHost({ dataRoot: dir, noMdns: true, p2pListen: ['/ip4/127.0.0.1/tcp/0'], scheduler: { debounceMs: 20 } })
    await engine.onBoot({ accountId: 'x', dir, keys: { account: keyFor(7), device: keyPairFromSeed(new Uint8Array(32).fill(140 + n)), index: 1 } })
    cleanups.push(async () => {
      await engine.onTeardown()
      rmSync(dir, { recursive: true, force: true })
    })
    return engine
  }

  it('an account event from one device reaches a subscriber on the other, marked self', async () => {
    const d1 = await device(1)
    const d2 = await device(2)
    await d2.p2p()!.node.dial(d1.p2p()!.node.getMultiaddrs()[0])
    const got: DeliveredEvent[] = []
    const sub = d1
      .account()
      .services.of(eventsModule)
      .subscribe(checkSubscribe({ scope: ['account'] }), (e) => void got.push(e))
    try {
      await until('an account event on the first device', async () => {
        d2.account()
          .services.of(eventsModule)
          .publish({ type: 'process.started', scope: 'account', target: 'job.1', data: { kind: 'sync' } })
        return got.length > 0
      })
      expect(got[0]).toEqual({ type: 'process.started', scope: 'account', target: 'job.1', data: { kind: 'sync' }, sender: { identity: d1.account().accountId, self: true } })
      // The process the other device announced is live here too.
      expect(d1.account().services.of(eventsModule).processes.live('job.1')).toHaveLength(1)
      // Device scope never leaves the process.
      d2.account().services.of(eventsModule).publish({ type: 'ui.local', scope: 'device' })
      await new Promise((r) => setTimeout(r, 300))
      expect(got.some((e) => e.type === 'ui.local')).toBe(false)
    } finally {
      sub.close()
    }
  }, 60_000)
})
