import { decodeCanonical, encodeCanonical } from '../core/encoding.ts'
import { STORES, type StorageAdapter } from '../storage/adapter.ts'
import type { SpaceRowFields } from './module.ts'
import type { OpenedProfile } from './profiles.ts'

/**
 * Which of an account's spaces are open, and the memory budget that closes the idle ones
 * (issue 41). A space opens on demand (a request, a sync, an adopt) or in the background, most
 * recently used first, while the open spaces' estimated heap (SpaceEngine.memoryEstimate) stays
 * under half the budget; past the budget the least recently used idle spaces close. A closed
 * space holds nothing in memory but its summary: what listing it and the identity directory
 * read (name, ACL roles, member profiles), which cannot move while it is closed, since only an
 * open replica takes changes. Summaries are kept in storage (meta `spaceSummary/<space>`) with
 * the time the space was last used, so the next start lists every space and knows the order
 * to open them in without opening any.
 */

/** Options of the budget (AccountEngineDeps.memoryBudget; the daemon's `--memory-budget`). */
export interface MemoryBudgetOptions {
  /** Estimated heap all open spaces may hold together, in bytes. */
  bytes: number
  /**
   * A space used within this many ms is not closed for the budget (default 1 s: a sync between
   * its open and its use; a request pins the spaces it names until answered instead).
   */
  minIdleMs?: number
  /** A space unused this long closes even under the budget (default 15 min; 0: never). */
  idleMs?: number
  /** How often the budget is checked besides after each open (default 5 s). */
  sweepMs?: number
}

/** 256 MiB: a laptop's share for one daemon's spaces (the process adds about 100 MB of its own). */
export const DEFAULT_MEMORY_BUDGET_BYTES = 256 * 1024 * 1024

/** What a closed space answers from (see above). */
export interface SpaceSummary {
  lastUsed: number
  /** Kept open by a holder when summarized (an agent trigger): the next start opens it first, whatever the budget. */
  pinned?: boolean
  name: string
  description: string
  iconCid: string
  spaceIndexObjectId: string
  author: string
  ownRole: string
  moduleFields: Partial<SpaceRowFields>
  /** The identity directory's part of the space (directory.ts). */
  roles: Array<[string, string]>
  joiners: string[]
  profiles: Array<[string, OpenedProfile]>
}

const summaryKey = (spaceId: string) => `spaceSummary/${spaceId}`

export class SpaceResidency {
  /** Listed spaces not open now: not opened yet this run, or closed under the budget. */
  readonly closed = new Set<string>()
  /** When each space was last used (a request, a sync, a subscription's start), in env ms. */
  private readonly used = new Map<string, number>()
  private readonly summaries = new Map<string, SpaceSummary>()
  /** Holders keeping a space open whatever the budget (AccountEngine.keepOpen). */
  private readonly pins = new Map<string, number>()
  /** Spaces a holder keeps open across restarts (`pin`'s acrossRestarts). */
  private readonly sticky = new Set<string>()
  readonly minIdleMs: number
  readonly idleMs: number
  readonly sweepMs: number

  constructor(
    private readonly storage: StorageAdapter,
    readonly budget: MemoryBudgetOptions | undefined,
  ) {
    this.minIdleMs = budget?.minIdleMs ?? 1_000
    this.idleMs = budget?.idleMs ?? 15 * 60_000
    this.sweepMs = budget?.sweepMs ?? 5_000
  }

  /** Reads every kept summary (one scan: about 1 KB a space). */
  async load(): Promise<void> {
    for (const [k, v] of await this.storage.scan(STORES.meta, { prefix: summaryKey('') })) {
      const s = decodeCanonical<SpaceSummary>(v)
      const id = k.slice(summaryKey('').length)
      this.summaries.set(id, s)
      if (!this.used.has(id)) this.used.set(id, s.lastUsed)
    }
  }

  touch(spaceId: string, now: number): void {
    this.used.set(spaceId, now)
  }

  lastUsed(spaceId: string): number {
    return this.used.get(spaceId) ?? 0
  }

  summary(spaceId: string): SpaceSummary | undefined {
    return this.summaries.get(spaceId)
  }

  /** Keeps a summary in memory and in storage (the space is closing, or the account stops). */
  async keep(spaceId: string, s: Omit<SpaceSummary, 'lastUsed'>): Promise<void> {
    const full: SpaceSummary = { ...s, lastUsed: this.lastUsed(spaceId), ...(this.pinned(spaceId) || this.sticky.has(spaceId) ? { pinned: true } : {}) }
    this.summaries.set(spaceId, full)
    await this.storage.commit({ puts: [{ store: STORES.meta, key: summaryKey(spaceId), value: encodeCanonical(full) }], dels: [] })
  }

  forget(spaceId: string): void {
    this.closed.delete(spaceId)
    this.summaries.delete(spaceId)
  }

  /**
   * Keeps a space open until the returned release. `acrossRestarts`: the space's summary says so
   * (the next start opens it first) unless the release is told the holder no longer needs it
   * (`release(true)`); a holder stopping with the account releases without it.
   */
  pin(spaceId: string, acrossRestarts = false): (dropped?: boolean) => void {
    this.pins.set(spaceId, (this.pins.get(spaceId) ?? 0) + 1)
    if (acrossRestarts) this.sticky.add(spaceId)
    let done = false
    return (dropped = false) => {
      if (dropped && acrossRestarts) this.sticky.delete(spaceId)
      if (done) return
      done = true
      const n = (this.pins.get(spaceId) ?? 1) - 1
      if (n > 0) this.pins.set(spaceId, n)
      else this.pins.delete(spaceId)
    }
  }

  pinned(spaceId: string): boolean {
    return this.pins.has(spaceId)
  }

  /**
   * The closed space to open next in the background: one a holder kept open when it was
   * summarized, then the most recently used; undefined once the open ones fill half the budget.
   */
  nextToOpen(openBytes: number, skip: ReadonlySet<string>): string | undefined {
    // What a holder kept open last time (agents) opens first, whatever the budget: the holder
    // learns of it only from an open space.
    for (const id of this.closed) if (!skip.has(id) && this.summaries.get(id)?.pinned) return id
    if (this.budget && openBytes >= this.budget.bytes / 2) return undefined
    let best: string | undefined
    let at = -1
    for (const id of this.closed) {
      if (skip.has(id)) continue
      const t = this.lastUsed(id)
      if (t > at) [best, at] = [id, t]
    }
    return best
  }

  /**
   * The spaces to close, least recently used first: those idle past `idleMs`, then as many of the
   * others idle past `minIdleMs` as bring the estimate under the budget. `open` lists the
   * candidates (the caller leaves out what must stay open) with their estimates; `total` is the
   * estimate of every open space.
   */
  victims(open: ReadonlyArray<{ spaceId: string; bytes: number }>, total: number, now: number): string[] {
    if (!this.budget) return []
    const out: string[] = []
    const byAge = [...open].filter((s) => !this.pinned(s.spaceId)).sort((a, b) => this.lastUsed(a.spaceId) - this.lastUsed(b.spaceId))
    let left = total
    for (const s of byAge) {
      const idle = now - this.lastUsed(s.spaceId)
      const stale = this.idleMs > 0 && idle >= this.idleMs
      if (!stale && (left <= this.budget.bytes || idle < this.minIdleMs)) continue
      out.push(s.spaceId)
      left -= s.bytes
    }
    return out
  }
}
