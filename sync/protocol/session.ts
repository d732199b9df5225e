import type { Env } from '../core/env.ts'
import type { CryptoProvider } from '../crypto/provider.ts'
import { identityOf, type KeyPair } from '../crypto/keys.ts'
import { contentId } from '../crypto/hash.ts'
import { decodeChange } from '../dag/change.ts'
import type { SpaceReplica } from '../replica/space-replica.ts'
import { authBytes, signAuth, verifyAuth } from './auth.ts'
import { NONCE_BYTES, SYNC_LIMITS } from './limits.ts'
import {
  decodeMessage, encodeMessage, isQuestion, ProtocolError,
  type ErrorCode, type HeadsItem, type Message, type RangeItem, type StepMsg, type SyncMsg,
} from './messages.ts'
import { answerRanges, describeRange, openFingerprint, rootMatches } from './reconcile.ts'
import { SpaceIndex } from './range-index.ts'

/**
 * Head-sync session steps (DESIGN 5; docs/protocol.md is the normative text), in the style of
 * y-protocols' sync.js: `handle(peer, bytes)` takes one message from a peer and returns the
 * replies, touching nothing but the replicas the host hands out. No clock, no timers, no
 * sockets: time and randomness come from the injected Env, and a driver (sync-driver.ts) moves
 * the bytes. The simulator and the daemon run this same code.
 *
 * Outline of one exchange, opened by A with B about one space:
 *   A -> B  sync   whole-space fingerprint (in sync: B answers `done`, one round trip)
 *   B -> A  step   B's side of the ranges that differ (child fingerprints, or its elements)
 *   ...     step   ranges narrow until differing trees are known; then per tree `heads` go
 *                  one way, the changes the other lacks (all not reachable from its heads and
 *                  its sampled history) go back, with `heads` in return when the receiver lacks some of the sender's;
 *                  a tree the other side lacks entirely is pushed whole, and one we lack is
 *                  asked for by position (`wants`)
 *   ...     done   when a question has nothing left to answer.
 * Every message but `done`, `error` and answer-only steps is a question and gets exactly one
 * reply, so the exchange ends when a side has nothing to ask. Each side refuses to continue an
 * exchange past SYNC_LIMITS.maxHops steps, so two peers never loop.
 *
 * Access: a link is authenticated once (hello/auth, auth.ts): after that every message on it is
 * from that account. A side answers space messages only from identities that can read the
 * space at its current ACL (error `not_member` otherwise, carrying no data), and sends changes,
 * heads or ranges only to such identities. Changes from anyone are ingested: the replica checks
 * every one of them, and this is how a removed member's writes from before its removal still
 * reach the space.
 */

export interface SyncHost {
  /** The replica of a space this peer holds, if any. */
  space(spaceId: string): SpaceReplica | undefined | Promise<SpaceReplica | undefined>
  /** Asked when an authenticated peer syncs a space this peer does not hold; undefined refuses. */
  accept?(spaceId: string, identity: string): Promise<SpaceReplica | undefined>
}

export interface SessionOptions {
  host: SyncHost
  /** The account key: it authenticates this peer's links. */
  key: KeyPair
  /** This peer's transport id (bound into authentication signatures). */
  peerId: string
  crypto: CryptoProvider
  env: Env
}

export interface Outgoing {
  to: string
  bytes: Uint8Array
}

/** Per-peer counters: traffic, and every drop or refusal with its reason. */
export interface PeerCounters {
  messagesIn: number
  messagesOut: number
  bytesIn: number
  bytesOut: number
  /** Messages dropped, by reason (ProtocolError codes, bad_auth, unauthenticated, ...). */
  dropped: Record<string, number>
  /** Space messages refused because the peer cannot read the space. */
  denied: number
  changesIn: number
  changesAccepted: number
  changesOut: number
  /** Changes the replica refused, by RejectReason. */
  rejected: Record<string, number>
}

export type ExchangeOutcome = 'in_sync' | 'synced' | 'error' | 'abandoned'

/** How an exchange this peer opened ended, with its cost. */
export interface ExchangeEnd extends ExchangeCost {
  peer: string
  spaceId: string
  req: number
  outcome: ExchangeOutcome
  error?: ErrorCode
}

/** What an exchange cost, counted on this side. */
export interface ExchangeCost {
  /** Questions this side sent (the opening `sync` included): the round trips. */
  roundTrips: number
  messagesOut: number
  messagesIn: number
  bytesOut: number
  bytesIn: number
  changesOut: number
  changesIn: number
}

