import { describe, expect, it } from 'vitest'
import { derivedRoot } from '../../sync/dag/change.ts'
import { PEER_LIMITS, SYNC_LIMITS } from '../../sync/protocol/limits.ts'
import { encodeMessage } from '../../sync/protocol/messages.ts'
import { SyncDriver } from '../../sync/protocol/sync-driver.ts'
import type { Transport } from '../../sync/protocol/transport.ts'
import { encodeCanonical } from '../../sync/core/encoding.ts'
import { idFor } from '../helpers.ts'
import { link, node } from '../protocol/helpers.ts'

/** Per-peer state, the event loop, and the count the daemon disconnects a misbehaving peer on. */

const sync = (spaceId: string, req: number) => encodeMessage({ type: 'sync', spaceId, req, fp: new Uint8Array(8), count: 3 })

describe('The per-peer maps grow without bound, and strangers mint peer ids for free', () => {
  it('peers that never authenticate cost a bounded number of links and counters', async () => {
    const a = await node('a', 1)
    const minted = 3000
    // Every one sends a space message (kept for after its auth) and never answers the challenge.
    for (let i = 0; i < minted; i++) await a.session.handle(`stranger-${i}`, sync(a.replica.spaceId, i))
    expect(a.session.allCounters().size).toBeLessThan(minted / 2)
    const st = a.session.peerState()
    expect(st.links).toBeLessThan(minted / 2)
    expect(st.counters).toBeLessThan(minted / 2)
    expect(st.links).toBeLessThanOrEqual(PEER_LIMITS.maxUnauthenticatedLinks)
    expect(st.counters).toBeLessThanOrEqual(PEER_LIMITS.maxStrangerCounters)
  })

  it('an authenticated member keeps its counters while strangers churn', async () => {
    const a = await node('a', 1)
    await a.replica.addMember(idFor(2), 'writer')
    const b = await node('b', 2, a.replica.spaceId)
    await link(a, b)
    await a.session.handle('b', new Uint8Array([1, 2, 3]))
    for (let i = 0; i < 1000; i++) await a.session.handle(`stranger-${i}`, new Uint8Array([9]))
    expect(a.session.countersOf('b').dropped.malformed).toBe(1)
  })
})

/** A transport that hands the driver a burst of frames at once, as a socket read does. */
function burstTransport(): Transport & { deliver(from: string, frames: Uint8Array[]): Promise<void>[] } {
  let onMessage: (from: string, bytes: Uint8Array) => void | Promise<void> = () => undefined
  return {
    peerId: 'a',
    maxFrameBytes: SYNC_LIMITS.maxMessageBytes,
    ordered: true,
    send: () => undefined,
    onMessage: (h) => void (onMessage = h),
    onPeerUp: () => undefined,
    onPeerDown: () => undefined,
    peers: () => [],
    close: async () => undefined,
    deliver: (from, frames) => frames.map((f) => Promise.resolve(onMessage(from, f))),
  }
}

describe('Messages run on a promise chain that never yields to the event loop', () => {
  it('the driver lets the event loop run between batches of messages', async () => {
    const a = await node('a', 1)
    const t = burstTransport()
    new SyncDriver({
      transport: t,
      session: a.session,
      timer: {
        after: (ms, fn) => {
          const x = setTimeout(fn, ms)
          return () => clearTimeout(x)
        },
        yield: () => new Promise<void>((r) => setImmediate(r)),
      },
    })
    const n = 2000
    let handledWhenTimerRan = -1
    setImmediate(() => (handledWhenTimerRan = a.session.countersOf('x').messagesIn))
    await Promise.all(
      t.deliver(
        'x',
        Array.from({ length: n }, () => new Uint8Array([0xff])),
      ),
    )
    expect(a.session.countersOf('x').messagesIn).toBe(n)
    // The I/O callback ran while the burst was being handled, not after all of it.
    expect(handledWhenTimerRan).toBeGreaterThanOrEqual(0)
    expect(handledWhenTimerRan).toBeLessThanOrEqual(PEER_LIMITS.messagesPerYield * 2)
  })
})

describe('A peer that sends N malformed or refused messages is disconnected and backed off', () => {
  it('every malformed or refused message and change is one strike in the session', async () => {
    const a = await node('a', 1)
    await a.replica.addMember(idFor(2), 'writer')
    const obj = await a.replica.createObject()
    const s = await node('s', 9, a.replica.spaceId)
    await link(a, s)
    const junk = [1, 2, 3].map((i) => derivedRoot(a.replica.spaceId, new TextEncoder().encode(`junk ${i}`)).raw)
    const fake = 'EwDGJ39WrAcMFU66ZWJHCvuM3mKsRgQ8w4Q2c9Y3vYrY'
    const bad = [
      new Uint8Array([0xff]), // malformed
      new Uint8Array(SYNC_LIMITS.maxMessageBytes + 1), // oversized
      encodeCanonical([2, 3]), // another version
      sync(a.replica.spaceId, 1), // refused: not a reader
      encodeMessage({ type: 'step', spaceId: a.replica.spaceId, req: 2, hop: 1, ranges: [], heads: [], wants: [], changes: junk }), // refused push: 3 changes + the step
      encodeMessage({ type: 'step', spaceId: a.replica.spaceId, req: 3, hop: 1, ranges: [], heads: [{ treeId: obj, heads: [fake], have: [] }], wants: [], changes: [] }), // refused question
    ]
    for (const m of bad) await a.session.handle('s', m)
    const c = a.session.countersOf('s')
    expect(c.rejected.not_reader).toBe(3)
    expect(c.denied).toBe(3)
    expect(a.session.strikes('s')).toBe(3 + 1 + 4 + 1)
  })
})
