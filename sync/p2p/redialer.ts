import type { Timer } from '../protocol/sync-driver.ts'
import { P2P } from './constants.ts'

export interface RedialerOptions {
  /** Dials an address; rejects when no connection came of it. */
  dial(multiaddr: string): Promise<unknown>
  isConnected(peerId: string): boolean
  timer: Pick<Timer, 'after'>
  now(): number
  baseMs?: number
  maxMs?: number
}

export interface DialState {
  /** Dials that failed since the last connection. */
  failures: number
  lastError: string | null
  /** When the next dial is due (ms), if one is scheduled. */
  nextDialAt: number | null
}

interface Watched extends DialState {
  multiaddr: string
  cancel?: () => void
  dialing: boolean
}

/**
 * Keeps peers added by address connected: dials each at once, and whenever it is not connected
 * again after baseMs, 2 baseMs, 4 baseMs, ... (capped at maxMs) while dials fail; a connection
 * resets the delay. A peer whose connection drops (it restarted, the network moved) is redialled
 * from the base delay.
 */
export class Redialer {
  private readonly watched = new Map<string, Watched>()
  private closed = false

  constructor(private readonly o: RedialerOptions) {}

  /** Starts keeping `peerId` connected at `multiaddr` (a new address replaces the old one). */
  watch(peerId: string, multiaddr: string): void {
    if (this.closed) return
    const old = this.watched.get(peerId)
    old?.cancel?.()
    const w: Watched = { multiaddr, failures: 0, lastError: null, nextDialAt: null, dialing: false }
    this.watched.set(peerId, w)
    this.dialNow(peerId, w)
  }

  /** The peer is at another address: the next dials go there (its state and schedule stay). */
  readdress(peerId: string, multiaddr: string): void {
    const w = this.watched.get(peerId)
    if (w) w.multiaddr = multiaddr
  }

  unwatch(peerId: string): void {
    this.watched.get(peerId)?.cancel?.()
    this.watched.delete(peerId)
  }

  state(peerId: string): DialState | undefined {
    const w = this.watched.get(peerId)
    return w && { failures: w.failures, lastError: w.lastError, nextDialAt: w.nextDialAt }
  }

  /** A connection to the peer came up (by our dial or theirs). */
  connected(peerId: string): void {
    const w = this.watched.get(peerId)
    if (!w) return
    w.cancel?.()
    w.cancel = undefined
    w.failures = 0
    w.lastError = null
    w.nextDialAt = null
  }

  /** The peer's last connection went down: dial again after the base delay. */
  disconnected(peerId: string): void {
    const w = this.watched.get(peerId)
    if (w && !w.dialing) this.schedule(peerId, w)
  }

  close(): void {
    this.closed = true
    for (const w of this.watched.values()) w.cancel?.()
    this.watched.clear()
  }

  private delay(w: Watched): number {
    const base = this.o.baseMs ?? P2P.redialBaseMs
    // The first retry after base, then doubling per failed dial (a drop, with no failure yet, also waits base).
    return Math.min(this.o.maxMs ?? P2P.redialMaxMs, base * 2 ** Math.min(Math.max(0, w.failures - 1), 30))
  }

  private schedule(peerId: string, w: Watched) {
    if (this.closed || this.watched.get(peerId) !== w) return
    w.cancel?.()
    const ms = this.delay(w)
    w.nextDialAt = this.o.now() + ms
    w.cancel = this.o.timer.after(ms, () => {
      w.cancel = undefined
      w.nextDialAt = null
      this.dialNow(peerId, w)
    })
  }

  private dialNow(peerId: string, w: Watched) {
    if (this.closed || this.watched.get(peerId) !== w || w.dialing) return
    if (this.o.isConnected(peerId)) return
    w.dialing = true
    this.o.dial(w.multiaddr).then(
      () => {
        w.dialing = false
        this.connected(peerId)
      },
      (err: unknown) => {
        w.dialing = false
        if (this.watched.get(peerId) !== w) return
        w.failures++
        w.lastError = err instanceof Error ? err.message.slice(0, 200) : 'dial failed'
        this.schedule(peerId, w)
      },
    )
  }
}