interface Link {
  /** Our challenge to the peer, fresh per link epoch. */
  nonce: Uint8Array
  /** The account the peer proved it holds, once it has. */
  identity?: string
  /** Per space: our pushes of own changes to this peer after it refused us (see pushOwnChanges). */
  pushes: Map<string, { key: string; attempts: number; acked: boolean }>
  /** Pushes awaiting the peer's `done`, by req. */
  pushAcks: Map<number, { spaceId: string; key: string }>
  /** Space messages that arrived before the peer authenticated, handled once it does. */
  stash: Uint8Array[]
}

type Exchange = Omit<ExchangeEnd, 'outcome' | 'error'> & { steps: number }

export type OpenResult = { req: number; out: Outgoing[] } | { error: 'unauthenticated' | 'unknown_space' | 'busy'; out: Outgoing[] }

const newCounters = (): PeerCounters => ({
  messagesIn: 0, messagesOut: 0, bytesIn: 0, bytesOut: 0, dropped: {}, denied: 0,
  changesIn: 0, changesAccepted: 0, changesOut: 0, rejected: {},
})

const bump = (rec: Record<string, number>, k: string, n = 1) => {
  rec[k] = (rec[k] ?? 0) + n
}

const STEP_OVERHEAD = 128
const STASH_MAX = 8
const STASH_MAX_BYTES = 1024 * 1024
const CHANGE_OVERHEAD = 8

export class SyncSession {
  readonly me: string
  private readonly links = new Map<string, Link>()
  private readonly counters = new Map<string, PeerCounters>()
  private readonly exchanges = new Map<string, Exchange>()
  private readonly indexes = new WeakMap<SpaceReplica, SpaceIndex>()
  private readonly orderCache = new WeakMap<object, { size: number; list: Array<{ id: string; lamport: number }> }>()
  /** The last unexpected error a handler swallowed (for debugging; counted as dropped.internal). */
  lastError: unknown
  onExchangeEnd?: (e: ExchangeEnd) => void
  onAuthenticated?: (peer: string, identity: string) => void

  constructor(private readonly opts: SessionOptions) {
    this.me = identityOf(opts.key.publicKey)
  }

  // ------------------------------------------------------------------ links

  /** A transport link came up: a fresh epoch, and our challenge to the peer. */
  peerUp(peer: string): Outgoing[] {
    this.links.set(peer, { nonce: this.opts.env.randomBytes(NONCE_BYTES), pushes: new Map(), pushAcks: new Map(), stash: [] })
    return this.emit(peer, [{ type: 'hello', identity: this.me, nonce: this.links.get(peer)!.nonce }])
  }

  /** The link went down: forget its authentication and end its exchanges. */
  peerDown(peer: string): void {
    this.links.delete(peer)
    for (const [k, ex] of this.exchanges) if (ex.peer === peer) this.end(k, ex, 'abandoned')
  }

  /** Our challenge again (a hello), e.g. when the first one may have been lost. */
  challenge(peer: string): Outgoing[] {
    const link = this.link(peer)
    return this.emit(peer, [{ type: 'hello', identity: this.me, nonce: link.nonce }])
  }

  /** The account a peer has proved it holds on this link, if it has. */
  identityOf(peer: string): string | undefined {
    return this.links.get(peer)?.identity
  }

  countersOf(peer: string): PeerCounters {
    let c = this.counters.get(peer)
    if (!c) this.counters.set(peer, (c = newCounters()))
    return c
  }

  /** Every peer's counters (a copy is not made: treat as read-only). */
  allCounters(): ReadonlyMap<string, PeerCounters> {
    return this.counters
  }

  private link(peer: string): Link {
    let l = this.links.get(peer)
    if (!l) this.links.set(peer, (l = { nonce: this.opts.env.randomBytes(NONCE_BYTES), pushes: new Map(), pushAcks: new Map(), stash: [] }))
    return l
  }

  // ------------------------------------------------------------------ exchanges we open

