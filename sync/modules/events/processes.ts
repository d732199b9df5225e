import type { Json } from '../../crdt/ops.ts'
import { EVENTS } from '../../core/events-limits.ts'
import type { DeliveredEvent, EventScope } from './envelope.ts'

/** A process announced on the bus (`process.started`, or a progress whose start we missed). */
export interface PublishedProcess {
  id: string
  /** Who runs it: the signer of its events (this account for local ones). */
  sender: { identity: string; self: boolean }
  scope: EventScope
  spaceId?: string
  startedAt: number
  updatedAt: number
  /** The last full descriptor its events carried (an object; `{}` when they carried none). */
  descriptor: Record<string, Json>
}

export const PROCESS_EVENT = {
  started: 'process.started',
  progress: 'process.progress',
  done: 'process.done',
  failed: 'process.failed',
  cancelled: 'process.cancelled',
  cancel: 'process.cancel',
} as const

const isObject = (v: unknown): v is Record<string, Json> => typeof v === 'object' && v !== null && !Array.isArray(v)

/**
 * The processes live on the bus, as its events tell: one entry per (process id, publisher),
 * made by `process.started` or `process.progress`, ended by `done`, `failed` or `cancelled`.
 * `process.cancel` is a request to the runner and changes nothing here. Bounded: at most
 * maxTrackedProcesses entries (the least recently reported evicted first), and an entry that
 * reported nothing for processIdleMs is no longer live (a publisher that vanished without a
 * final event does not list forever).
 */
export class PublishedProcesses {
  /** Insertion order is report order (each report re-inserts), so the first key is the stalest. */
  private readonly entries = new Map<string, PublishedProcess>()

  constructor(private readonly now: () => number) {}

  observe(e: DeliveredEvent): void {
    if (!e.type.startsWith('process.') || e.target === undefined) return
    const key = `${e.target}\u0000${e.sender.identity}`
    switch (e.type) {
      case PROCESS_EVENT.started:
      case PROCESS_EVENT.progress: {
        const t = this.now()
        const prev = e.type === PROCESS_EVENT.started ? undefined : this.entries.get(key)
        this.entries.delete(key)
        this.entries.set(key, {
          id: e.target,
          sender: e.sender,
          scope: e.scope,
          ...(e.spaceId !== undefined ? { spaceId: e.spaceId } : {}),
          startedAt: prev?.startedAt ?? t,
          updatedAt: t,
          descriptor: isObject(e.data) ? e.data : (prev?.descriptor ?? {}),
        })
        if (this.entries.size > EVENTS.maxTrackedProcesses) this.entries.delete(this.entries.keys().next().value!)
        return
      }
      case PROCESS_EVENT.done:
      case PROCESS_EVENT.failed:
      case PROCESS_EVENT.cancelled:
        this.entries.delete(key)
    }
  }

  /** Live entries of process `id`, one per publisher, by identity. */
  live(id: string): PublishedProcess[] {
    return this.list()
      .filter((p) => p.id === id)
      .sort((a, b) => (a.sender.identity < b.sender.identity ? -1 : 1))
  }

  /** Every live entry (entries idle past processIdleMs are dropped on the way). */
  list(): PublishedProcess[] {
    const cutoff = this.now() - EVENTS.processIdleMs
    const out: PublishedProcess[] = []
    for (const [k, p] of [...this.entries]) {
      if (p.updatedAt < cutoff) this.entries.delete(k)
      else out.push(p)
    }
    return out
  }
}
