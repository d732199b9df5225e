import type { Env } from '../core/env.ts'
import type { CryptoProvider } from '../crypto/provider.ts'
import { identityOf, type KeyPair } from '../crypto/keys.ts'
import type { SpaceReplica } from '../replica/space-replica.ts'
import { ExchangeLedger, type Exchange, type ExchangeEnd } from './exchange-ledger.ts'
import { LinkAuth } from './link-auth.ts'
import { decodeMessage, encodeMessage, isQuestion, ProtocolError, type Message } from './messages.ts'
import { bump, newCounters, type PeerCounters } from './peer-counters.ts'
import type { SpaceIndex } from './range-index.ts'
import { Responder, type SyncHost } from './responder.ts'

export type { SyncHost } from './responder.ts'
export type { PeerCounters } from './peer-counters.ts'
export type { ExchangeCost, ExchangeEnd, ExchangeOutcome } from './exchange-ledger.ts'

/**
 * Head-sync session steps (DESIGN 5; docs/protocol.md is the normative text), in the style of
 * y-protocols' sync.js: `handle(peer, bytes)` takes one message from a peer and returns the
 * replies, touching nothing but the replicas the host hands out. No clock, no timers, no
 * sockets: time and randomness come from the injected Env, and a driver (sync-driver.ts) moves
 * the bytes. The simulator and the daemon run this same code.
 *
 * The session only routes: link authentication is `link-auth.ts`, the exchanges this peer
 * opened are `exchange-ledger.ts`, the space side (access, ranges, heads, changes) is
 * `responder.ts`, and packing replies into steps is `step-packer.ts`.
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

export type OpenResult = { req: number; out: Outgoing[] } | { error: 'unauthenticated' | 'unknown_space' | 'busy'; out: Outgoing[] }

export class SyncSession {
  readonly me: string
  private readonly auth: LinkAuth
  private readonly ledger: ExchangeLedger
  private readonly responder: Responder
  private readonly counters = new Map<string, PeerCounters>()
  /** The last unexpected error a handler swallowed (for debugging; counted as dropped.internal). */
  lastError: unknown
  onAuthenticated?: (peer: string, identity: string) => void

  constructor(private readonly opts: SessionOptions) {
    this.me = identityOf(opts.key.publicKey)
    this.auth = new LinkAuth({ key: opts.key, me: this.me, peerId: opts.peerId, crypto: opts.crypto, env: opts.env })
    this.ledger = new ExchangeLedger(opts.env)
    this.responder = new Responder(opts.host, this.me)
  }

  set onExchangeEnd(fn: ((e: ExchangeEnd) => void) | undefined) {
    this.ledger.onEnd = fn
  }
  get onExchangeEnd(): ((e: ExchangeEnd) => void) | undefined {
    return this.ledger.onEnd
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
    if (!c) this.counters.set(peer, (c = newCounters()))
    return c
  }

  /** Every peer's counters (a copy is not made: treat as read-only). */
  allCounters(): ReadonlyMap<string, PeerCounters> {
    return this.counters
  }

  indexOf(r: SpaceReplica): SpaceIndex {
    return this.responder.indexOf(r)
  }

  // ------------------------------------------------------------------ exchanges we open

  /** Opens an exchange about a space with a peer: the `sync` message to send. */
  async open(peer: string, spaceId: string): Promise<OpenResult> {
    if (!this.auth.identityOf(peer)) return { error: 'unauthenticated', out: this.challenge(peer) }
    const r = await this.responder.held(spaceId)
    if (!r) return { error: 'unknown_space', out: [] }
    const ex = this.ledger.begin(peer, spaceId)
    if (!ex) return { error: 'busy', out: [] }
    const { fp, count } = await this.responder.opening(r)
    return { req: ex.req, out: this.emit(peer, [{ type: 'sync', spaceId, req: ex.req, fp, count }], ex) }
  }

  /** Gives up on an exchange (the driver's timeout). */
  abandon(peer: string, req: number): void {
    const ex = this.ledger.get(peer, req)
    if (ex) this.ledger.end(ex, 'abandoned')
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
    // Until the peer authenticates its messages are stashed, not part of any exchange yet.
    const ex = 'req' in m && this.auth.identityOf(peer) ? this.ledger.get(peer, m.req) : undefined
    if (ex) this.ledger.received(ex, m, bytes.length)
    try {
      const replies = await this.dispatch(peer, c, m, ex, bytes)
      const out = this.emit(peer, replies, ex)
      if (m.type === 'auth') {
        // Now authenticated: handle what the peer sent before it was.
        for (const b of this.auth.takeStash(peer)) {
          c.messagesIn--
          c.bytesIn -= b.length
          out.push(...(await this.handle(peer, b)))
        }
      }
      if (ex && this.ledger.isOpen(ex)) {
        if (m.type === 'done') this.ledger.end(ex, ex.steps === 1 ? 'in_sync' : 'synced')
        else if (m.type === 'error') this.ledger.end(ex, 'error', m.code)
        else if (m.type === 'step' && !replies.some((r) => r.type === 'step' && isQuestion(r))) this.ledger.end(ex, 'synced')
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
      if (ex) this.ledger.sent(ex, m, bytes.length)
      return { to: peer, bytes }
    })
  }

  private async dispatch(peer: string, c: PeerCounters, m: Message, ex: Exchange | undefined, raw: Uint8Array): Promise<Message[]> {
    if (m.type === 'hello') return [await this.auth.answer(peer, m)]
    if (m.type === 'auth') {
      const v = await this.auth.verify(peer, m)
      if (!v.ok) bump(c.dropped, 'bad_auth')
      else if (v.changed) this.onAuthenticated?.(peer, m.identity)
      return []
    }
    const identity = this.auth.identityOf(peer)
    if (!identity) {
      // Challenge the peer; keep a few of its messages to handle once it has answered.
      const hello = this.auth.challenge(peer)
      if (this.auth.stash(peer, raw)) return [hello]
      bump(c.dropped, 'unauthenticated')
      const asks = m.type === 'sync' || (m.type === 'step' && isQuestion(m))
      return asks ? [hello, { type: 'error', spaceId: m.spaceId, req: m.req, code: 'unauthenticated' }] : [hello]
    }
    switch (m.type) {
      case 'sync':
        return this.responder.onSync(c, identity, m)
      case 'step':
        return this.responder.onStep(c, identity, m)
      case 'done':
        // The ack of a push of our own changes (see Responder.pushOwnChanges).
        if (!this.responder.acked(peer, m.spaceId, m.req) && !ex) bump(c.dropped, 'stale')
        return []
      case 'error':
        if (!ex) {
          bump(c.dropped, 'stale')
          return []
        }
        return m.code === 'not_member' ? this.responder.pushOwnChanges(peer, identity, m.spaceId, m.req) : []
    }
  }
}
