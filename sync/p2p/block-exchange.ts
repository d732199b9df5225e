import type { Env } from '../core/env.ts'
import { errField, type Logger } from '../core/log.ts'
import { SerialQueue } from '../core/serial-queue.ts'
import { BLOCKS_WIRE, decodeBlocksMessage, encodeBlockFrameParts, encodeBlocksMessage, MalformedBlocks, type BlocksMessage } from '../protocol/blocks-wire.ts'
import { Libp2pTransport } from './libp2p-transport.ts'
import { P2P } from './constants.ts'
import type { SvcLibp2p } from './node-options.ts'

/** Requests (want or has) one peer may have queued with us; one more is a fault and is dropped. */
const MAX_QUEUED_REQUESTS = 4
/** Wants we keep in flight to one peer while fetching (the pipeline depth). */
const PIPELINE = 2

/**
 * What the exchange runs with. Its host (the daemon's blocks protocol, node/p2p/protocols/blocks.ts;
 * a page's BrowserSync) hands it the peer trust head sync built, the spaces held, and the
 * account's block store; it then hands itself to the files service as its block source
 * (`FilesService.attachNetwork`). Shaped here, not imported, so sync/p2p stays below the
 * modules: the files service and the ACL state fit these shapes.
 */
export interface BlockExchangeOptions {
  node: SvcLibp2p
  env: Pick<Env, 'setTimer'>
  log: Logger
  /** The account a peer proved on its head-sync link (undefined until it has). */
  identityOf(peer: string): string | undefined
  /** Peers backed off for misbehaving: their streams are refused. */
  refused(peer: string): boolean
  /** Scores a fault of a peer (`weight` 'max' backs it off at once). */
  fault(peer: string, weight?: 'max'): void
  /** Whether the peer is one of our hubs: it keeps our spaces' blocks as it keeps their changes. */
  custodian?(peer: string): boolean
  spaces: {
    techSpaceId: string
    replica(spaceId: string): { acl: { current(): { readKeyId?: unknown; canRead(identity: string): boolean } } } | undefined
  }
  /** The account's blocks (files' BlockStore): what is served, and what `has` is answered from. */
  store: {
    get(spaceId: string, id: string): Promise<Uint8Array | undefined>
    has(spaceId: string, ids: readonly string[]): Promise<boolean[]>
  }
  /** A want or has with no answer for this long is given up on (files' FILES.blockTimeoutMs). */
  blockTimeoutMs: number
}

interface Pending {
  peer: string
  onMessage: (m: BlocksMessage) => void
}

/**
 * Files' block exchange (`/svc/blocks/1.0.0`, docs/files.md "Block exchange"): serves our blocks
 * to peers that may read their space, and fetches missing ones from such peers for the files
 * service (it is the service's BlockSource).
 *
 * Serving: a peer's want or has is answered only when the account it proved on head sync
 * (`identityOf`) may read the space at our ACL state (a member of any role, a guest too); otherwise, and for a stranger
 * that proved nothing, every id is answered `none`, exactly like blocks we do not hold. Each
 * peer's requests are answered one at a time, at most MAX_QUEUED_REQUESTS wait (more is a
 * fault), each want names at most 16 blocks, and every block waits for the peer to drain the
 * previous ones: a peer costs bounded memory and gets bandwidth only as fast as it reads.
 *
 * Fetching: asks peers that may read the space in turn, 16 blocks per want, two wants in
 * flight; every block is checked against its address by the files service before it is stored
 * (a peer sending a block that does not match is a fault). Blocks stored stay stored, so a
 * fetch cut off by a peer leaving resumes with the blocks still missing.
 *
 * Runtime-neutral: the daemon runs it over TCP and WebSockets, a page (sync/browser) over
 * WebSockets to its hubs and daemons, so both fetch and serve by one code and one wire.
 */
export class BlockExchange {
  private readonly queues = new Map<string, { queue: SerialQueue; waiting: number }>()
  private readonly pending = new Map<string, Pending>()
  private nextReq = 1
  /** Frames refused or dropped, by reason (debug and the security tests). */
  readonly drops: Record<string, number> = {}
  /** Requests answered, by outcome. */
  readonly served = { blocks: 0, none: 0, has: 0 }
  /** Blocks fetched from peers that checked out and were stored. */
  fetched = 0
  /** Blocks handed to our hubs. */
  uploaded = 0

  private constructor(
    private readonly o: BlockExchangeOptions,
    private readonly transport: Libp2pTransport,
  ) {}

