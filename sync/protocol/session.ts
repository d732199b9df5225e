import { Emitter } from '../core/emitter.ts'
import type { Logger } from '../core/log.ts'
import type { Env } from '../core/env.ts'
import type { CryptoProvider } from '../crypto/provider.ts'
import { identityOf, type KeyPair } from '../crypto/keys.ts'
import type { SpaceReplica } from '../replica/space-replica.ts'
import { BoundedMap } from './bounded-map.ts'
import { ExchangeLedger, type Exchange, type ExchangeEnd } from './exchange-ledger.ts'
import { JoinResponder, type JoinHandler } from './join-responder.ts'
import { JOIN_LIMITS, PEER_LIMITS } from './limits.ts'
import { LinkAuth } from './link-auth.ts'
import { decodeMessage, encodeMessage, isQuestion, ProtocolError, type Message } from './messages.ts'
import { OfferGate } from './offer-gate.ts'
import type { JoinStatus } from './sharing-network.ts'
import { bump, newCounters, type PeerCounters } from './peer-counters.ts'
import type { SpaceRangeIndex } from './range-index.ts'
import { fixed, NO_REPLY, type Reply } from './reply.ts'
import { Responder, type SyncHost } from './responder.ts'

export type { SyncHost } from './responder.ts'
export type { JoinHandler } from './join-responder.ts'
export type { PeerCounters } from './peer-counters.ts'
export type { ExchangeCost, ExchangeEnd, ExchangeOutcome } from './exchange-ledger.ts'

/**
 * Head-sync session steps (DESIGN 5; docs/protocol.md is the normative text), in the style of
 * y-protocols' sync.js: `respond(peer, bytes)` takes one message from a peer, decides the
 * reply, and returns it as a stream its consumer pulls one message at a time (`handle` collects
 * it), touching nothing but the replicas the host hands out. No clock, no timers, no sockets:
 * randomness comes from the injected Env, and a driver (sync-driver.ts) moves the bytes. The
 * simulator and the daemon run this same code.
 *
 * The session only routes: link authentication is `link-auth.ts`, the exchanges are
 * `exchange-ledger.ts`, the space side (access, ranges, heads, changes) is `responder.ts`,
 * replies are `reply.ts` and packing them into steps is `step-packer.ts`.
 *
 * Outline of one exchange, opened by A with B about one space:
 *   A -> B  sync   whole-space fingerprint (in sync: B answers `done`, one round trip)
 *   B -> A  step   B's side of the ranges that differ (child fingerprints, or its elements)
 *   ...     step   ranges narrow until differing trees are known; then per tree `heads` go
 *                  one way, the changes the other lacks go back, with `heads` in return when
 *                  the receiver lacks some of the sender's; a tree the other side lacks
 *                  entirely is pushed whole, and one we lack is asked for by position (`wants`)
 *   ...     done   when a question has nothing left to answer.
 * Every message but `done`, `error` and answer-only steps is a question and gets exactly one
 * reply, so the exchange ends when a side has nothing to ask.
 */

export interface SessionOptions {
  host: SyncHost
  /** Where a throwing event listener is logged (default: nowhere). */
  log?: Logger
  /** The account key: it authenticates this peer's links. */
  key: KeyPair
  /** This peer's transport id (bound into authentication signatures). */
  peerId: string
  crypto: CryptoProvider
  env: Env
  /**
   * Answer steps (changes only) whose ingest may still run when `respond` returns, so the next
   * message's checks (decoding, signatures on the thread pool) overlap this one's apply. 0 (the
   * default) ingests every step before `respond` returns, which keeps a simulated run's events
   * whole. Anything but an answer step waits for them first. The daemon leaves it off too
   * (sync/p2p/constants.ts `ingestAhead`; the trade-off measured in docs/protocol.md 7a).
   */
  ingestAhead?: number
  /** Takes join requests that arrive over the wire (absent: every join gets the unknown-space answer). */
  joins?: JoinHandler
  /**
   * Told when an authenticated account other than ours opens an exchange about a space we do
   * not hold (it may have added us). Bounded by an OfferGate; the peer's answer is unchanged.
   */
  offered?: (spaceId: string, identity: string, peer: string) => Promise<unknown>
}

export interface Outgoing {
  to: string
  bytes: Uint8Array
}

export type OpenResult = { req: number; out: Outgoing[] } | { error: 'unauthenticated' | 'unknown_space' | 'busy' | 'denied'; out: Outgoing[] }

export type OpenJoinResult = { req: number; out: Outgoing[] } | { error: 'unauthenticated'; out: Outgoing[] }

