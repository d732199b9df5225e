import { afterEach, describe, expect, it } from 'vitest'
import { createSvcNode, type SvcLibp2p } from '../../node/p2p/libp2p-node.ts'
import { Libp2pTransport } from '../../sync/p2p/libp2p-transport.ts'
import { realTimer } from '../../node/daemon/p2p-service.ts'
import { SpaceReplica } from '../../sync/replica/space-replica.ts'
import { SyncSession } from '../../sync/protocol/session.ts'
import { SyncDriver } from '../../sync/protocol/sync-driver.ts'
import { SYNC_LIMITS } from '../../sync/protocol/limits.ts'
import { decodeMessage, encodeMessage } from '../../sync/protocol/messages.ts'
import { nodeCryptoProvider } from '../../node/crypto/node-provider.ts'
import { MemoryStorageAdapter } from '../../sync/storage/memory.ts'
import { idFor, keyFor, seededEnv } from '../helpers.ts'
import { link, node, type Node } from '../protocol/helpers.ts'
import { modifyRecords } from '../../sync/space/modify.ts'

/**
 * Replies stream: a reply is decided at once and built as it goes out, its changes read from
 * storage a chunk at a time, and it goes out only as fast as the transport takes it.
 */

const MiB = 1024 * 1024

async function spaceOfBigChanges(n: number, size: number) {
  const a = await node('a', 1)
  await a.replica.addMember(idFor(2), 'writer')
  const obj = await a.replica.createObject()
  for (let i = 0; i < n; i++)
    await modifyRecords(a.replica, obj, 'd', [{ id: `r${i}`, ops: [{ type: '$set', path: 'v', value: String.fromCharCode(97 + (i % 26)).repeat(size) }] }])
  return { a, obj }
}

/** Records the bytes each storage read of raw changes returns. */
function watchReads(r: Node['replica']) {
  const reads: number[] = []
  const raw = r.rawChanges.bind(r)
  r.rawChanges = async (tree, ids) => {
    const out = await raw(tree, ids)
    reads.push(out.reduce((n, x) => n + x.raw.length, 0))
    return out
  }
  return reads
}

describe('Replies are built whole in memory', () => {
  it('a 49-byte sync with count=0 is answered from storage a chunk at a time, never the whole space at once', async () => {
    const { a } = await spaceOfBigChanges(24, 400 * 1024)
    const b = await node('b', 2, a.replica.spaceId)
    await link(a, b)
    const reads = watchReads(a.replica)
    const sync = encodeMessage({ type: 'sync', spaceId: a.replica.spaceId, req: 1, fp: new Uint8Array(8), count: 0 })
    expect(sync.length).toBeLessThanOrEqual(52)
    const out = await a.session.handle('b', sync)
    const total = out.reduce((n, o) => n + o.bytes.length, 0)
    expect(total).toBeGreaterThan(9 * MiB)
    // About one message's worth per read (a read stops once it holds targetMessageBytes).
    expect(Math.max(...reads)).toBeLessThanOrEqual(SYNC_LIMITS.targetMessageBytes + 512 * 1024)
    for (const o of out) expect(o.bytes.length).toBeLessThanOrEqual(SYNC_LIMITS.maxMessageBytes)
  })

  it('the reply is decided when respond returns, and read only as it is pulled', async () => {
    const { a } = await spaceOfBigChanges(8, 400 * 1024)
    const b = await node('b', 2, a.replica.spaceId)
    await link(a, b)
    const reads = watchReads(a.replica)
    const sync = encodeMessage({ type: 'sync', spaceId: a.replica.spaceId, req: 1, fp: new Uint8Array(8), count: 0 })
    const reply = await a.session.respond('b', sync)
    expect(reads).toEqual([])
    const it = reply[Symbol.asyncIterator]()
    const first = await it.next()
    expect(first.done).toBe(false)
    expect(decodeMessage(first.value!.bytes).type).toBe('step')
    const readSoFar = reads.reduce((x, y) => x + y, 0)
    expect(readSoFar).toBeLessThan(3 * MiB)
    while (!(await it.next()).done);
    expect(reads.reduce((x, y) => x + y, 0)).toBeGreaterThan(3 * MiB)
  })
})

