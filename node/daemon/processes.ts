/** A long-running piece of work, as `GET /v1/processes` lists it (fields of our design). */
export interface ProcessRecord {
  id: string
  kind: string
  state: 'running'
  startedAt: { $date: string }
  /** Free-form progress the work reports, e.g. `{done, total}`. */
  progress?: Record<string, number>
}

/** Work announces itself only past this long (spec Limits: process announcement). */
export const ANNOUNCE_AFTER_MS = 3_000

/**
 * Long-running work of the daemon. Work registers when it starts and ends when done; it is
 * listed only once it has run for ANNOUNCE_AFTER_MS, so short work never flickers in lists.
 */
export class ProcessRegistry {
  private readonly running = new Map<string, { kind: string; startedAt: number; progress?: Record<string, number>; count: number }>()

  constructor(private readonly now: () => number = Date.now) {}

  /** Starts (or joins, for the same id) a piece of work; call the returned function when done. */
  start(id: string, kind: string): () => void {
    const cur = this.running.get(id)
    if (cur) cur.count++
    else this.running.set(id, { kind, startedAt: this.now(), count: 1 })
    let ended = false
    return () => {
      if (ended) return
      ended = true
      const r = this.running.get(id)
      if (r && --r.count === 0) this.running.delete(id)
    }
  }

  progress(id: string, progress: Record<string, number>) {
    const r = this.running.get(id)
    if (r) r.progress = progress
  }

  list(): ProcessRecord[] {
    const now = this.now()
    return [...this.running]
      .filter(([, r]) => now - r.startedAt >= ANNOUNCE_AFTER_MS)
      .map(([id, r]) => ({ id, kind: r.kind, state: 'running' as const, startedAt: { $date: new Date(r.startedAt).toISOString() }, ...(r.progress ? { progress: r.progress } : {}) }))
      .sort((a, b) => (a.id < b.id ? -1 : 1))
  }
}
