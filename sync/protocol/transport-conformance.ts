/**
 * Conformance suite every Transport must pass (the simulator's and libp2p's), in the
 * manner of sync/storage/conformance.ts. Test-only: it imports vitest.
 *
 * Usage, in a test file:
 *   runTransportConformance('sim', async () => ({ a, b, connect, settle, teardown }))
 *
 * `setup` runs before every test and returns two transports that are not linked yet. The suite
 * registers its handlers, calls `connect()` (which must bring the a-b link up), then `settle()`
 * whenever it needs everything in flight to have been delivered (the simulator runs its event
 * loop; a real transport waits until the frames it sent were received).
 */
import { afterEach, describe, expect, it } from 'vitest'
import { bytesEqual } from '../core/encoding.ts'
import { TransportError, type Transport } from './transport.ts'
import { pattern } from '../core/xorshift.ts'

export interface TransportFixture {
  a: Transport
  b: Transport
  /** Brings the link between a and b up. */
  connect(): Promise<void>
  /** Lets everything in flight arrive. */
  settle(): Promise<void>
  teardown?(): Promise<void>
}

interface Recorder {
  frames: Array<{ from: string; bytes: Uint8Array }>
  ups: string[]
  downs: string[]
}

function record(t: Transport): Recorder {
  const r: Recorder = { frames: [], ups: [], downs: [] }
  t.onMessage((from, bytes) => void r.frames.push({ from, bytes: bytes.slice() }))
  t.onPeerUp((p) => void r.ups.push(p))
  t.onPeerDown((p) => void r.downs.push(p))
  return r
}

const code = (fn: () => void): string | undefined => {
  try {
    fn()
    return undefined
  } catch (err) {
    return err instanceof TransportError ? err.code : `not a TransportError: ${String(err)}`
  }
}

export function runTransportConformance(name: string, setup: () => Promise<TransportFixture>) {
  describe(`transport conformance: ${name}`, () => {
    let fx: TransportFixture | undefined
    afterEach(async () => {
      if (!fx) return
      await fx.a.close()
      await fx.b.close()
      await fx.teardown?.()
      fx = undefined
    })

    async function linked() {
      fx = await setup()
      const ra = record(fx.a)
      const rb = record(fx.b)
      await fx.connect()
      await fx.settle()
      return { fx, ra, rb }
    }

    it('brings the link up on both sides', async () => {
      const { fx, ra, rb } = await linked()
      expect(ra.ups).toEqual([fx.b.peerId])
      expect(rb.ups).toEqual([fx.a.peerId])
      expect(fx.a.peers()).toContain(fx.b.peerId)
      expect(fx.b.peers()).toContain(fx.a.peerId)
    })

    it('delivers frames whole and unaltered, in both directions, naming the sender', async () => {
      const { fx, ra, rb } = await linked()
      fx.a.send(fx.b.peerId, pattern(100, 1))
      fx.b.send(fx.a.peerId, pattern(3, 2))
      fx.a.send(fx.b.peerId, pattern(1, 3))
      await fx.settle()
      expect(rb.frames.map((f) => f.from)).toEqual([fx.a.peerId, fx.a.peerId])
      // No message is empty: a receiver may refuse an empty frame as hostile (sync/p2p/frames.ts).
      const sorted = rb.frames.map((f) => f.bytes).sort((x, y) => x.length - y.length)
      expect(sorted).toEqual([pattern(1, 3), pattern(100, 1)])
      expect(ra.frames).toEqual([{ from: fx.b.peerId, bytes: pattern(3, 2) }])
    })

    it('keeps the order of frames on one link when it promises to', async () => {
      const { fx, rb } = await linked()
      if (!fx.a.ordered) return
      for (let i = 0; i < 50; i++) fx.a.send(fx.b.peerId, pattern(1 + (i % 7) * 100, i + 1))
      await fx.settle()
      expect(rb.frames.map((f) => f.bytes)).toEqual(Array.from({ length: 50 }, (_, i) => pattern(1 + (i % 7) * 100, i + 1)))
    })

    it('carries a frame of exactly maxFrameBytes', async () => {
      const { fx, rb } = await linked()
      const big = pattern(fx.a.maxFrameBytes, 7)
      fx.a.send(fx.b.peerId, big)
      await fx.settle()
      expect(rb.frames).toHaveLength(1)
      expect(rb.frames[0].bytes.length).toBe(big.length)
      expect(bytesEqual(rb.frames[0].bytes, big)).toBe(true)
    })

    it('refuses a frame over maxFrameBytes and never delivers it', async () => {
      const { fx, rb } = await linked()
      expect(code(() => fx.a.send(fx.b.peerId, new Uint8Array(fx.a.maxFrameBytes + 1)))).toBe('frame_too_large')
      await fx.settle()
      expect(rb.frames).toEqual([])
    })

    it('backpressure: a sender that waits for drain gets a burst far past any buffer through, whole and in order', async () => {
      const { fx, ra, rb } = await linked()
      const frame = Math.min(fx.a.maxFrameBytes, 1024 * 1024)
      const n = 40
      let waits = 0
      for (let i = 0; i < n; i++) {
        fx.a.send(fx.b.peerId, pattern(frame, i + 1))
        const d = fx.a.drain?.(fx.b.peerId)
        if (!d) continue
        waits++
        let drained = false
        void d.then(() => (drained = true))
        while (!drained) await fx.settle()
      }
      while (rb.frames.length < n && rb.downs.length === 0 && ra.downs.length === 0) await fx.settle()
      expect(ra.downs).toEqual([])
      expect(rb.downs).toEqual([])
      expect(rb.frames).toHaveLength(n)
      if (fx.a.ordered) for (let i = 0; i < n; i++) expect(bytesEqual(rb.frames[i].bytes, pattern(frame, i + 1))).toBe(true)
      // A transport with backpressure asked the sender to wait at least once for 40 MiB.
      if (fx.a.drain) expect(waits).toBeGreaterThan(0)
    })

    it('refuses frames to a peer that is not up', async () => {
      const { fx } = await linked()
      expect(code(() => fx.a.send('no-such-peer', new Uint8Array(1)))).toBe('peer_unavailable')
    })

    it('close: the other side sees the peer go down, sends fail, nothing fires afterwards', async () => {
      const { fx, ra, rb } = await linked()
      fx.b.send(fx.a.peerId, pattern(10, 3))
      await fx.a.close()
      await fx.settle()
      expect(rb.downs).toEqual([fx.a.peerId])
      expect(fx.b.peers()).not.toContain(fx.a.peerId)
      expect(code(() => fx.a.send(fx.b.peerId, new Uint8Array(1)))).toBe('closed')
      expect(code(() => fx.b.send(fx.a.peerId, new Uint8Array(1)))).toBe('peer_unavailable')
      // Whatever was in flight to a closed transport is not handed to its handlers.
      expect(ra.frames).toEqual([])
      expect(ra.downs).toEqual([])
    })
  })
}
