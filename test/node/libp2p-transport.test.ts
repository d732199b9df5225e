import { afterEach, describe, expect, it } from 'vitest'
import { createSvcNode, type SvcLibp2p } from '../../node/p2p/libp2p-node.ts'
import { Libp2pTransport } from '../../sync/p2p/libp2p-transport.ts'
import { keyFor } from '../helpers.ts'
import { runTransportConformance } from '../../sync/protocol/transport-conformance.ts'

let seq = 40
runTransportConformance('libp2p (TCP + Noise + Yamux on loopback)', async () => {
  const na = await createSvcNode({ deviceKey: keyFor(seq++), listen: ['/ip4/127.0.0.1/tcp/0'] })
  const nb = await createSvcNode({ deviceKey: keyFor(seq++), listen: ['/ip4/127.0.0.1/tcp/0'] })
  const a = await Libp2pTransport.start(na, { maxFrameBytes: 1024 * 1024 })
  const b = await Libp2pTransport.start(nb, { maxFrameBytes: 1024 * 1024 })
  const waitFor = async (cond: () => boolean) => {
    for (let i = 0; i < 500 && !cond(); i++) await new Promise((r) => setTimeout(r, 10))
  }
  return {
    a,
    b,
    async connect() {
      await na.dial(nb.getMultiaddrs()[0])
      await waitFor(() => a.peers().includes(b.peerId) && b.peers().includes(a.peerId))
    },
    // A real network: wait until a short quiet period passes with nothing new delivered.
    async settle() {
      await new Promise((r) => setTimeout(r, 150))
    },
    async teardown() {
      await na.stop()
      await nb.stop()
    },
  }
})

const nodes: SvcLibp2p[] = []
afterEach(async () => {
  await Promise.all(
    nodes.splice(0).map(async (n) => {
      await n.stop()
    }),
  )
})

async function pair(opts: { maxFrameBytes?: number } = {}) {
  const a = await createSvcNode({ deviceKey: keyFor(31), listen: ['/ip4/127.0.0.1/tcp/0'] })
  const b = await createSvcNode({ deviceKey: keyFor(32), listen: ['/ip4/127.0.0.1/tcp/0'] })
  nodes.push(a, b)
  const ta = await Libp2pTransport.start(a, opts)
  const tb = await Libp2pTransport.start(b, opts)
  const upA = new Promise<string>((r) => ta.onPeerUp(r))
  const upB = new Promise<string>((r) => tb.onPeerUp(r))
  await a.dial(b.getMultiaddrs()[0])
  expect(await upA).toBe(tb.peerId)
  expect(await upB).toBe(ta.peerId)
  return { a, b, ta, tb }
}

