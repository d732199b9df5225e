import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { DaemonHost } from '../../node/daemon/daemon-host.ts'
import type { BlockExchange } from '../../sync/p2p/block-exchange.ts'
import { Libp2pTransport } from '../../sync/p2p/libp2p-transport.ts'
import type { SvcLibp2p } from '../../node/p2p/libp2p-node.ts'
import { encodeCanonical } from '../../sync/core/encoding.ts'
import { keyPairFromSeed } from '../../sync/crypto/keys.ts'
import { filesModule } from '../../sync/modules/files/module.ts'
import type { FilesService } from '../../sync/modules/files/service.ts'
import { BLOCKS_WIRE, decodeBlocksMessage, encodeBlocksMessage, type BlocksMessage } from '../../sync/protocol/blocks-wire.ts'
import { keyFor } from '../helpers.ts'
import { stranger } from './node-daemon.ts'

/**
 * Peers on `/svc/blocks/1.0.0` of a real daemon over libp2p on loopback (docs/security.md
 * "Files"): a stranger that proved no account asks for blocks it knows the address of and gets
 * `none` for each, exactly as for blocks that do not exist; malformed and oversized requests
 * and a flood of requests are faults, and the peer is backed off.
 */
let dir: string
let d: DaemonHost
let files: FilesService
let spaceId: string
let blocks: string[]
const nodes: SvcLibp2p[] = []
const transports: Libp2pTransport[] = []

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'svc-filesec-'))
  d = new DaemonHost({ dataRoot: dir, noMdns: true, p2pListen: ['/ip4/127.0.0.1/tcp/0'] })
  await d.onBoot({ accountId: 'x', dir, keys: { account: keyFor(31), device: keyPairFromSeed(new Uint8Array(32).fill(131)), index: 1 } })
  const account = d.account()
  spaceId = (await account.createSpace({ name: 'Secret' })).id
  const space = account.space(spaceId)
  const objectId = await space.createObject()
  files = account.services.of(filesModule)
  const bytes = new Uint8Array(3 * 1024 * 1024 + 5).map((_, i) => (i * 7) & 255)
  const res = await files.attach(
    spaceId,
    objectId,
    { name: 'secret.bin', mime: 'application/octet-stream' },
    (async function* () {
      yield bytes
    })(),
  )
  blocks = (await files.record(spaceId, res.fileId)).blocks!
  expect(blocks).toHaveLength(4)
}, 60_000)
afterAll(async () => {
  for (const t of transports) await Promise.resolve(t.close()).catch(() => undefined)
  for (const n of nodes) await Promise.resolve(n.stop()).catch(() => undefined)
  await d?.onTeardown()
  rmSync(dir, { recursive: true, force: true })
})

const exchange = () => files.reader.source as BlockExchange

/** A stranger speaking the blocks protocol to the daemon: what it sends, and every frame it gets back. */
async function strangerLink() {
  const s = await stranger()
  nodes.push(s)
  const t = await Libp2pTransport.start(s, { protocol: BLOCKS_WIRE.protocol, maxFrameBytes: BLOCKS_WIRE.maxFrameBytes })
  transports.push(t)
  const got: BlocksMessage[] = []
  t.onMessage((_peer, bytes) => void got.push(decodeBlocksMessage(bytes)))
  const daemon = d.p2p()!.node
  await s.dial(daemon.getMultiaddrs()[0], { signal: AbortSignal.timeout(10_000) })
  const peer = daemon.peerId.toString()
  const end = Date.now() + 10_000
  while (!t.peers().includes(peer) && Date.now() < end) await new Promise((r) => setTimeout(r, 20))
  return { s, t, peer, got }
}

async function waitFor(pred: () => boolean, ms = 10_000) {
  const end = Date.now() + ms
  while (!pred() && Date.now() < end) await new Promise((r) => setTimeout(r, 20))
}

describe('attack: a stranger asks for blocks by address', () => {
  it('gets none for every block it names, the same answer as for blocks that do not exist, and never a byte', async () => {
    const { t, peer, got } = await strangerLink()
    t.send(peer, encodeBlocksMessage({ kind: 'want', reqId: 1, spaceId, ids: blocks }))
    t.send(peer, encodeBlocksMessage({ kind: 'want', reqId: 2, spaceId, ids: ['1111'] }))
    t.send(peer, encodeBlocksMessage({ kind: 'has', reqId: 3, spaceId, ids: blocks }))
    await waitFor(() => got.length >= 3)
    expect(got).toEqual([
      { kind: 'none', reqId: 1, ids: blocks },
      { kind: 'none', reqId: 2, ids: ['1111'] },
      { kind: 'have', reqId: 3, all: false },
    ])
    expect(exchange().served.blocks).toBe(0)
    expect(exchange().drops.not_member).toBeGreaterThanOrEqual(2)
  }, 30_000)
})

describe('attack: malformed and oversized requests', () => {
  it('a want naming more than 16 blocks, a frame that is no message, and a flood past the request queue are faults that back the peer off', async () => {
    const { s, t, peer } = await strangerLink()
    const id = s.peerId.toString()
    t.send(peer, encodeCanonical([1, 1, 9, spaceId, Array.from({ length: BLOCKS_WIRE.wantMax + 1 }, () => blocks[0])]))
    t.send(peer, new Uint8Array([1, 2, 3]))
    await waitFor(() => (exchange().drops.malformed ?? 0) >= 2)
    expect(exchange().drops.malformed).toBeGreaterThanOrEqual(2)
    // Requests beyond the queue are dropped unanswered and scored until the guard refuses the peer.
    for (let i = 0; i < 400 && !d.p2p()!.guard.refused(id); i++) {
      try {
        t.send(peer, encodeBlocksMessage({ kind: 'has', reqId: 100 + i, spaceId, ids: blocks }))
      } catch {
        break
      }
      if (i % 50 === 0) await new Promise((r) => setTimeout(r, 5))
    }
    await waitFor(() => d.p2p()!.guard.refused(id))
    expect(exchange().drops.over_queue).toBeGreaterThan(0)
    expect(d.p2p()!.guard.refused(id)).toBe(true)
  }, 30_000)
})