const NONE: AsyncIterable<Outgoing> = { async *[Symbol.asyncIterator]() {} }

async function* chain(parts: Array<AsyncIterable<Outgoing>>): AsyncGenerator<Outgoing> {
  for (const p of parts) yield* p
}

/**
 * Drop reasons that an honest peer also causes (a reply that crossed a timeout, a hub's quota
 * it reached): not strikes.
 */
const BENIGN_DROPS = new Set(['stale', 'internal', 'over_quota'])

export class SyncSession {
  readonly me: string
  private readonly auth: LinkAuth
  private readonly ledger: ExchangeLedger
  private readonly responder: Responder
  private readonly joinResponder: JoinResponder
  /** Bounds the offers handed to `opts.offered`; undefined without it. */
  readonly offers?: OfferGate
  /** Joins we sent that await an answer: per peer, req -> space (the oldest forgotten past the bound). */
  private readonly pendingJoins = new Map<string, BoundedMap<number, string>>()
  /** Counters of authenticated peers, and (fewer) of peers that never authenticated. */
  private readonly counters = new BoundedMap<string, PeerCounters>(PEER_LIMITS.maxPeerCounters)
  private readonly strangerCounters = new BoundedMap<string, PeerCounters>(PEER_LIMITS.maxStrangerCounters)
  /** Per (peer, space) we were removed from: the scheduled chances so far (see mayOpen). */
  private readonly removedAsks = new BoundedMap<string, number>(PEER_LIMITS.maxPeerCounters)
  /** Messages decoded ahead of their turn (see `upcoming`), by their bytes. */
  private readonly decodedAhead = new WeakMap<Uint8Array, Message>()
  /** Frames told of as upcoming whose checks ahead have not started yet. */
  private readonly awaited = new WeakSet<Uint8Array>()
  /** The last unexpected error a handler swallowed (for debugging; counted as dropped.internal). */
  lastError: unknown
  /** A peer proved an account on its link; an exchange this peer opened ended. */
  readonly events: Emitter<SessionEvents>

  constructor(private readonly opts: SessionOptions) {
    this.events = new Emitter<SessionEvents>(opts.log)
    this.me = identityOf(opts.key.publicKey)
    this.auth = new LinkAuth({ key: opts.key, me: this.me, peerId: opts.peerId, crypto: opts.crypto, env: opts.env })
    this.ledger = new ExchangeLedger(opts.env, (e) => this.events.emit('exchangeEnd', e))
    const onError = (err: unknown) => (this.lastError = err)
    if (opts.offered) this.offers = new OfferGate(opts.offered, () => opts.env.now(), onError)
    this.responder = new Responder(opts.host, this.me, this.ledger, opts.ingestAhead ?? 0, onError, this.offers, () => opts.env.now())
    this.joinResponder = new JoinResponder(opts.joins, () => opts.env.now(), onError)
  }

  // ------------------------------------------------------------------ links

  /** A transport link came up: a fresh epoch, and our challenge to the peer. */
  peerUp(peer: string): Outgoing[] {
    return this.emit(peer, [this.auth.up(peer)])
  }

  /** The link went down: forget its authentication and end its exchanges. */
  peerDown(peer: string): void {
    this.auth.down(peer)
    this.responder.forget(peer)
    this.pendingJoins.delete(peer)
    this.ledger.endAll(peer)
  }

  /** Our challenge again (a hello), e.g. when the first one may have been lost. */
  challenge(peer: string): Outgoing[] {
    return this.emit(peer, [this.auth.challenge(peer)])
  }

  /** The account a peer has proved it holds on this link, if it has. */
  identityOf(peer: string): string | undefined {
    return this.auth.identityOf(peer)
  }

  countersOf(peer: string): PeerCounters {
    let c = this.counters.get(peer)
    if (c) return c
    c = this.strangerCounters.get(peer)
    if (!c) {
      c = newCounters()
      if (this.auth.identityOf(peer)) this.counters.set(peer, c)
      else this.strangerCounters.set(peer, c)
    }
    return c
  }

  /** Every peer's counters (a copy is made of the map, not of the counters: treat as read-only). */
  allCounters(): ReadonlyMap<string, PeerCounters> {
    return new Map([...this.strangerCounters, ...this.counters])
  }

  /**
   * Messages and changes of a peer that were malformed or refused: what the daemon disconnects
   * and backs off a peer for past a threshold. Every refusal of the session is counted here.
   */
  strikes(peer: string): number {
    const c = this.counters.peek(peer) ?? this.strangerCounters.peek(peer)
    if (!c) return 0
    let n = c.denied
    for (const [k, v] of Object.entries(c.dropped)) if (!BENIGN_DROPS.has(k)) n += v
    for (const v of Object.values(c.rejected)) n += v
    return n
  }