  /** Opens an exchange about a space with a peer: the `sync` message to send. */
  async open(peer: string, spaceId: string): Promise<OpenResult> {
    const link = this.links.get(peer)
    if (!link?.identity) return { error: 'unauthenticated', out: this.challenge(peer) }
    const r = await this.opts.host.space(spaceId)
    if (!r) return { error: 'unknown_space', out: [] }
    let open = 0
    for (const ex of this.exchanges.values()) if (ex.peer === peer) open++
    if (open >= SYNC_LIMITS.maxOpenExchanges) return { error: 'busy', out: [] }
    let req: number
    do {
      const b = this.opts.env.randomBytes(4)
      req = ((b[0] << 24) | (b[1] << 16) | (b[2] << 8) | b[3]) >>> 0
    } while (this.exchanges.has(key(peer, req)))
    const ex: Exchange = {
      peer, spaceId, req, roundTrips: 0, messagesOut: 0, messagesIn: 0, bytesOut: 0, bytesIn: 0, changesOut: 0, changesIn: 0, steps: 0,
    }
    this.exchanges.set(key(peer, req), ex)
    const { fp, count } = openFingerprint(this.indexOf(r).current())
    return { req, out: this.emit(peer, [{ type: 'sync', spaceId, req, fp, count }], ex) }
  }

  /** Gives up on an exchange (the driver's timeout). */
  abandon(peer: string, req: number): void {
    const k = key(peer, req)
    const ex = this.exchanges.get(k)
    if (ex) this.end(k, ex, 'abandoned')
  }

  private end(k: string, ex: Exchange, outcome: ExchangeOutcome, error?: ErrorCode) {
    this.exchanges.delete(k)
    const { steps: _steps, ...rest } = ex
    this.onExchangeEnd?.({ ...rest, outcome, ...(error ? { error } : {}) })
  }

  // ------------------------------------------------------------------ one incoming message

  /** Handles one message from a peer and returns the replies. Never throws. */
  async handle(peer: string, bytes: Uint8Array): Promise<Outgoing[]> {
    const c = this.countersOf(peer)
    c.messagesIn++
    c.bytesIn += bytes.length
    let m: Message
    try {
      m = decodeMessage(bytes)
    } catch (err) {
      bump(c.dropped, err instanceof ProtocolError ? err.code : 'malformed')
      return []
    }
    const k = 'req' in m ? key(peer, m.req) : ''
    // Until the peer authenticates its messages are stashed, not part of any exchange yet.
    const ex = k && this.links.get(peer)?.identity ? this.exchanges.get(k) : undefined
    if (ex) {
      ex.messagesIn++
      ex.bytesIn += bytes.length
      ex.steps++
      if (m.type === 'step') ex.changesIn += m.changes.length
    }
    try {
      const replies = await this.dispatch(peer, m, ex, bytes)
      const out = this.emit(peer, replies, ex)
      if (m.type === 'auth') {
        // Now authenticated: handle what the peer sent before it was.
        const link = this.links.get(peer)
        const stash = link?.identity ? link.stash.splice(0) : []
        for (const b of stash) {
          c.messagesIn--
          c.bytesIn -= b.length
          out.push(...(await this.handle(peer, b)))
        }
      }
      if (ex && this.exchanges.get(k) === ex) {
        if (m.type === 'done') this.end(k, ex, ex.steps === 1 ? 'in_sync' : 'synced')
        else if (m.type === 'error') this.end(k, ex, 'error', m.code)
        else if (m.type === 'step' && !replies.some((r) => r.type === 'step' && isQuestion(r))) this.end(k, ex, 'synced')
      }
      return out
    } catch (err) {
      this.lastError = err
      bump(c.dropped, 'internal')
      return []
    }
  }

  private emit(peer: string, msgs: Message[], ex?: Exchange): Outgoing[] {
    const c = this.countersOf(peer)
    return msgs.map((m) => {
      const bytes = encodeMessage(m)
      c.messagesOut++
      c.bytesOut += bytes.length
      if (m.type === 'step') c.changesOut += m.changes.length
      if (ex && 'req' in m && m.req === ex.req) {
        ex.messagesOut++
        ex.bytesOut += bytes.length
        if (m.type === 'sync' || (m.type === 'step' && isQuestion(m))) ex.roundTrips++
        if (m.type === 'step') ex.changesOut += m.changes.length
      }
      return { to: peer, bytes }
    })
  }

