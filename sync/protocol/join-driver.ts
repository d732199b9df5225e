import type { Logger } from '../core/log.ts'
import { backoffDelay } from '../core/backoff.ts'
import { Emitter } from '../core/emitter.ts'
import { JOIN_LIMITS } from './limits.ts'
import type { JoinStatusEvent } from './sharing-network.ts'
import type { Timer } from './sync-driver.ts'

export interface JoinDriverOptions {
  /** Where a throwing event listener is logged (default: nowhere). */
  log?: Logger
  /** Sends one join to one authenticated peer (SyncDriver.sendJoin). */
  send(peer: string, spaceId: string, change: Uint8Array): Promise<unknown>
  /** The peers whose link is authenticated now. */
  peers(): string[]
  timer: Timer
  /** First retry delay (default JOIN_LIMITS.joinRetryBaseMs); doubles up to retryMaxMs. */
  retryBaseMs?: number
  retryMaxMs?: number
  onError?: (err: unknown) => void
}

interface Active {
  change: Uint8Array
  /** Rounds sent so far: the next waits base * 2^attempts (capped). */
  attempts: number
  cancel?: () => void
  /** Peers this round's join went to (a peer that authenticates later gets it at once). */
  sentTo: Set<string>
}

export interface JoinDriverEvents {
  status: JoinStatusEvent
}

/**
 * The joiner's side of joining over the wire: while asked, sends the join to every
 * authenticated peer, again after base, 2 base, 4 base, ... (capped), and at once to every peer
 * that authenticates in between; reports each `joined` answer as a `status` event (the caller
 * decides when to stop: an answer is the answering device's claim). Pure: timers and sending are
 * injected, so the simulator and tests run it on virtual time.
 */
export class JoinDriver {
  readonly events: Emitter<JoinDriverEvents>
  private readonly active = new Map<string, Active>()
  private closed = false

  constructor(private readonly o: JoinDriverOptions) {
    this.events = new Emitter<JoinDriverEvents>(o.log)
  }

  /** Starts repeating a join for `spaceId` (or replaces the change it repeats), sending it now. */
  ask(spaceId: string, change: Uint8Array): void {
    if (this.closed) return
    const old = this.active.get(spaceId)
    old?.cancel?.()
    this.active.delete(spaceId)
    const a: Active = { change, attempts: 0, sentTo: new Set() }
    this.active.set(spaceId, a)
    // The least recently asked stops past the bound.
    while (this.active.size > JOIN_LIMITS.maxActiveJoins) this.stop(this.active.keys().next().value as string)
    this.round(spaceId, a)
  }

  stop(spaceId: string): void {
    this.active.get(spaceId)?.cancel?.()
    this.active.delete(spaceId)
  }

  spaces(): string[] {
    return [...this.active.keys()]
  }

  /** A peer's link authenticated: every active join goes to it now, not at the next retry. */
  peerUp(peer: string): void {
    for (const [spaceId, a] of this.active) {
      if (a.sentTo.has(peer)) continue
      a.sentTo.add(peer)
      this.send(peer, spaceId, a.change)
    }
  }

  /** A `joinAnswer` of the session: a status is reported for a space still asked for. */
  answered(e: { peer: string; identity: string; spaceId: string; status?: JoinStatusEvent['status'] }): void {
    if (!e.status || !this.active.has(e.spaceId)) return
    this.events.emit('status', { spaceId: e.spaceId, status: e.status, identity: e.identity, peer: e.peer })
  }

  close(): void {
    this.closed = true
    for (const a of this.active.values()) a.cancel?.()
    this.active.clear()
  }

  private round(spaceId: string, a: Active) {
    if (this.active.get(spaceId) !== a) return
    a.sentTo = new Set(this.o.peers())
    for (const peer of a.sentTo) this.send(peer, spaceId, a.change)
    const base = this.o.retryBaseMs ?? JOIN_LIMITS.joinRetryBaseMs
    const max = this.o.retryMaxMs ?? JOIN_LIMITS.joinRetryMaxMs
    const delay = backoffDelay(a.attempts, base, max)
    a.attempts++
    a.cancel = this.o.timer.after(delay, () => this.round(spaceId, a))
  }

  private send(peer: string, spaceId: string, change: Uint8Array) {
    this.o.send(peer, spaceId, change).catch((err: unknown) => this.o.onError?.(err))
  }
}