  indexOf(r: SpaceReplica): SpaceRangeIndex {
    return this.responder.indexOf(r)
  }

  // ------------------------------------------------------------------ exchanges we open

  /** Opens an exchange about a space with a peer: the `sync` message to send. */
  async open(peer: string, spaceId: string): Promise<OpenResult> {
    const identity = this.auth.identityOf(peer)
    if (!identity) return { error: 'unauthenticated', out: this.challenge(peer) }
    const r = await this.responder.held(spaceId)
    if (!r) return { error: 'unknown_space', out: [] }
    // Opening an exchange tells the peer the space id and its size: readers only. A replica
    // that knows no ACL yet holds nothing to tell but the id it was given, and must ask.
    if (r.known && !this.responder.mayRead(r, identity)) return { error: 'denied', out: [] }
    const ex = this.ledger.begin(peer, spaceId)
    if (!ex) return { error: 'busy', out: [] }
    if (r.known) this.responder.admitted(peer, spaceId)
    const { fp, count } = await this.responder.opening(r)
    return { req: ex.req, out: this.emit(peer, [{ type: 'sync', spaceId, req: ex.req, fp, count }], ex) }
  }

  /**
   * A `join` carrying `change` (a raw signed join or cancel ACL change of our account) about
   * `spaceId` to an authenticated peer; its answer comes as a `joinAnswer` event.
   */
  openJoin(peer: string, spaceId: string, change: Uint8Array): OpenJoinResult {
    if (!this.auth.identityOf(peer)) return { error: 'unauthenticated', out: this.challenge(peer) }
    let pending = this.pendingJoins.get(peer)
    if (!pending) this.pendingJoins.set(peer, (pending = new BoundedMap(JOIN_LIMITS.maxPendingJoinsPerPeer)))
    let req: number
    do req = new DataView(this.opts.env.randomBytes(4).buffer).getUint32(0)
    while (pending.has(req) || this.ledger.get(peer, req))
    pending.set(req, spaceId)
    return { req, out: this.emit(peer, [{ type: 'join', spaceId, req, change }]) }
  }

  /**
   * The removal notice (docs/protocol.md 5c) to send unasked to a peer that read the space on
   * this link and whose account's removal now takes effect here; undefined when none is due
   * (the peer still reads, was never admitted on this link, or was told already). The scheduler
   * asks for it where a round is denied, so a removed member that is connected hears of it with
   * the commit's round, instead of at its own next round, which the bucket may then refuse.
   */
  async removalNotice(peer: string, spaceId: string): Promise<AsyncIterable<Outgoing> | undefined> {
    const identity = this.auth.identityOf(peer)
    if (!identity) return undefined
    // Outside every exchange either side keeps with this peer, as a join's req is.
    const reply = await this.responder.removalNotice(peer, identity, spaceId, this.unusedReq(peer))
    return reply ? this.stream(peer, this.countersOf(peer), reply, undefined, undefined) : undefined
  }

  /**
   * Changes just written here, to send unasked to an authenticated reader of the space
   * (Responder.lonePush; docs/protocol.md 5d). Undefined when none goes.
   */
  async lonePush(peer: string, spaceId: string, changeIds: readonly string[], treeIds: readonly string[]): Promise<AsyncIterable<Outgoing> | undefined> {
    const identity = this.auth.identityOf(peer)
    if (!identity) return undefined
    const reply = await this.responder.lonePush(identity, spaceId, this.unusedReq(peer), changeIds, treeIds)
    return reply ? this.stream(peer, this.countersOf(peer), reply, undefined, undefined) : undefined
  }

  /** A req outside every exchange either side keeps with this peer. */
  private unusedReq(peer: string): number {
    let req: number
    do req = new DataView(this.opts.env.randomBytes(4).buffer).getUint32(0)
    while (this.ledger.get(peer, req))
    return req
  }

  /** The space of a join we sent and have not had answered, taken off the list; else undefined. */
  private answeredJoin(peer: string, spaceId: string, req: number): boolean {
    const pending = this.pendingJoins.get(peer)
    if (pending?.peek(req) !== spaceId) return false
    pending.delete(req)
    return true
  }

  /** How much per-peer state the session holds (links, counters): for tests of its bounds. */
  peerState(): { links: number; counters: number } {
    return { links: this.auth.size, counters: this.counters.size + this.strangerCounters.size }
  }