  private async dispatch(peer: string, m: Message, ex: Exchange | undefined, raw: Uint8Array): Promise<Message[]> {
    const c = this.countersOf(peer)
    if (m.type === 'hello') {
      // Answer every challenge; the signature is bound to this link and this nonce only.
      const signature = await signAuth(this.opts.crypto, this.opts.key, authBytes(this.me, m.identity, this.opts.peerId, peer, m.nonce))
      return [{ type: 'auth', identity: this.me, signature }]
    }
    if (m.type === 'auth') {
      const link = this.links.get(peer)
      const ok = !!link && (await verifyAuth(this.opts.crypto, m.identity, authBytes(m.identity, this.me, peer, this.opts.peerId, link.nonce), m.signature))
      if (!ok) {
        bump(c.dropped, 'bad_auth')
        return []
      }
      if (link!.identity !== m.identity) {
        link!.identity = m.identity
        this.onAuthenticated?.(peer, m.identity)
      }
      return []
    }
    const identity = this.links.get(peer)?.identity
    if (!identity) {
      // Challenge the peer; keep a few of its messages to handle once it has answered.
      const link = this.link(peer)
      const hello: Message = { type: 'hello', identity: this.me, nonce: link.nonce }
      if (link.stash.length < STASH_MAX && link.stash.reduce((n, b) => n + b.length, raw.length) <= STASH_MAX_BYTES) {
        link.stash.push(raw)
        return [hello]
      }
      bump(c.dropped, 'unauthenticated')
      const asks = m.type === 'sync' || (m.type === 'step' && isQuestion(m))
      return asks ? [hello, { type: 'error', spaceId: m.spaceId, req: m.req, code: 'unauthenticated' }] : [hello]
    }
    switch (m.type) {
      case 'sync':
        return this.onSync(peer, identity, m)
      case 'step':
        return this.onStep(peer, identity, m)
      case 'done': {
        // The ack of a push of our own changes (see pushOwnChanges).
        const link = this.links.get(peer)!
        const ack = link.pushAcks.get(m.req)
        if (ack && ack.spaceId === m.spaceId) {
          link.pushAcks.delete(m.req)
          const st = link.pushes.get(m.spaceId)
          if (st?.key === ack.key) st.acked = true
        } else if (!ex) bump(c.dropped, 'stale')
        return []
      }
      case 'error':
        if (!ex) {
          bump(c.dropped, 'stale')
          return []
        }
        return m.code === 'not_member' ? this.pushOwnChanges(peer, identity, m.spaceId, m.req) : []
    }
  }

  // ------------------------------------------------------------------ space messages

  private async replicaFor(spaceId: string, identity: string): Promise<SpaceReplica | undefined> {
    const r = await this.opts.host.space(spaceId)
    if (r) return r
    return this.opts.host.accept ? this.opts.host.accept(spaceId, identity) : undefined
  }

  /** A peer may be served when it can read the space at our current ACL (or we hold nothing yet). */
  private mayRead(r: SpaceReplica, identity: string): boolean {
    return !r.known || r.acl.current().canRead(identity)
  }

  indexOf(r: SpaceReplica): SpaceIndex {
    let idx = this.indexes.get(r)
    if (!idx) this.indexes.set(r, (idx = new SpaceIndex(r)))
    return idx
  }

  private async onSync(peer: string, identity: string, m: SyncMsg): Promise<Message[]> {
    const r = await this.replicaFor(m.spaceId, identity)
    if (!r) return [{ type: 'error', spaceId: m.spaceId, req: m.req, code: 'unknown_space' }]
    if (!this.mayRead(r, identity)) {
      this.countersOf(peer).denied++
      return [{ type: 'error', spaceId: m.spaceId, req: m.req, code: 'not_member' }]
    }
    const index = this.indexOf(r).current()
    if (rootMatches(index, m.fp, m.count)) return [{ type: 'done', spaceId: m.spaceId, req: m.req }]
    if (m.count === 0 && r.known) {
      // The peer holds nothing of the space: push it whole, ACL first.
      const plan = new ChangePlan(r.spaceId)
      await this.planWholeSpace(r, plan)
      return this.steps(r, m.spaceId, m.req, 1, [], [], [], plan, true)
    }
    return [step(m.spaceId, m.req, 1, [describeRange(index, m.req, 0, 0)], [], [], [])]
  }

