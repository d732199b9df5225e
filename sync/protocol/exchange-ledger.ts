import type { Env } from '../core/env.ts'
import { BoundedMap } from './bounded-map.ts'
import { SYNC_LIMITS } from './limits.ts'
import { isQuestion, type ErrorCode, type Message } from './messages.ts'

/**
 * The exchanges this peer opened and has not seen end, with what each cost: opening (a fresh
 * random `req` per peer), counting the messages in and out, and ending (`done`, `error`, a step
 * whose reply is not a question, abandonment) with one report to its owner. And the exchanges a
 * peer opened with us (its `sync` got a step back): the last `maxOpenExchanges` per peer, each
 * with the questions we answered and the work they cost, so hops and enumeration are counted
 * on this side whatever the peer's `hop` field says.
 */

/** What this side has spent answering one exchange: the receiver's own hop count and work. */
export interface Answered {
  spaceId: string
  /** Question steps of the peer answered in this exchange. */
  questions: number
  /** Enumeration work spent (units of SYNC_LIMITS.maxStepWork). */
  work: number
}

/** Question steps a side answers in one exchange: half of maxHops, the other half are its own. */
export const MAX_QUESTIONS_ANSWERED = Math.ceil(SYNC_LIMITS.maxHops / 2)

export type ExchangeOutcome = 'in_sync' | 'synced' | 'error' | 'abandoned'

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

/** How an exchange this peer opened ended, with its cost. */
export interface ExchangeEnd extends ExchangeCost {
  peer: string
  spaceId: string
  req: number
  outcome: ExchangeOutcome
  error?: ErrorCode
}

export type Exchange = Omit<ExchangeEnd, 'outcome' | 'error'> & { steps: number } & Answered

export class ExchangeLedger {
  private readonly open = new Map<string, Exchange>()
  private readonly opened = new Map<string, BoundedMap<number, Answered>>()
  constructor(
    private readonly env: Env,
    /** Its owner (the session) hears every end, and tells whoever listens. */
    private readonly ended: (e: ExchangeEnd) => void,
  ) {}

  /** A new exchange with a peer, or undefined when the peer has too many open already. */
  begin(peer: string, spaceId: string): Exchange | undefined {
    let n = 0
    for (const ex of this.open.values()) if (ex.peer === peer) n++
    if (n >= SYNC_LIMITS.maxOpenExchanges) return undefined
    let req: number
    do {
      const b = this.env.randomBytes(4)
      req = ((b[0] << 24) | (b[1] << 16) | (b[2] << 8) | b[3]) >>> 0
    } while (this.open.has(key(peer, req)))
    const ex: Exchange = {
      peer,
      spaceId,
      req,
      roundTrips: 0,
      messagesOut: 0,
      messagesIn: 0,
      bytesOut: 0,
      bytesIn: 0,
      changesOut: 0,
      changesIn: 0,
      steps: 0,
      questions: 0,
      work: 0,
    }
    this.open.set(key(peer, req), ex)
    return ex
  }

  get(peer: string, req: number): Exchange | undefined {
    return this.open.get(key(peer, req))
  }

  /** Whether `ex` is still open (it may have ended while a reply was being built). */
  isOpen(ex: Exchange): boolean {
    return this.open.get(key(ex.peer, ex.req)) === ex
  }

  received(ex: Exchange, m: Message, bytes: number) {
    ex.messagesIn++
    ex.bytesIn += bytes
    ex.steps++
    if (m.type === 'step') ex.changesIn += m.changes.length
  }

  sent(ex: Exchange, m: Message, bytes: number) {
    if (!('req' in m) || m.req !== ex.req) return
    ex.messagesOut++
    ex.bytesOut += bytes
    if (m.type === 'sync' || (m.type === 'step' && isQuestion(m))) ex.roundTrips++
    if (m.type === 'step') ex.changesOut += m.changes.length
  }

  end(ex: Exchange, outcome: ExchangeOutcome, error?: ErrorCode) {
    if (!this.isOpen(ex)) return
    this.open.delete(key(ex.peer, ex.req))
    const { steps: _steps, ...rest } = ex
    this.ended({ ...rest, outcome, ...(error ? { error } : {}) })
  }

  /** Ends every exchange with a peer whose link went down, and forgets the ones it opened. */
  endAll(peer: string) {
    for (const ex of [...this.open.values()]) if (ex.peer === peer) this.end(ex, 'abandoned')
    this.opened.delete(peer)
  }

  /** A peer's `sync` got a step back: remember the exchange it opened (evicting its oldest). */
  answering(peer: string, spaceId: string, req: number): Answered {
    let m = this.opened.get(peer)
    if (!m) this.opened.set(peer, (m = new BoundedMap(SYNC_LIMITS.maxOpenExchanges)))
    const a: Answered = { spaceId, questions: 0, work: 0 }
    m.set(req, a)
    return a
  }

  /** The exchange a step belongs to on our side: ours, or one the peer opened; else undefined. */
  answered(peer: string, spaceId: string, req: number): Answered | undefined {
    const ours = this.open.get(key(peer, req))
    if (ours) return ours.spaceId === spaceId ? ours : undefined
    const theirs = this.opened.get(peer)?.get(req)
    return theirs?.spaceId === spaceId ? theirs : undefined
  }
}

const key = (peer: string, req: number) => `${peer}\u0000${req}`