describe('libp2p transport', () => {
  it('carries frames both ways, in order, over real TCP + Noise + Yamux', async () => {
    const { ta, tb } = await pair()
    const got: string[] = []
    const done = new Promise<void>((resolve) =>
      tb.onMessage((from, bytes) => {
        expect(from).toBe(ta.peerId)
        got.push(new TextDecoder().decode(bytes))
        if (got.length === 100) resolve()
      }),
    )
    for (let i = 0; i < 100; i++) ta.send(tb.peerId, new TextEncoder().encode(`m${i}`))
    await done
    expect(got).toEqual(Array.from({ length: 100 }, (_, i) => `m${i}`))
    expect(ta.peers()).toEqual([tb.peerId])
  })

  it('tells of the next frame in line, once each, while the one before it is handled, with the bytes delivered later', async () => {
    const { ta, tb } = await pair()
    const events: string[] = []
    const told: Uint8Array[] = []
    let release!: () => void
    const held = new Promise<void>((r) => (release = r))
    const all = new Promise<void>((resolve) => {
      tb.onMessage(async (from, bytes) => {
        expect(from).toBe(ta.peerId)
        const n = bytes[0]
        events.push(`msg ${n}`)
        expect(told.includes(bytes) || n === 0).toBe(true)
        // The first frame is slow to handle: the others queue behind it meanwhile.
        if (n === 0) await held
        if (n === 4) resolve()
      })
    })
    tb.onUpcoming((from, bytes) => {
      expect(from).toBe(ta.peerId)
      told.push(bytes)
      events.push(`next ${bytes[0]}`)
    })
    for (let i = 0; i < 5; i++) ta.send(tb.peerId, new Uint8Array([i, 1, 2, 3]))
    for (let i = 0; i < 200 && !(events.includes('next 1') && events.includes('msg 0')); i++) await new Promise((r) => setTimeout(r, 10))
    // Every frame is in by now; only the next in line is told of while frame 0 is handled.
    await new Promise((r) => setTimeout(r, 200))
    expect([...events].sort()).toEqual(['msg 0', 'next 1'])
    release()
    await all
    // Then each frame in turn, the one after it told of as its turn comes.
    expect(events.slice(2)).toEqual(['next 2', 'msg 1', 'next 3', 'msg 2', 'next 4', 'msg 3', 'msg 4'])
  })

  it('an answer to the first frame of a peer, sent while our own stream is still opening, is delivered', async () => {
    const a = await createSvcNode({ deviceKey: keyFor(33), listen: ['/ip4/127.0.0.1/tcp/0'] })
    const b = await createSvcNode({ deviceKey: keyFor(34), listen: ['/ip4/127.0.0.1/tcp/0'] })
    nodes.push(a, b)
    // b's own stream to a opens slowly (a real dial, just late), so a's first frame reaches b
    // before b can send: b answers at once, as a session answers an auth challenge.
    const dial = b.dialProtocol.bind(b)
    b.dialProtocol = async (...args: Parameters<typeof dial>) => {
      await new Promise((r) => setTimeout(r, 300))
      return dial(...args)
    }
    const ta = await Libp2pTransport.start(a)
    const tb = await Libp2pTransport.start(b)
    tb.onMessage((from, bytes) => tb.send(from, new TextEncoder().encode(`re:${new TextDecoder().decode(bytes)}`)))
    const answer = new Promise<string>((r) => ta.onMessage((_from, bytes) => r(new TextDecoder().decode(bytes))))
    const upA = new Promise<string>((r) => ta.onPeerUp(r))
    await a.dial(b.getMultiaddrs()[0])
    ta.send(await upA, new TextEncoder().encode('hello'))
    expect(await answer).toBe('re:hello')
  })

  it('refuses oversized frames on send, and a peer announcing one loses its stream', async () => {
    const { a, b, ta, tb } = await pair({ maxFrameBytes: 1024 })
    expect(() => ta.send(tb.peerId, new Uint8Array(2048))).toThrow(expect.objectContaining({ code: 'frame_too_large' }))
    const big = new Promise<number>((r) => tb.onMessage((_f, bytes) => r(bytes.length)))
    ta.send(tb.peerId, new Uint8Array(1000))
    expect(await big).toBe(1000)
    // A hostile peer announces a 100 MB frame on a raw stream: reset before anything is buffered.
    const raw = await a.dialProtocol(b.peerId, '/svc/headsync/1.0.0')
    const closed = new Promise<void>((r) => raw.addEventListener('close', () => r()))
    raw.send(new Uint8Array([0x80, 0x80, 0x80, 0x32, 1, 2, 3]))
    await closed
    expect(tb.drops.frame_too_large).toBe(1)
  })

  it('reports the peer down when it stops', async () => {
    const { a, ta, tb } = await pair()
    const down = new Promise<string>((r) => tb.onPeerDown(r))
    await a.stop()
    expect(await down).toBe(ta.peerId)
    expect(() => tb.send(ta.peerId, new Uint8Array(1))).toThrow(expect.objectContaining({ code: 'peer_unavailable' }))
  })
})