  private async onStep(peer: string, identity: string, m: StepMsg): Promise<Message[]> {
    const c = this.countersOf(peer)
    const question = isQuestion(m)
    if (m.hop > SYNC_LIMITS.maxHops) {
      bump(c.dropped, 'too_many_steps')
      return question ? [{ type: 'error', spaceId: m.spaceId, req: m.req, code: 'too_many_steps' }] : []
    }
    const r = await this.replicaFor(m.spaceId, identity)
    if (!r) return question ? [{ type: 'error', spaceId: m.spaceId, req: m.req, code: 'unknown_space' }] : []
    // Changes first: they may carry the ACL records that make the peer a member here.
    const reask = m.changes.length ? await this.ingest(c, r, m.changes) : new Set<string>()
    if (!this.mayRead(r, identity)) {
      c.denied++
      if (question) return [{ type: 'error', spaceId: m.spaceId, req: m.req, code: 'not_member' }]
      // A refused peer pushing its own changes: acknowledge once nothing of it waits here.
      return m.changes.length && reask.size === 0 ? [{ type: 'done', spaceId: m.spaceId, req: m.req }] : []
    }
    const index = this.indexOf(r).current()
    const plan = new ChangePlan(r.spaceId)
    const heads = new Map<string, HeadsItem>()
    const wants: number[] = []
    let ranges: RangeItem[] = []
    if (m.ranges.length) {
      const ans = answerRanges(index, m.req, m.ranges)
      ranges = ans.reply
      const minePerPos = new Map<number, number>()
      for (const e of ans.mine) minePerPos.set(e.pos, (minePerPos.get(e.pos) ?? 0) + 1)
      for (const e of ans.mine) {
        // The peer lists something else at this position: the same tree with other heads.
        if (ans.theirs.has(e.pos)) heads.set(e.id, await this.headsItem(r, e.id))
        else await this.planWholeTree(r, e.id, plan)
      }
      for (const [pos, n] of ans.theirs) if (n > (minePerPos.get(pos) ?? 0)) wants.push(pos)
    }
    for (const h of m.heads) {
      const { missing, unknown } = await this.compareHeads(r, h.treeId, h.heads, h.have)
      plan.add(h.treeId, missing)
      if (unknown) heads.set(h.treeId, await this.headsItem(r, h.treeId))
    }
    for (const pos of m.wants) for (const t of index.idsAt(pos)) await this.planWholeTree(r, t, plan)
    for (const t of reask) if (!heads.has(t)) heads.set(t, await this.headsItem(r, t))
    const headItems = [...heads.values()]
    return this.steps(r, m.spaceId, m.req, m.hop + 1, ranges, headItems, wants, plan, question)
  }

  /** Builds the reply steps: questions and as many changes as fit in the first, the rest after. */
  private async steps(
    r: SpaceReplica, spaceId: string, req: number, hop: number,
    ranges: RangeItem[], heads: HeadsItem[], wants: number[], plan: ChangePlan, mustReply: boolean,
  ): Promise<Message[]> {
    const raws = await plan.fetch(r)
    const asks = ranges.length > 0 || heads.length > 0 || wants.length > 0
    if (!asks && raws.length === 0) return mustReply ? [{ type: 'done', spaceId, req }] : []
    const out: StepMsg[] = []
    // Within the per-step limits; whatever does not fit is found again by a later exchange.
    const budget = SYNC_LIMITS.targetMessageBytes
    let size = STEP_OVERHEAD + Math.min(wants.length, SYNC_LIMITS.maxWants) * 4
    const fitRanges: RangeItem[] = []
    let children = 0
    for (const x of ranges) {
      const n = x.kind === 'fps' ? 1 << x.bits : 0
      const bytes = 16 + (x.kind === 'fps' ? x.fps.length : x.elems.length)
      if (fitRanges.length >= SYNC_LIMITS.maxRangeItems || children + n > SYNC_LIMITS.maxRangeChildren || (fitRanges.length && size + bytes > budget)) break
      fitRanges.push(x)
      children += n
      size += bytes
    }
    const fitHeads: HeadsItem[] = []
    for (const h of heads) {
      const bytes = 48 + (h.heads.length + h.have.length) * 32
      if (fitHeads.length >= SYNC_LIMITS.maxHeadsItems || (fitHeads.length && size + bytes > budget)) break
      fitHeads.push(h)
      size += bytes
    }
    let cur = step(spaceId, req, hop, fitRanges, fitHeads, wants.slice(0, SYNC_LIMITS.maxWants), [])
    for (const raw of raws) {
      const full = size + raw.length + CHANGE_OVERHEAD > budget || cur.changes.length >= SYNC_LIMITS.maxChangesPerStep
      // A change larger than the budget travels alone (a largest change fits maxMessageBytes).
      if (full && (cur.changes.length > 0 || isQuestion(cur))) {
        out.push(cur)
        cur = step(spaceId, req, hop, [], [], [], [])
        size = STEP_OVERHEAD
      }
      cur.changes.push(raw)
      size += raw.length + CHANGE_OVERHEAD
    }
    out.push(cur)
    return out
  }

