/** Index work listed only past this long (spec Limits: process announcement). */
export const ANNOUNCE_AFTER_MS = 3_000

/** A piece of index work as `GET /v1/processes` lists it (node/daemon/processes.ts ProcessRecord). */
export interface IndexProcess {
  id: string
  kind: 'index.fts' | 'index.embed'
  state: 'running'
  startedAt: { $date: string }
  spaceId: string
  progress: { done: number; total: number }
}

/**
 * The index work of one space running now: a full-text build (`index.fts.<spaceId>`) and a
 * vector backfill (`index.embed.<spaceId>`), each with its progress. Listed only once it has
 * run ANNOUNCE_AFTER_MS, so the short builds of small spaces never show.
 */
export class IndexWork {
  private readonly running = new Map<string, { kind: IndexProcess['kind']; startedAt: number; done: number; total: number }>()

  constructor(
    private readonly spaceId: string,
    private readonly now: () => number,
  ) {}

  start(kind: IndexProcess['kind'], total: number): (done: number, total?: number) => void {
    const id = `${kind}.${this.spaceId}`
    const r = { kind, startedAt: this.now(), done: 0, total }
    this.running.set(id, r)
    return (done, t) => {
      r.done = done
      if (t !== undefined) r.total = t
    }
  }

  end(kind: IndexProcess['kind']) {
    this.running.delete(`${kind}.${this.spaceId}`)
  }

  /** Whether `kind` runs now, announced or not (tests and the bench wait on it). */
  runs(kind: IndexProcess['kind']): boolean {
    return this.running.has(`${kind}.${this.spaceId}`)
  }

  list(): IndexProcess[] {
    const now = this.now()
    return [...this.running]
      .filter(([, r]) => now - r.startedAt >= ANNOUNCE_AFTER_MS)
      .map(([id, r]) => ({
        id,
        kind: r.kind,
        state: 'running' as const,
        startedAt: { $date: new Date(r.startedAt).toISOString() },
        spaceId: this.spaceId,
        progress: { done: r.done, total: r.total },
      }))
  }
}