  static async start(o: BlockExchangeOptions): Promise<BlockExchange> {
    const transport = await Libp2pTransport.start(o.node, {
      protocol: BLOCKS_WIRE.protocol,
      maxFrameBytes: BLOCKS_WIRE.maxFrameBytes,
      maxQueuedSendBytes: 8 * 1024 * 1024,
      sendWatermarkBytes: 2 * 1024 * 1024,
      maxQueuedFrames: 16,
      maxReadBufferBytes: BLOCKS_WIRE.maxFrameBytes + 16 + P2P.maxStreamWindowBytes,
    })
    transport.setPeerFilter((peer) => o.refused(peer))
    transport.onPeerFault((peer) => o.fault(peer, 'max'))
    const x = new BlockExchange(o, transport)
    transport.onMessage((peer, bytes) => x.receive(peer, bytes))
    transport.onPeerDown((peer) => x.peerDown(peer))
    return x
  }

  /** Ends every fetch in flight (their blocks count as not delivered) and the protocol. The host detaches it from the files service first. */
  async close(): Promise<void> {
    for (const p of this.pending.values()) p.onMessage({ kind: 'none', reqId: -1, ids: [] })
    await this.transport.close()
  }

  /** Whether a peer may get blocks of a space: it proved an account that may read it at our ACL state. */
  mayRead(peer: string, spaceId: string): boolean {
    const identity = this.o.identityOf(peer)
    if (identity === undefined) return false
    const replica = this.o.spaces.replica(spaceId)
    if (!replica || spaceId === this.o.spaces.techSpaceId) return false
    const st = replica.acl.current()
    return st.readKeyId !== undefined && st.canRead(identity)
  }

  private receive(peer: string, bytes: Uint8Array): void {
    let m: BlocksMessage
    try {
      m = decodeBlocksMessage(bytes)
    } catch (err) {
      this.count(err instanceof MalformedBlocks ? 'malformed' : 'error')
      this.o.fault(peer)
      return
    }
    if (m.kind === 'want' || m.kind === 'has') {
      this.enqueue(peer, m)
      return
    }
    const p = this.pending.get(`${peer}/${m.reqId}`)
    // A late answer to a request that timed out is honest; it is counted, not faulted.
    if (!p || p.peer !== peer) {
      this.count('unsolicited')
      return
    }
    p.onMessage(m)
  }

  /** Requests are answered in the background, one at a time per peer: reading never waits on serving. */
  private enqueue(peer: string, m: Extract<BlocksMessage, { kind: 'want' | 'has' }>) {
    let q = this.queues.get(peer)
    if (!q) this.queues.set(peer, (q = { queue: new SerialQueue(), waiting: 0 }))
    if (q.waiting >= MAX_QUEUED_REQUESTS) {
      this.count('over_queue')
      this.o.fault(peer)
      return
    }
    q.waiting++
    const entry = q
    void entry.queue
      .run(() => (m.kind === 'want' ? this.serveWant(peer, m) : this.serveHas(peer, m)))
      .catch((err: unknown) => {
        this.count('serve_failed')
        this.o.log.warn('serving a block request failed', { peer, err: errField(err) })
      })
      .finally(() => entry.waiting--)
  }

  private async serveWant(peer: string, m: Extract<BlocksMessage, { kind: 'want' }>) {
    const allowed = this.mayRead(peer, m.spaceId)
    if (!allowed) this.count('not_member')
    const none: string[] = []
    for (const id of m.ids) {
      const bytes = allowed ? await this.o.store.get(m.spaceId, id) : undefined
      if (!bytes || id.startsWith('variant.')) {
        none.push(id)
        continue
      }
      await this.transport.drain(peer)
      this.transport.sendParts(peer, encodeBlockFrameParts(m.reqId, id, bytes))
      this.served.blocks++
    }
    if (none.length) {
      this.served.none += none.length
      this.transport.send(peer, encodeBlocksMessage({ kind: 'none', reqId: m.reqId, ids: none }))
    }
  }

  private async serveHas(peer: string, m: Extract<BlocksMessage, { kind: 'has' }>) {
    const allowed = this.mayRead(peer, m.spaceId)
    const all = allowed && m.ids.length > 0 && (await this.o.store.has(m.spaceId, m.ids)).every(Boolean)
    this.served.has++
    this.transport.send(peer, encodeBlocksMessage({ kind: 'have', reqId: m.reqId, all }))
  }

  private peerDown(peer: string) {
    this.queues.delete(peer)
    for (const p of this.pending.values()) if (p.peer === peer) p.onMessage({ kind: 'none', reqId: -1, ids: [] })
  }

  /** Connected peers whose proved account may read the space (ours included), and our hubs, in peer id order. */
  private candidates(spaceId: string): string[] {
    return this.transport.peers().filter((p) => this.mayRead(p, spaceId) || this.o.custodian?.(p) === true)
  }

  async fetch(spaceId: string, ids: readonly string[], onBlock: (id: string, bytes: Uint8Array) => Promise<boolean>): Promise<string[]> {
    const remaining = new Set(ids)
    for (const peer of this.candidates(spaceId)) {
      if (remaining.size === 0) break
      const chunks: string[][] = []
      const list = [...remaining]
      for (let i = 0; i < list.length; i += BLOCKS_WIRE.wantMax) chunks.push(list.slice(i, i + BLOCKS_WIRE.wantMax))
      let next = 0
      const lane = async () => {
        while (next < chunks.length) {
          const chunk = chunks[next++]
          const got = await this.want(peer, spaceId, chunk, onBlock)
          for (const id of got) remaining.delete(id)
          if (got.length === 0) return
        }
      }
      await Promise.all(Array.from({ length: PIPELINE }, lane))
    }
    return [...remaining]
  }