const nodes: SvcLibp2p[] = []
afterEach(async () => {
  await Promise.all(
    nodes.splice(0).map(async (n) => {
      await n.stop()
    }),
  )
})

async function endpoint(replica: SpaceReplica, account: number, device: number) {
  const n = await createSvcNode({ deviceKey: keyFor(device), listen: ['/ip4/127.0.0.1/tcp/0'] })
  nodes.push(n)
  const transport = await Libp2pTransport.start(n)
  const session: SyncSession = new SyncSession({
    host: { space: (id) => (id === replica.spaceId ? replica : undefined) },
    key: keyFor(account),
    peerId: transport.peerId,
    crypto: nodeCryptoProvider({ verify: 'threadpool' }),
    env: seededEnv(device),
  })
  const downs: string[] = []
  const driver = new SyncDriver({ transport, session, timer: realTimer, timeoutMs: 120_000 })
  n.addEventListener('peer:disconnect', (evt) => void downs.push(evt.detail.toString()))
  return { node: n, transport, driver, downs, session }
}

describe('sendAll ignores backpressure: 20 x 1 MiB frames reset the link', () => {
  it('an 80 MiB space syncs between two libp2p nodes on loopback in one round, with no reset and no send failure', async () => {
    // The daemon's crypto provider on both sides.
    const crypto = nodeCryptoProvider({ verify: 'threadpool' })
    const source = await SpaceReplica.create({ storage: new MemoryStorageAdapter(), crypto, env: seededEnv(60) }, keyFor(1))
    await source.addMember(idFor(2), 'writer')
    const obj = await source.createObject()
    for (let i = 0; i < 80; i++)
      await modifyRecords(source, obj, 'd', [{ id: `r${i}`, ops: [{ type: '$set', path: 'v', value: String.fromCharCode(97 + (i % 26)).repeat(MiB - 4096) }] }])
    const a = { replica: source }
    const total = source.acl.entries.size + (await source.treeIndex(obj)).size
    const target = await SpaceReplica.open({ storage: new MemoryStorageAdapter(), crypto, env: seededEnv(61) }, a.replica.spaceId, keyFor(2))
    const A = await endpoint(a.replica, 1, 62)
    const B = await endpoint(target, 2, 63)
    await B.node.dial(A.node.getMultiaddrs()[0])
    for (let i = 0; i < 200 && !(A.transport.peers().length && B.transport.peers().length); i++) await new Promise((r) => setTimeout(r, 10))
    // libp2p settles on one connection of the two both sides may dial at first: let it.
    await new Promise((r) => setTimeout(r, 1000))
    for (let i = 0; i < 200 && !(A.transport.peers().length && B.transport.peers().length); i++) await new Promise((r) => setTimeout(r, 10))
    A.downs.length = 0
    B.downs.length = 0
    const round = await B.driver.syncSpace(A.transport.peerId, a.replica.spaceId)
    expect(round).toMatchObject({ ok: true, outcome: 'synced' })
    // The round's answer streams on after its first step; once it is all in, nothing differs.
    const fromA = B.session.countersOf(A.transport.peerId)
    for (let i = 0; i < 1200 && fromA.changesAccepted < total && !A.downs.length; i++) await new Promise((r) => setTimeout(r, 50))
    expect(A.downs).toEqual([])
    expect(B.downs).toEqual([])
    expect(fromA.changesAccepted).toBe(total)
    expect(await B.driver.syncSpace(A.transport.peerId, a.replica.spaceId)).toMatchObject({ ok: true, outcome: 'in_sync' })
    expect(B.driver.sendFailures).toBe(0)
    expect(A.driver.sendFailures).toBe(0)
    expect(A.driver.sendStalls ?? 0).toBe(0)
    expect(A.transport.drops).toEqual({})
    expect(B.transport.drops).toEqual({})
    expect(A.downs).toEqual([])
    expect(B.downs).toEqual([])
    expect(await target.stateDigest()).toBe(await a.replica.stateDigest())
  }, 180_000)
})
