import { SvcError } from '../../core/errors.ts'
import { errField, silentLogger, type Logger } from '../../core/log.ts'
import type { Json } from '../../crdt/ops.ts'
import { EVENTS } from '../../core/events-limits.ts'
import { checkPublish, filterKey, matches, type BusEvent, type DeliveredEvent, type EventFilter, type PublishDraft } from './envelope.ts'
import { PROCESS_EVENT, PublishedProcesses, type PublishedProcess } from './processes.ts'

/**
 * Where a delivered event goes: `shared` is one object per delivery, so a sink that encodes
 * the event (an SSE frame) does it once for all its siblings (`shared.frame ??= ...`).
 */
export type EventSink = (event: DeliveredEvent, shared: { frame?: string }) => void

/** What the bus asks of the account about spaces. */
export interface BusAccess {
  readonly accountId: string
  /** Throws `space.*` when the space does not resolve, 409 `events.no_read_key` without full membership. */
  requireFullMember(spaceId: string): void
}

/** The network side (node/p2p/events-network.ts): sends an account or space event to peers. */
export interface BusNetwork {
  publish(event: BusEvent): void
  /** Counters of what was not sent and what peers sent that was dropped, by reason. */
  stats(): { unsent: Record<string, number>; dropped: Record<string, number> }
}

export interface Subscription {
  close(): void
}

/** Subscribers with one filter: identical filters share one interest. */
interface Interest {
  readonly filter: EventFilter
  readonly budgetKeys: readonly string[]
  readonly sinks: Set<EventSink>
}

/** The interest budget key of filters naming no space: the account's own. */
const LOCAL_BUDGET = ''

/**
 * The account's event bus (chat.md "Event bus"): fire-and-forget events fanned out to the
 * subscribers whose filter matches; nothing is stored, nothing is replayed. `device` events stay
 * here; `account` and `space` events also go to the network side, and the network side hands
 * the events peers send us to `deliverRemote`. Interests are budgeted: at most
 * maxPatternsPerSpace distinct filters name one space (filters naming none share a budget of
 * the same size), 409 `events.too_many_patterns` past it.
 */
export class EventBus {
  private readonly interests = new Map<string, Interest>()
  private readonly patterns = new Map<string, number>()
  readonly processes: PublishedProcesses
  private network?: BusNetwork

  constructor(
    private readonly access: BusAccess,
    now: () => number,
    private readonly log: Logger = silentLogger,
  ) {
    this.processes = new PublishedProcesses(now)
  }

  get accountId(): string {
    return this.access.accountId
  }

  /** The network side, once P2P runs (device-scope events never need it). */
  attachNetwork(net: BusNetwork | undefined): void {
    this.network = net
  }

  /** With the account: nothing more reaches a subscriber or the network. */
  close(): void {
    this.network = undefined
    this.interests.clear()
    this.patterns.clear()
  }

  /** The network side's counters (undefined while P2P is off). */
  networkStats(): ReturnType<BusNetwork['stats']> | undefined {
    return this.network?.stats()
  }

  /** Subscribers right now (all interests). */
  get subscribers(): number {
    let n = 0
    for (const i of this.interests.values()) n += i.sinks.size
    return n
  }

  /**
   * `internal`: a subscription of the daemon's own (a module listening to every space it holds,
   * such as cursor presence) that does not count against the interest budget clients share.
   */
  subscribe(filter: EventFilter, sink: EventSink, opts: { internal?: boolean } = {}): Subscription {
    for (const s of filter.spaceIds ?? []) this.access.requireFullMember(s)
    const key = (opts.internal ? 'internal:' : '') + filterKey(filter)
    let interest = this.interests.get(key)
    if (!interest) {
      const budgetKeys = opts.internal ? [] : (filter.spaceIds ?? [LOCAL_BUDGET])
      const full = budgetKeys.find((k) => (this.patterns.get(k) ?? 0) >= EVENTS.maxPatternsPerSpace)
      if (full !== undefined) {
        throw new SvcError('events.too_many_patterns', 'the interest pattern budget of this space is exhausted', {
          limit: EVENTS.maxPatternsPerSpace,
          ...(full ? { spaceId: full } : {}),
        })
      }
      for (const k of budgetKeys) this.patterns.set(k, (this.patterns.get(k) ?? 0) + 1)
      interest = { filter, budgetKeys, sinks: new Set() }
      this.interests.set(key, interest)
    }
    interest.sinks.add(sink)
    const it = interest
    let open = true
    return {
      close: () => {
        if (!open) return
        open = false
        it.sinks.delete(sink)
        if (it.sinks.size > 0 || this.interests.get(key) !== it) return
        this.interests.delete(key)
        for (const k of it.budgetKeys) {
          const n = (this.patterns.get(k) ?? 1) - 1
          if (n === 0) this.patterns.delete(k)
          else this.patterns.set(k, n)
        }
      },
    }
  }

