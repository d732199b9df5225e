import { REPLICA_LIMITS } from '../core/limits.ts'
import { detached, type Change } from '../dag/change.ts'

interface Parked {
  c: Change
  origin: string
  bytes: number
  /** Ids it waits for (parents, cited ACL record) when it was parked. */
  waits: string[]
}

export interface ParkingLimits {
  perOrigin: number
  perSpace: number
}

/**
 * Changes held back until what they depend on (parents, the cited ACL record) arrives, bounded
 * in bytes per origin and per space. Indexed by the ids they wait for, so applying a change
 * looks only at the parked changes waiting for it: a batch that unblocks nothing, a local
 * write above all, costs one map lookup per applied change, however much is parked.
 */
export class ParkedChanges {
  /** In parking order: the first is the oldest. */
  private readonly byId = new Map<string, Parked>()
  private readonly byOrigin = new Map<string, { bytes: number; ids: Set<string> }>()
  private readonly waiters = new Map<string, Set<string>>()
  private total = 0
  /** Parked changes looked at (woken, replaced or evicted): shows which paths never scan them. */
  examined = 0
  evicted = 0

  constructor(private readonly limits: ParkingLimits = { perOrigin: REPLICA_LIMITS.maxParkedBytesPerOrigin, perSpace: REPLICA_LIMITS.maxParkedBytesPerSpace }) {}

  get size() {
    return this.byId.size
  }
  /** Bytes charged for everything parked (change bytes plus fixed overheads). */
  get bytes() {
    return this.total
  }
  bytesFrom(origin: string): number {
    return this.byOrigin.get(origin)?.bytes ?? 0
  }
  has(id: string) {
    return this.byId.has(id)
  }

  /**
   * Parks `c` from `origin` until one of `waits` is applied. Over the origin's share its own
   * oldest changes go first; over the space's, the oldest of anyone's. A change larger than
   * an origin's whole share is not parked at all.
   */
  park(c: Change, origin: string, waits: string[]) {
    this.drop(c.id)
    c = detached(c)
    const bytes = c.raw.byteLength + REPLICA_LIMITS.parkedOverheadBytes + waits.length * REPLICA_LIMITS.parkedWaitOverheadBytes
    if (bytes > this.limits.perOrigin || bytes > this.limits.perSpace) return
    let mine = this.byOrigin.get(origin)
    while (mine && mine.bytes + bytes > this.limits.perOrigin) {
      this.evict(mine.ids.values().next().value!)
      mine = this.byOrigin.get(origin)
    }
    while (this.total + bytes > this.limits.perSpace) this.evict(this.byId.keys().next().value!)
    if (!mine) this.byOrigin.set(origin, (mine = { bytes: 0, ids: new Set() }))
    mine.bytes += bytes
    mine.ids.add(c.id)
    this.total += bytes
    this.byId.set(c.id, { c, origin, bytes, waits })
    for (const w of waits) {
      let set = this.waiters.get(w)
      if (!set) this.waiters.set(w, (set = new Set()))
      set.add(c.id)
    }
  }

  /**
   * Removes and returns the parked changes waiting for any of `ids[from..]`, to be tried again;
   * `origins` learns who sent each, so one parked again is charged to its sender.
   */
  wake(ids: readonly string[], from: number, origins: Map<string, string>): Change[] {
    if (this.byId.size === 0) return NONE
    let out: Change[] | undefined
    for (let i = from; i < ids.length; i++) {
      const set = this.waiters.get(ids[i])
      if (!set) continue
      for (const pid of [...set]) {
        const p = this.byId.get(pid)
        if (!p) continue
        this.examined++
        this.remove(pid, p)
        origins.set(pid, p.origin)
        ;(out ??= []).push(p.c)
      }
    }
    return out ?? NONE
  }

  /** Forgets a parked change (it arrived again and is being applied). */
  drop(id: string) {
    const p = this.byId.get(id)
    if (p) {
      this.examined++
      this.remove(id, p)
    }
  }

  private evict(id: string) {
    const p = this.byId.get(id)!
    this.examined++
    this.evicted++
    this.remove(id, p)
  }

  private remove(id: string, p: Parked) {
    this.byId.delete(id)
    this.total -= p.bytes
    const mine = this.byOrigin.get(p.origin)!
    mine.bytes -= p.bytes
    mine.ids.delete(id)
    if (mine.ids.size === 0) this.byOrigin.delete(p.origin)
    for (const w of p.waits) {
      const set = this.waiters.get(w)
      if (!set) continue
      set.delete(id)
      if (set.size === 0) this.waiters.delete(w)
    }
  }
}

const NONE: Change[] = []
