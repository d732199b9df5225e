import type { Json } from '../../sync/crdt/ops.ts'
import { errField, silentLogger, type Logger } from '../../sync/core/log.ts'
import type { PublishedProcess } from '../../sync/modules/events/processes.ts'

/** A long-running piece of work, as `GET /v1/processes` lists it (fields of our design). */
export interface ProcessRecord {
  id: string
  kind: string
  state: 'running'
  startedAt: { $date: string }
  /** Free-form progress the work reports, e.g. `{done, total}`. */
  progress?: Record<string, number>
  /** Processes announced on the event bus: who runs it, where it reports, its last descriptor. */
  sender?: { identity: string; self: boolean }
  scope?: string
  spaceId?: string
  descriptor?: Record<string, Json>
}

/** Work listed from elsewhere than the registry (the event bus's published processes). */
export type ProcessSource = () => ProcessRecord[]

const numbersOnly = (v: unknown): Record<string, number> | undefined => {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return undefined
  const out: Record<string, number> = {}
  for (const [k, n] of Object.entries(v)) if (typeof n === 'number') out[k] = n
  return out
}

/**
 * A process published on the event bus, as the processes list shows it: listed at once (it
 * announced itself), `kind` from its descriptor (`published` when it gave none).
 */
export function publishedRecord(p: PublishedProcess): ProcessRecord {
  const progress = numbersOnly(p.descriptor.progress)
  return {
    id: p.id,
    kind: typeof p.descriptor.kind === 'string' ? p.descriptor.kind : 'published',
    state: 'running',
    startedAt: { $date: new Date(p.startedAt).toISOString() },
    ...(progress ? { progress } : {}),
    sender: p.sender,
    scope: p.scope,
    ...(p.spaceId !== undefined ? { spaceId: p.spaceId } : {}),
    descriptor: p.descriptor,
  }
}

/** Work announces itself only past this long (spec Limits: process announcement). */
export const ANNOUNCE_AFTER_MS = 3_000

/**
 * Long-running work of the daemon. Work registers when it starts and ends when done; it is
 * listed only once it has run for ANNOUNCE_AFTER_MS, so short work never flickers in lists.
 */
export class ProcessRegistry {
  private readonly running = new Map<string, { kind: string; startedAt: number; progress?: Record<string, number>; count: number }>()
  private readonly sources = new Set<ProcessSource>()

  constructor(
    private readonly now: () => number = Date.now,
    private readonly log: Logger = silentLogger,
  ) {}

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

  /** Lists another source's work too (the event bus's processes); returns its removal. */
  addSource(source: ProcessSource): () => void {
    this.sources.add(source)
    return () => void this.sources.delete(source)
  }

  list(): ProcessRecord[] {
    const now = this.now()
    const own: ProcessRecord[] = [...this.running]
      .filter(([, r]) => now - r.startedAt >= ANNOUNCE_AFTER_MS)
      .map(([id, r]) => ({
        id,
        kind: r.kind,
        state: 'running' as const,
        startedAt: { $date: new Date(r.startedAt).toISOString() },
        ...(r.progress ? { progress: r.progress } : {}),
      }))
    for (const source of this.sources) {
      try {
        own.push(...source())
      } catch (err) {
        // A source with nothing to show now (no account booted) lists nothing.
        this.log.debug('a process source listed nothing', { err: errField(err) })
      }
    }
    return own.sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : (a.sender?.identity ?? '') < (b.sender?.identity ?? '') ? -1 : 1))
  }
}