  /** Distinct interests naming a space (or none: ''), for tests and debugging. */
  patternsOf(spaceId: string): number {
    return this.patterns.get(spaceId) ?? 0
  }

  /**
   * A local client's publish: checked, delivered to local subscribers, sent to the network for
   * network scopes. Returns the number of local subscribers matched (0 is success).
   */
  publish(draft: PublishDraft): number {
    const event = checkPublish(draft, this.access.accountId)
    return this.publishChecked(event)
  }

  private publishChecked(event: BusEvent): number {
    if (event.scope === 'space') this.access.requireFullMember(event.spaceId!)
    const n = this.deliver({ ...event, sender: { identity: this.access.accountId, self: true } })
    if (event.scope !== 'device') {
      try {
        this.network?.publish(event)
      } catch (err) {
        // At most once: a network side that cannot send now loses the event, never the publish.
        this.log.debug('sending an event to peers failed', { eventScope: event.scope, err: errField(err) })
      }
    }
    return n
  }

  /** An event a peer sent (verified by the network side: signature, membership, key). */
  deliverRemote(event: BusEvent, identity: string): number {
    return this.deliver({ ...event, sender: { identity, self: identity === this.access.accountId } })
  }

  private deliver(event: DeliveredEvent): number {
    this.processes.observe(event)
    const shared: { frame?: string } = {}
    let n = 0
    for (const interest of this.interests.values()) {
      if (!matches(interest.filter, event)) continue
      for (const sink of interest.sinks) {
        n++
        try {
          sink(event, shared)
        } catch (err) {
          // One failing subscriber starves no other.
          this.log.debug('delivering an event to a subscriber failed', { err: errField(err) })
        }
      }
    }
    return n
  }

  // ------------------------------------------------------------------ process helpers

  /** A progress report on a process this account runs: every progress event carries the full descriptor. */
  processProgress(id: string, update: { progress?: Record<string, number>; message?: string }): number {
    const p = this.ownProcess(id)
    const descriptor: Record<string, Json> = {
      ...p.descriptor,
      ...(update.progress ? { progress: update.progress } : {}),
      ...(update.message !== undefined ? { message: update.message } : {}),
    }
    return this.emitFor(p, PROCESS_EVENT.progress, descriptorOf(p, descriptor, 'running'))
  }

  /** The end of a process this account runs: `done`, `failed` (with `error`) or `cancelled`. */
  processFinish(id: string, end: { status: 'done' | 'failed' | 'cancelled'; error?: string; result?: Json }): number {
    const p = this.ownProcess(id)
    const descriptor: Record<string, Json> = {
      ...p.descriptor,
      ...(end.error !== undefined ? { error: end.error } : {}),
      ...(end.result !== undefined ? { result: end.result } : {}),
    }
    return this.emitFor(p, PROCESS_EVENT[end.status], descriptorOf(p, descriptor, end.status))
  }

  /**
   * Asks the runner of process `id` to cancel (`process.cancel`, in the scope and space it
   * announced itself in). Any live process may be asked, this account's or another member's;
   * 409 `process.ambiguous` when several publishers run that id.
   */
  processCancel(id: string, reason?: string): number {
    const live = this.processes.live(id)
    if (live.length === 0) throw new SvcError('process.not_found', 'no live process has this id', { processId: id })
    if (live.length > 1) throw new SvcError('process.ambiguous', 'several publishers run this process id', { processId: id, identities: live.map((p) => p.sender.identity) })
    return this.emitFor(live[0], PROCESS_EVENT.cancel, { id, ...(reason !== undefined ? { reason } : {}) })
  }

  private ownProcess(id: string): PublishedProcess {
    const own = this.processes.live(id).find((p) => p.sender.self)
    if (!own) throw new SvcError('process.not_found', 'no live process of this account has this id', { processId: id })
    return own
  }

  private emitFor(p: PublishedProcess, type: string, data: Json): number {
    const event: BusEvent = { type, scope: p.scope, target: p.id, data }
    if (p.spaceId !== undefined) event.spaceId = p.spaceId
    return this.publishChecked(event)
  }
}

function descriptorOf(p: PublishedProcess, fields: Record<string, Json>, state: string): Record<string, Json> {
  return { ...fields, id: p.id, state, startedAt: { $date: new Date(p.startedAt).toISOString() } }
}