  /** One want to one peer: the ids it delivered (and that checked out), once every id is answered or it went quiet. */
  private want(peer: string, spaceId: string, ids: string[], onBlock: (id: string, bytes: Uint8Array) => Promise<boolean>): Promise<string[]> {
    const reqId = this.nextReq++
    const key = `${peer}/${reqId}`
    const open = new Set(ids)
    const got: string[] = []
    return new Promise<string[]>((resolve) => {
      let stopTimer: () => void = () => undefined
      // Blocks are checked and stored side by side, not one after another: a store is a few
      // disk round trips, and in a row they, not the network, set the pace of a transfer. At
      // most the want's 16 blocks are out at once.
      const storing: Promise<void>[] = []
      const finish = () => {
        stopTimer()
        this.pending.delete(key)
        void Promise.all(storing).then(() => resolve(got))
      }
      const arm = () => {
        stopTimer()
        stopTimer = this.o.env.setTimer(this.o.blockTimeoutMs, finish)
      }
      this.pending.set(key, {
        peer,
        onMessage: (m) => {
          if (m.reqId === -1) {
            finish()
            return
          }
          if (m.kind === 'block') {
            if (!open.delete(m.id)) {
              this.count('unasked_block')
              this.o.fault(peer)
              return
            }
            arm()
            storing.push(
              onBlock(m.id, m.bytes)
                .catch(() => false)
                .then((stored) => {
                  if (stored) {
                    got.push(m.id)
                    this.fetched++
                  } else {
                    this.count('bad_block')
                    this.o.fault(peer, 'max')
                  }
                }),
            )
          } else if (m.kind === 'none') for (const id of m.ids) open.delete(id)
          else this.count('unexpected')
          if (open.size === 0) finish()
        },
      })
      arm()
      try {
        this.transport.send(peer, encodeBlocksMessage({ kind: 'want', reqId, spaceId, ids }))
      } catch {
        finish()
      }
    })
  }

  async confirm(spaceId: string, ids: readonly string[]): Promise<string | undefined> {
    if (ids.length === 0 || ids.length > BLOCKS_WIRE.hasMax) return undefined
    for (const peer of this.candidates(spaceId)) {
      let all = await this.has(peer, spaceId, [...ids])
      // A hub takes the blocks we hand it (a peer only fetches what it wants): upload, then ask again.
      if (!all && this.o.custodian?.(peer) === true && (await this.upload(peer, spaceId, ids))) all = await this.has(peer, spaceId, [...ids])
      if (all) return this.o.identityOf(peer)
    }
    return undefined
  }

  /** Hands a hub every one of these blocks held here, one at a time; false when one was refused or missing. */
  private async upload(peer: string, spaceId: string, ids: readonly string[]): Promise<boolean> {
    for (const id of ids) {
      const bytes = await this.o.store.get(spaceId, id)
      if (!bytes) return false
      const reqId = this.nextReq++
      const key = `${peer}/${reqId}`
      await this.transport.drain(peer)
      const ok = await new Promise<boolean>((resolve) => {
        const stop = this.o.env.setTimer(this.o.blockTimeoutMs, () => done(false))
        const done = (v: boolean) => {
          stop()
          this.pending.delete(key)
          resolve(v)
        }
        this.pending.set(key, { peer, onMessage: (m) => done(m.kind === 'have' && m.all) })
        try {
          this.transport.send(peer, encodeBlocksMessage({ kind: 'put', reqId, spaceId, id, bytes }))
        } catch {
          done(false)
        }
      })
      if (!ok) return false
      this.uploaded++
    }
    return true
  }

  private has(peer: string, spaceId: string, ids: string[]): Promise<boolean> {
    const reqId = this.nextReq++
    const key = `${peer}/${reqId}`
    return new Promise<boolean>((resolve) => {
      const stop = this.o.env.setTimer(this.o.blockTimeoutMs, () => done(false))
      const done = (all: boolean) => {
        stop()
        this.pending.delete(key)
        resolve(all)
      }
      this.pending.set(key, { peer, onMessage: (m) => done(m.kind === 'have' && m.all) })
      try {
        this.transport.send(peer, encodeBlocksMessage({ kind: 'has', reqId, spaceId, ids }))
      } catch {
        done(false)
      }
    })
  }

  stats() {
    return { peers: this.transport.peers().length, served: { ...this.served }, fetched: this.fetched, uploaded: this.uploaded, drops: { ...this.drops } }
  }

  private count(reason: string) {
    this.drops[reason] = (this.drops[reason] ?? 0) + 1
  }
}