  /** Ingests a peer's changes; returns the trees to ask about again when some wait for parents. */
  private async ingest(c: PeerCounters, r: SpaceReplica, changes: Uint8Array[]): Promise<Set<string>> {
    const items = changes.map((raw) => ({ id: contentId(raw), raw }))
    const rep = await r.ingest(items)
    c.changesIn += items.length
    c.changesAccepted += rep.accepted.length
    for (const x of rep.rejected) bump(c.rejected, x.reason)
    const trees = new Set<string>()
    if (rep.missing.length === 0) return trees
    const settled = new Set([...rep.accepted, ...rep.rejected.map((x) => x.id)])
    for (const it of items) {
      if (settled.has(it.id)) continue
      let tree: string
      try {
        const ch = decodeChange(it.raw)
        tree = ch.treeId === '' ? ch.id : ch.treeId
      } catch {
        continue
      }
      if (await this.holds(r, tree, it.id)) continue
      trees.add(tree)
      // Parents or the cited ACL record are missing: ask about the ACL too, it syncs first.
      trees.add(r.spaceId)
    }
    return trees
  }

  private async holds(r: SpaceReplica, tree: string, id: string): Promise<boolean> {
    if (tree === r.spaceId) return r.acl.has(id)
    if (!r.treeMeta(tree)) return false
    return (await r.treeIndex(tree)).has(id)
  }

  /** A tree's DAG as head sync needs it (the ACL tree from the ACL log), or undefined. */
  private async dagOf(r: SpaceReplica, tree: string): Promise<DagView | undefined> {
    if (tree === r.spaceId) {
      const e = r.acl.entries
      return { size: e.size, has: (id) => e.has(id), parents: (id) => e.get(id)!.prevIds, nodes: () => e.values(), key: e }
    }
    if (!r.treeMeta(tree)) return undefined
    const idx = await r.treeIndex(tree)
    return { size: idx.size, has: (id) => idx.has(id), parents: (id) => idx.get(id)!.prevIds, nodes: () => [...idx.ids()].map((id) => idx.get(id)!), key: idx }
  }

  /** The DAG's changes in (lamport, id) order, cached until the DAG grows (DAGs only grow). */
  private ordered(dag: DagView): Array<{ id: string; lamport: number }> {
    const hit = this.orderCache.get(dag.key)
    if (hit && hit.size === dag.size) return hit.list
    const list = [...dag.nodes()].map((n) => ({ id: n.id, lamport: n.lamport })).sort(byLamport)
    this.orderCache.set(dag.key, { size: dag.size, list })
    return list
  }

  /** Our heads of a tree, with the sample of our history (see HeadsItem). */
  private async headsItem(r: SpaceReplica, tree: string): Promise<HeadsItem> {
    const heads = r.heads(tree).slice(0, SYNC_LIMITS.maxHeadsPerTree)
    const dag = await this.dagOf(r, tree)
    const have: string[] = []
    if (dag) {
      const list = this.ordered(dag)
      for (let k = 1; k <= list.length && have.length < SYNC_LIMITS.maxHaveSample; k *= 2) have.push(list[list.length - k].id)
    }
    return { treeId: tree, heads, have }
  }

  /**
   * What the holder of `theirHeads` (and of the sampled `theirHave`) lacks of a tree: every change
   * not reachable from those of them we know. And whether we lack some of their heads.
   */
  private async compareHeads(r: SpaceReplica, tree: string, theirHeads: string[], theirHave: string[]): Promise<{ missing: string[]; unknown: boolean }> {
    const dag = await this.dagOf(r, tree)
    if (!dag) return { missing: [], unknown: theirHeads.length > 0 }
    const known = new Set<string>()
    const stack = [...theirHeads, ...theirHave].filter((h) => dag.has(h))
    while (stack.length) {
      const id = stack.pop()!
      if (known.has(id)) continue
      known.add(id)
      for (const p of dag.parents(id)) if (!known.has(p) && dag.has(p)) stack.push(p)
    }
    const missing = known.size === dag.size ? [] : this.ordered(dag).filter((n) => !known.has(n.id)).map((n) => n.id)
    return { missing, unknown: theirHeads.some((h) => !dag.has(h)) }
  }