  /**
   * Whether a scheduled round should open an exchange now: `open` would not refuse it as
   * `denied`, and, when our own account's removal from the space takes effect here, this is
   * the 1st, 2nd, 4th, 8th, ... chance with this peer (every reader refuses us, so asking more
   * would only retry forever; asking at all lets us push what only we hold, docs/protocol.md
   * 5). Undefined before the peer authenticates.
   */
  async mayOpen(peer: string, spaceId: string): Promise<boolean | undefined> {
    const identity = this.auth.identityOf(peer)
    if (!identity) return undefined
    const r = await this.responder.held(spaceId)
    if (!r) return false
    if (!r.known) return true
    if (!this.responder.mayRead(r, identity)) return false
    const key = `${peer}\u0000${spaceId}`
    if (!this.responder.removedHere(r)) {
      this.removedAsks.delete(key)
      return true
    }
    const n = (this.removedAsks.get(key) ?? 0) + 1
    this.removedAsks.set(key, n)
    return (n & (n - 1)) === 0
  }

  /** Gives up on an exchange (the driver's timeout). */
  abandon(peer: string, req: number): void {
    const ex = this.ledger.get(peer, req)
    if (ex) this.ledger.end(ex, 'abandoned')
  }

  // ------------------------------------------------------------------ one incoming message

  /**
   * A message from a peer that waits behind the one being handled (the transport's
   * `onUpcoming` hint): `respond` will get the same bytes. Nothing is decided here. For a plain
   * answer step of an authenticated reader (a backlog's bulk), the replica starts its check
   * stage (decoding, ids, signatures on the thread pool) now, so the pool works on it while the
   * step before it applies; its turn then applies what was checked. Everything else waits for
   * its turn; a peer that has not authenticated gets nothing done ahead, not even decoding.
   */
  upcoming(peer: string, bytes: Uint8Array): void {
    if (!this.auth.identityOf(peer)) return
    this.awaited.add(bytes)
    // Told from the transport's read callback: the decoding and the first slice of checks wait
    // for a turn (Env.yield), like every other slice of work, instead of lengthening whatever
    // this iteration of the event loop is already doing.
    const go = () => {
      // Its turn may have come meanwhile: then it was handled the ordinary way.
      if (!this.awaited.delete(bytes)) return
      const identity = this.auth.identityOf(peer)
      if (!identity) return
      let m: Message
      try {
        m = decodeMessage(bytes)
      } catch {
        return
      }
      if (m.type !== 'step') return
      try {
        if (this.responder.checkAhead(peer, identity, m)) this.decodedAhead.set(bytes, m)
      } catch (err) {
        this.lastError = err
      }
    }
    const turn = this.opts.env.yield?.()
    if (turn) void turn.then(go)
    else go()
  }

  /** Handles one message from a peer and returns every reply, built (tests, small replies). */
  async handle(peer: string, bytes: Uint8Array): Promise<Outgoing[]> {
    const out: Outgoing[] = []
    for await (const o of await this.respond(peer, bytes)) out.push(o)
    return out
  }

  /**
   * Handles one message from a peer: every decision (access, ingest, what differs) is taken
   * before this returns; the reply's messages are built as the caller pulls them, changes read
   * from storage as they go. Never throws, and neither does the stream (a failure while it is
   * read ends it, counted as dropped.internal).
   */
  async respond(peer: string, bytes: Uint8Array): Promise<AsyncIterable<Outgoing>> {
    const c = this.countersOf(peer)
    c.messagesIn++
    c.bytesIn += bytes.length
    let m: Message
    try {
      this.awaited.delete(bytes)
      m = this.decodedAhead.get(bytes) ?? decodeMessage(bytes)
      this.decodedAhead.delete(bytes)
    } catch (err) {
      bump(c.dropped, err instanceof ProtocolError ? err.code : 'malformed')
      return NONE
    }
    // Until the peer authenticates its messages are stashed, not part of any exchange yet.
    // Joins are not exchanges: their reqs live in their own table.
    const ex = 'req' in m && m.type !== 'join' && m.type !== 'joined' && this.auth.identityOf(peer) ? this.ledger.get(peer, m.req) : undefined
    if (ex) this.ledger.received(ex, m, bytes.length)
    let reply: Reply
    const stashed: Array<AsyncIterable<Outgoing>> = []
    try {
      reply = await this.dispatch(peer, c, m, ex, bytes)
      if (m.type === 'auth' && this.auth.identityOf(peer)) {
        // Now authenticated: its counters are kept with the members', and what it sent before
        // is handled now.
        if (this.strangerCounters.delete(peer)) this.counters.set(peer, c)
        for (const b of this.auth.takeStash(peer)) {
          c.messagesIn--
          c.bytesIn -= b.length
          stashed.push(await this.respond(peer, b))
        }
      }
    } catch (err) {
      this.lastError = err
      bump(c.dropped, 'internal')
      return NONE
    }
    if (ex && this.ledger.isOpen(ex)) {
      if (m.type === 'done') this.ledger.end(ex, ex.steps === 1 ? 'in_sync' : 'synced')
      else if (m.type === 'error') this.ledger.end(ex, 'error', m.code)
    }
    // A step whose reply asks nothing ends our exchange once that reply is out.
    const ends = ex && m.type === 'step' && !reply.asks ? ex : undefined
    const own = this.stream(peer, c, reply, ex, ends)
    return stashed.length ? chain([own, ...stashed]) : own
  }

