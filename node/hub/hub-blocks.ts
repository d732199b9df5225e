import { errField, type Logger } from '../../sync/core/log.ts'
import { SerialQueue } from '../../sync/core/serial-queue.ts'
import { toBase58 } from '../../sync/core/ids.ts'
import { sha256 } from '../../sync/crypto/hash.ts'
import type { HubCore } from '../../sync/hub/hub-core.ts'
import { P2P } from '../../sync/p2p/constants.ts'
import { Libp2pTransport } from '../../sync/p2p/libp2p-transport.ts'
import { BLOCKS_WIRE, decodeBlocksMessage, encodeBlockFrameParts, encodeBlocksMessage, type BlocksMessage } from '../../sync/protocol/blocks-wire.ts'
import type { SvcLibp2p } from '../p2p/libp2p-node.ts'
import type { HubStore } from './store/hub-store.ts'

/** Requests one peer may have queued with the hub; one more is a fault and is dropped. */
const MAX_QUEUED_REQUESTS = 4

/**
 * The hub's side of files' block exchange (`/svc/blocks/1.0.0`, docs/hub.md "Files"): it keeps
 * the sealed blocks that writers of a kept space hand it (`put`: checked against the address,
 * SHA-256 of the bytes, and counted against the space's registrants' byte quotas), answers `has`
 * so a device can count the hub's copy as a backup, and serves `want` to readers. Access is the
 * kept replica's ACL, as for changes; a stranger's every request is answered as for a block the
 * hub does not hold.
 */
export class HubBlocks {
  private readonly queues = new Map<string, { queue: SerialQueue; waiting: number }>()
  readonly counters = { put: 0, served: 0, none: 0, has: 0, refused: 0, malformed: 0 }

  private constructor(
    private readonly core: HubCore,
    private readonly store: HubStore,
    private readonly transport: Libp2pTransport,
    private readonly identityOf: (peer: string) => string | undefined,
    private readonly fault: (peer: string) => void,
    private readonly log: Logger,
  ) {}

  static async start(o: {
    node: SvcLibp2p
    core: HubCore
    store: HubStore
    identityOf: (peer: string) => string | undefined
    refused: (peer: string) => boolean
    fault: (peer: string) => void
    log: Logger
  }): Promise<HubBlocks> {
    const transport = await Libp2pTransport.start(o.node, {
      protocol: BLOCKS_WIRE.protocol,
      maxFrameBytes: BLOCKS_WIRE.maxFrameBytes,
      maxQueuedSendBytes: 8 * 1024 * 1024,
      sendWatermarkBytes: 2 * 1024 * 1024,
      maxQueuedFrames: 16,
      maxReadBufferBytes: BLOCKS_WIRE.maxFrameBytes + 16 + P2P.maxStreamWindowBytes,
    })
    transport.setPeerFilter(o.refused)
    transport.onPeerFault(o.fault)
    const b = new HubBlocks(o.core, o.store, transport, o.identityOf, o.fault, o.log)
    transport.onMessage((peer, bytes) => b.receive(peer, bytes))
    transport.onPeerDown((peer) => void b.queues.delete(peer))
    return b
  }

  queued(): number {
    let n = 0
    for (const q of this.queues.values()) n += q.waiting
    return n
  }

  close(): Promise<void> {
    return this.transport.close()
  }

  private receive(peer: string, bytes: Uint8Array) {
    let m: BlocksMessage
    try {
      m = decodeBlocksMessage(bytes)
    } catch {
      this.counters.malformed++
      this.fault(peer)
      return
    }
    if (m.kind !== 'want' && m.kind !== 'has' && m.kind !== 'put') return
    let q = this.queues.get(peer)
    if (!q) this.queues.set(peer, (q = { queue: new SerialQueue(), waiting: 0 }))
    if (q.waiting >= MAX_QUEUED_REQUESTS) {
      this.fault(peer)
      return
    }
    q.waiting++
    const entry = q
    void entry.queue
      .run(() => this.serve(peer, m))
      .catch((err: unknown) => this.log.warn('serving a block request failed', { peer, err: errField(err) }))
      .finally(() => entry.waiting--)
  }

  /** What the peer's proved account may do with a kept space's blocks. */
  private async access(peer: string, spaceId: string): Promise<'write' | 'read' | undefined> {
    const identity = this.identityOf(peer)
    if (identity === undefined) return undefined
    const r = await this.core.space(spaceId)
    if (!r?.known) return undefined
    const st = r.acl.current()
    if (st.canWrite(identity)) return 'write'
    return st.canRead(identity) ? 'read' : undefined
  }

  private async serve(peer: string, m: Extract<BlocksMessage, { kind: 'want' | 'has' | 'put' }>) {
    const access = await this.access(peer, m.spaceId)
    if (m.kind === 'put') {
      const ok = access === 'write' && toBase58(sha256(m.bytes)) === m.id && this.core.admitChanges(m.spaceId, this.identityOf(peer)!, 0, m.bytes.byteLength)
      if (ok) {
        await this.store.putBlock(m.spaceId, m.id, m.bytes)
        this.counters.put++
      } else this.counters.refused++
      this.transport.send(peer, encodeBlocksMessage({ kind: 'have', reqId: m.reqId, all: ok }))
      return
    }
    if (m.kind === 'has') {
      this.counters.has++
      const all = access !== undefined && m.ids.length > 0 && (await this.store.hasBlocks(m.spaceId, m.ids)).every(Boolean)
      this.transport.send(peer, encodeBlocksMessage({ kind: 'have', reqId: m.reqId, all }))
      return
    }
    const none: string[] = []
    for (const id of m.ids) {
      const bytes = access ? await this.store.getBlock(m.spaceId, id) : undefined
      if (!bytes) {
        none.push(id)
        continue
      }
      await this.transport.drain(peer)
      this.transport.sendParts(peer, encodeBlockFrameParts(m.reqId, id, bytes))
      this.counters.served++
    }
    if (none.length) {
      this.counters.none += none.length
      this.transport.send(peer, encodeBlocksMessage({ kind: 'none', reqId: m.reqId, ids: none }))
    }
  }
}