  private async planWholeTree(r: SpaceReplica, tree: string, plan: ChangePlan) {
    plan.add(tree, (await this.compareHeads(r, tree, [], [])).missing)
  }

  private async planWholeSpace(r: SpaceReplica, plan: ChangePlan) {
    await this.planWholeTree(r, r.spaceId, plan)
    for (const t of r.treeIds()) await this.planWholeTree(r, t, plan)
  }

  /**
   * A peer refused us as a non-member. If we still hold it to be a member, push it the ACL chain
   * and the changes our account authored (with their ancestors in each tree): writes made before
   * a removal are not lost, and a peer that refused us only because it lacks the ACL record that
   * added us learns it. The peer ingests them (its replica checks each one) and answers `done` once
   * none of them waits there for anything; nothing else comes back. We push again on a later
   * refusal only while the push is not acknowledged or our own changes have grown: at once for
   * the first three attempts, then on the 4th, 8th, 16th... (exponential backoff).
   */
  private async pushOwnChanges(peer: string, identity: string, spaceId: string, req: number): Promise<Message[]> {
    const link = this.links.get(peer)
    const r = await this.opts.host.space(spaceId)
    if (!link || !r || !r.known || !r.acl.current().canRead(identity)) return []
    const plan = new ChangePlan(spaceId)
    // The whole ACL chain goes first: it is readable by every member anyway, our changes cite
    // it, and it may be what the peer lacks to see that we are a member.
    await this.planWholeTree(r, spaceId, plan)
    const own: string[] = [...r.acl.headIds()]
    for (const t of r.treeIds()) {
      const idx = await r.treeIndex(t)
      const mine = [...idx.ids()].filter((id) => idx.get(id)!.author === this.me)
      if (!mine.length) continue
      own.push(...mine)
      const anc = idx.ancestors(mine)
      plan.add(t, idx.missingFrom([]).filter((x) => anc.has(x.id)).map((x) => x.id))
    }
    if (plan.empty) return []
    const key = `${own.length}:${own.sort().join(',')}`
    let st = link.pushes.get(spaceId)
    if (!st || st.key !== key) link.pushes.set(spaceId, (st = { key, attempts: 0, acked: false }))
    if (st.acked) return []
    const n = ++st.attempts
    if (n > 3 && (n & (n - 1)) !== 0) return []
    if (link.pushAcks.size >= SYNC_LIMITS.maxOpenExchanges) link.pushAcks.clear()
    link.pushAcks.set(req, { spaceId, key })
    return this.steps(r, spaceId, req, 1, [], [], [], plan, false)
  }
}

interface DagView {
  size: number
  has(id: string): boolean
  parents(id: string): string[]
  nodes(): Iterable<{ id: string; lamport: number }>
  /** Identity of the underlying DAG object, for caching. */
  key: object
}

/** Changes to send, per tree in plan order (ACL tree first), parents before children. */
class ChangePlan {
  private readonly trees = new Map<string, string[]>()
  private readonly seen = new Set<string>()

  constructor(private readonly aclTree: string) {
    this.trees.set(aclTree, [])
  }

  get empty() {
    return this.seen.size === 0
  }

  add(tree: string, ids: readonly string[]) {
    let list = this.trees.get(tree)
    if (!list) this.trees.set(tree, (list = []))
    for (const id of ids) {
      if (this.seen.has(id)) continue
      this.seen.add(id)
      list.push(id)
    }
  }

  async fetch(r: SpaceReplica): Promise<Uint8Array[]> {
    const out: Uint8Array[] = []
    for (const [tree, ids] of this.trees) {
      if (!ids.length) continue
      for (const { raw } of await r.rawChanges(tree, ids)) out.push(raw)
    }
    return out
  }
}

function step(spaceId: string, req: number, hop: number, ranges: RangeItem[], heads: HeadsItem[], wants: number[], changes: Uint8Array[]): StepMsg {
  return { type: 'step', spaceId, req, hop, ranges, heads, wants, changes }
}

const key = (peer: string, req: number) => `${peer}\u0000${req}`

const byLamport = (a: { lamport: number; id: string }, b: { lamport: number; id: string }) =>
  a.lamport - b.lamport || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)
