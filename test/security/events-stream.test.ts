import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import * as lp from 'it-length-prefixed'
import { DaemonHost } from '../../node/daemon/daemon-host.ts'
import { keyPairFromSeed } from '../../sync/crypto/keys.ts'
import { EVENTS } from '../../sync/core/events-limits.ts'
import { eventsModule } from '../../sync/modules/events/module.ts'
import { checkSubscribe, type DeliveredEvent } from '../../sync/modules/events/envelope.ts'
import type { SvcLibp2p } from '../../node/p2p/libp2p-node.ts'
import { keyFor } from '../helpers.ts'
import { pour, stranger } from './node-daemon.ts'

/**
 * A stranger on `/svc/events/1.0.0` of a real daemon over libp2p on loopback (docs/security.md
 * "Event bus"): what reaches the bus, what it costs the event loop, and what gets it backed off.
 */
let dir: string
let d: DaemonHost
const nodes: SvcLibp2p[] = []
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'svc-evsec-'))
  d = new DaemonHost({ dataRoot: dir, noMdns: true, p2pListen: ['/ip4/127.0.0.1/tcp/0'] })
  await d.onBoot({ accountId: 'x', dir, keys: { account: keyFor(21), device: keyPairFromSeed(new Uint8Array(32).fill(121)), index: 1 } })
}, 30_000)
afterAll(async () => {
  for (const n of nodes) {
    try {
      await n.stop()
    } catch {
      // already stopped by the daemon's hang-up
    }
  }
  await d?.onTeardown()
  rmSync(dir, { recursive: true, force: true })
})

async function eventsStream() {
  const s = await stranger()
  nodes.push(s)
  const stream = await s.dialProtocol(d.p2p()!.node.getMultiaddrs()[0], EVENTS.protocol, { signal: AbortSignal.timeout(10_000) })
  return { s, stream }
}

/** The longest the event loop was late for a 10 ms tick while `work` ran. */
async function worstLag(work: () => Promise<void>): Promise<number> {
  let worst = 0
  let last = performance.now()
  const t = setInterval(() => {
    const now = performance.now()
    worst = Math.max(worst, now - last - 10)
    last = now
  }, 10)
  try {
    await work()
    await new Promise((r) => setTimeout(r, 200))
  } finally {
    clearInterval(t)
  }
  return worst
}

describe('attack: a stranger floods the events protocol', () => {
  it('thousands of junk frames from a peer that proved no account reach no subscriber and never stall the event loop', async () => {
    const got: DeliveredEvent[] = []
    const sub = d
      .account()
      .services.of(eventsModule)
      .subscribe(checkSubscribe({}), (e) => void got.push(e))
    try {
      const { stream } = await eventsStream()
      const junk = Array.from({ length: 20_000 }, (_, i) => lp.encode.single(new Uint8Array(64).fill(i & 0xff)).subarray())
      // In chunks of 500 frames: the attacker's own sending costs this process little.
      const chunks = Array.from({ length: junk.length / 500 }, (_, i) => Buffer.concat(junk.slice(i * 500, (i + 1) * 500)))
      const dropped = () => d.account().services.of(eventsModule).networkStats()!.dropped
      const handled = () => (dropped().unauthenticated ?? 0) + (dropped().rate ?? 0)
      // The lag is measured until the daemon has looked at every frame.
      const lag = await worstLag(async () => {
        await pour(stream, chunks)
        const end = Date.now() + 20_000
        while (handled() < junk.length && Date.now() < end) await new Promise((r) => setTimeout(r, 20))
      })
      expect(got).toEqual([])
      // Every frame was looked at and dropped cheaply: a burst of 60 for want of an account, the rest for the rate.
      expect(handled()).toBe(junk.length)
      // Past the burst (and its refill while the flood lasts) nothing is even decoded.
      expect(dropped().unauthenticated).toBeGreaterThanOrEqual(EVENTS.publishBurst)
      expect(dropped().rate).toBeGreaterThan(junk.length - 1_000)
      expect(stream.status).toBe('open')
      // Tens of ms here under a load of 10; the margin is for slower machines.
      expect(lag).toBeLessThan(500)
    } finally {
      sub.close()
    }
  }, 60_000)
})

describe('attack: a stranger announces a frame over the bound', () => {
  it('the stream is reset before anything is buffered, and the peer is backed off', async () => {
    const { s, stream } = await eventsStream()
    const header = lp.encode.single(new Uint8Array(EVENTS.maxFrameBytes + 1)).subarray(0, 4)
    await pour(stream, [header])
    const id = s.peerId.toString()
    const end = Date.now() + 10_000
    while (!d.p2p()!.guard.refused(id) && Date.now() < end) await new Promise((r) => setTimeout(r, 50))
    expect(d.p2p()!.guard.refused(id)).toBe(true)
  }, 30_000)
})