  private async *stream(peer: string, c: PeerCounters, reply: Reply, ex: Exchange | undefined, ends: Exchange | undefined): AsyncGenerator<Outgoing> {
    try {
      for await (const m of reply) yield this.emitOne(peer, c, m, ex)
    } catch (err) {
      this.lastError = err
      bump(c.dropped, 'internal')
    } finally {
      if (ends && this.ledger.isOpen(ends)) this.ledger.end(ends, 'synced')
    }
  }

  private emitOne(peer: string, c: PeerCounters, m: Message, ex?: Exchange): Outgoing {
    const bytes = encodeMessage(m)
    c.messagesOut++
    c.bytesOut += bytes.length
    if (m.type === 'step') c.changesOut += m.changes.length
    if (ex) this.ledger.sent(ex, m, bytes.length)
    return { to: peer, bytes }
  }

  private emit(peer: string, msgs: Message[], ex?: Exchange): Outgoing[] {
    const c = this.countersOf(peer)
    return msgs.map((m) => this.emitOne(peer, c, m, ex))
  }

  private async dispatch(peer: string, c: PeerCounters, m: Message, ex: Exchange | undefined, raw: Uint8Array): Promise<Reply> {
    if (m.type === 'hello') return fixed([await this.auth.answer(peer, m)])
    if (m.type === 'auth') {
      const v = await this.auth.verify(peer, m)
      if (!v.ok) bump(c.dropped, 'bad_auth')
      else if (v.changed) this.events.emit('authenticated', { peer, identity: m.identity })
      return NO_REPLY
    }
    const identity = this.auth.identityOf(peer)
    if (!identity) {
      // Challenge the peer; keep a few of its messages to handle once it has answered.
      const hello = this.auth.challenge(peer)
      if (this.auth.stash(peer, raw)) return fixed([hello])
      bump(c.dropped, 'unauthenticated')
      const asks = m.type === 'sync' || m.type === 'join' || (m.type === 'step' && isQuestion(m))
      return fixed(asks ? [hello, { type: 'error', spaceId: m.spaceId, req: m.req, code: 'unauthenticated' }] : [hello])
    }
    switch (m.type) {
      case 'sync':
        return this.responder.onSync(c, peer, identity, m)
      case 'step':
        return this.responder.onStep(c, peer, identity, m)
      case 'done':
        // The ack of a push of our own changes (see Responder.pushOwnChanges).
        if (!this.responder.acked(peer, m.spaceId, m.req) && !ex) bump(c.dropped, 'stale')
        return NO_REPLY
      case 'join':
        return this.joinResponder.onJoin(c, peer, identity, m)
      case 'joined':
        if (this.answeredJoin(peer, m.spaceId, m.req)) this.events.emit('joinAnswer', { peer, identity, spaceId: m.spaceId, req: m.req, status: m.status })
        else bump(c.dropped, 'stale')
        return NO_REPLY
      case 'error':
        if (!ex) {
          // The refusal of a join looks like any refusal: the peer does not take it.
          if (this.answeredJoin(peer, m.spaceId, m.req)) this.events.emit('joinAnswer', { peer, identity, spaceId: m.spaceId, req: m.req })
          else bump(c.dropped, 'stale')
          return NO_REPLY
        }
        // A refusal (unknown_space; not_member from older peers): a reader of ours may lack the
        // record that made us one.
        return m.code === 'unknown_space' || m.code === 'not_member' ? this.responder.pushOwnChanges(peer, identity, m.spaceId, m.req) : NO_REPLY
    }
  }
}

export interface SessionEvents {
  authenticated: { peer: string; identity: string }
  exchangeEnd: ExchangeEnd
  /** The answer to a join we sent: `status` absent when the peer refused it (or does not hold the space). */
  joinAnswer: { peer: string; identity: string; spaceId: string; req: number; status?: JoinStatus }
}
