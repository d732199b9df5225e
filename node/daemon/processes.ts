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

/** How often the registry compares what runs with what it announced (progress events are at most this often per process). */
export const ANNOUNCE_TICK_MS = 1_000

/**
 * How the registry puts an event on the bus: `process.started`, `process.progress` or
 * `process.done`, `target` the process id, `data` the full descriptor (the record as
 * `GET /v1/processes` lists it, `state` `running` or `done`).
 */
export type ProcessAnnouncer = (event: { type: 'process.started' | 'process.progress' | 'process.done'; target: string; data: ProcessDescriptor }) => void

/** What a process event carries: the listed record, `state` `done` on its last event. */
export type ProcessDescriptor = Omit<ProcessRecord, 'state'> & { state: 'running' | 'done' }

export interface ProcessSourceOptions {
  /**
   * The source lists what is already on the event bus (processes a client published): the
   * registry never announces those, and leaves out an entry that is one of its own
   * announcements heard back.
   */
  fromBus?: boolean
}

/**
 * Long-running work of the daemon. Work registers when it starts and ends when done; it is
 * listed only once it has run for ANNOUNCE_AFTER_MS, so short work never flickers in lists.
 * Sources list work that lives elsewhere (a space's index work; the bus's published processes).
 *
 * Announcements (chat.md "Event envelope": `process.started`, `process.progress`,
 * `process.done`; core.md Limits: only past 3 s of work) are made here, once for every kind of
 * work: with an announcer set, every ANNOUNCE_TICK_MS the registry compares the work listed now
 * (its own and its sources', except the bus's) with what it announced, and publishes
 * `process.started` for work newly past 3 s, `process.progress` when a listed record changed
 * (its progress), `process.done` for announced work that is gone (its own work is told at once,
 * when its end is called). Work that ends within 3 s is never announced.
 */
export class ProcessRegistry {
  private readonly running = new Map<string, { kind: string; startedAt: number; progress?: Record<string, number>; count: number }>()
  private readonly sources = new Map<ProcessSource, ProcessSourceOptions>()
  /** Announced work, by id, with the descriptor last published (JSON, to see a change). */
  private readonly announced = new Map<string, { record: ProcessDescriptor; json: string }>()
  private announcer?: ProcessAnnouncer
  private timer?: ReturnType<typeof setInterval>

  constructor(
    private readonly now: () => number = Date.now,
    private readonly log: Logger = silentLogger,
    /** 0: no timer, the owner calls `tick` (tests drive it with their clock). */
    private readonly tickMs: number = ANNOUNCE_TICK_MS,
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
      if (r && --r.count === 0) {
        this.running.delete(id)
        if (this.announced.has(id)) this.tick()
      }
    }
  }

  progress(id: string, progress: Record<string, number>) {
    const r = this.running.get(id)
    if (r) r.progress = progress
  }

  /** Lists another source's work too (a space's index work, the event bus's processes); returns its removal. */
  addSource(source: ProcessSource, options: ProcessSourceOptions = {}): () => void {
    this.sources.set(source, options)
    return () => void this.sources.delete(source)
  }

  /**
   * Announces long work through `announcer` from now on (the events module sets it: the bus
   * belongs to the booted account); returns its removal, which stops the ticks.
   */
  announceWith(announcer: ProcessAnnouncer): () => void {
    this.announcer = announcer
    if (this.tickMs > 0 && !this.timer) {
      this.timer = setInterval(() => this.tick(), this.tickMs)
      this.timer.unref?.()
    }
    return () => {
      if (this.announcer !== announcer) return
      this.announcer = undefined
      if (this.timer) clearInterval(this.timer)
      this.timer = undefined
      this.announced.clear()
    }
  }

  /** One comparison of the work listed now with the work announced (see the class comment). */
  tick(): void {
    const announce = this.announcer
    if (!announce) return
    const now = new Map(this.ownWork(false).map((r) => [r.id, r]))
    const publish = (type: Parameters<ProcessAnnouncer>[0]['type'], data: ProcessDescriptor) => {
      try {
        announce({ type, target: data.id, data })
      } catch (err) {
        // At most once, like every event: no account booted, or the bus closing.
        this.log.debug('announcing a process failed', { processId: data.id, err: errField(err) })
      }
    }
    for (const [id, prev] of [...this.announced]) {
      if (now.has(id)) continue
      this.announced.delete(id)
      publish('process.done', { ...prev.record, state: 'done' })
    }
    for (const [id, record] of now) {
      const json = JSON.stringify(record)
      const prev = this.announced.get(id)
      if (prev?.json === json) continue
      this.announced.set(id, { record, json })
      publish(prev ? 'process.progress' : 'process.started', record)
    }
  }

  list(): ProcessRecord[] {
    const own = this.ownWork(true)
    return own.sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : (a.sender?.identity ?? '') < (b.sender?.identity ?? '') ? -1 : 1))
  }

  /** Work past ANNOUNCE_AFTER_MS: the registry's and its sources' (the bus's too when `withBus`). */
  private ownWork(withBus: boolean): ProcessRecord[] {
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
    for (const [source, options] of this.sources) {
      if (options.fromBus && !withBus) continue
      try {
        const listed = source()
        // The registry's own announcements come back through the bus: listed once, as the work.
        own.push(...(options.fromBus ? listed.filter((r) => !(r.sender?.self && this.announced.has(r.id))) : listed))
      } catch (err) {
        // A source with nothing to show now (no account booted) lists nothing.
        this.log.debug('a process source listed nothing', { err: errField(err) })
      }
    }
    return own
  }
}
