import { errField } from '../../sync/core/log.ts'
import type { Env } from '../../sync/core/env.ts'
import type { Json, JsonObject } from '../../sync/crdt/ops.ts'
import { armTrigger, evaluate, type Armed } from '../../sync/modules/agents/kinds.ts'
import { AGENT_LIMITS } from '../../sync/modules/agents/limits.ts'
import { CHAT_SOURCE, CHAT_WATCH_ID } from '../../sync/modules/agents/program-ref.ts'
import { budgetsOf, definitionKey, MARKERS, readTrigger, TRIGGERS_DS, type RunEnvelope, type RunRecord, type TriggerDef } from '../../sync/modules/agents/record.ts'
import { anchorIdOf, appendRun, readTriggers, runsOf, writeTrigger } from '../../sync/modules/agents/store.ts'
import type { ElectionView } from '../../sync/modules/agents/election.ts'
import type { AccountEngine } from '../../sync/space/account-engine.ts'
import type { SpaceChange, SpaceEngine } from '../../sync/space/space-engine.ts'
import { isOwnAgentMessage, type EventInput } from './events.ts'
import { dropTraceFiles, keepTrace } from './traces.ts'

/** What runs one fire: the program of a trigger with its args (node/agents/runner.ts). */
export type FireRunner = (
  space: SpaceEngine,
  def: TriggerDef,
  args: JsonObject,
  runId: string,
) => Promise<RunEnvelope & { memPages: number; costUsd: number; tokens: number; trace: string[]; marker?: string }>

/** A trigger this device adopted (its registry entry). */
export interface Entry {
  spaceId: string
  id: string
  def: TriggerDef
  defKey: string
  armed: Armed
  /** Next fire of a cron; undefined when disarmed. */
  nextAt?: number
  /** When the entry (re)armed: event messages created before it never fire (live only). */
  armedAt: number
  failures: number
  running: boolean
  queue: EventInput[]
  /** Runs of the retained window, newest first (the rollups' source). */
  window: Array<{ durationMs: number; status: string }>
}

const key = (spaceId: string, id: string) => `${spaceId}/${id}`
const HEALTH = new Set<string>(MARKERS.filter((m) => m !== 'auto_disabled'))

/**
 * A device's trigger registry and its tick (chat.md "Agent trigger"): every tick reads each
 * held space's `agent_triggers` (the source of truth: a registry-only edit is overwritten),
 * adopts what this device runs (pinned to its peer id, or floating while the election is
 * active here), evicts what moved or was deleted, stamps markers, and fires what is due. Event
 * triggers fire from the account's change feed, for messages created while armed.
 */
export class Scheduler {
  readonly registry = new Map<string, Entry>()
  /** Ids seen deleted, per space: never adopted again (chat.md: deleted ids stay tombstoned). */
  private readonly tombstones = new Map<string, Set<string>>()
  private readonly inFlight = new Set<Promise<void>>()
  private stopChanges: () => void
  private stopped = false
  /** Spaces with a trigger registered here stay open whatever the memory budget (AccountEngine.keepOpen). */
  private readonly kept = new Map<string, (dropped?: boolean) => void>()

  constructor(
    private readonly account: AccountEngine,
    private readonly env: Env,
    readonly peerId: string,
    private readonly election: () => Promise<ElectionView>,
    private readonly runner: FireRunner,
    private readonly hooks: {
      onAdopt?: (space: SpaceEngine, e: Entry, takeover: boolean) => void | Promise<void>
      beforeTick?: (space: SpaceEngine, view: ElectionView) => Promise<void>
    } = {},
  ) {
    this.stopChanges = account.events.on('change', ({ space, change }) => this.onChange(space, change))
  }

  stop(): void {
    this.stopped = true
    this.stopChanges()
    for (const release of this.kept.values()) release()
    this.kept.clear()
  }

  /** Resolves when every run started so far has finished. */
  async idle(): Promise<void> {
    while (this.inFlight.size) await Promise.allSettled([...this.inFlight])
  }

  private spaces(): SpaceEngine[] {
    return this.account.openSpaces().filter((s) => s !== this.account.tech)
  }

  /** One tick: reconcile every held space, then fire due schedules. */
  async tick(): Promise<void> {
    if (this.stopped) return
    const view = await this.election()
    const now = this.env.now()
    const seen = new Set<string>()
    for (const space of this.spaces()) {
      try {
        if (this.hooks.beforeTick) await this.hooks.beforeTick(space, view)
        await this.reconcile(space, view, now, seen)
      } catch (err) {
        // One space's failure (a write refused, a space closing) never stops the others.
        this.account.log.debug("reconciling a space's agents failed", { spaceId: space.spaceId, err: errField(err) })
      }
    }
    for (const k of this.registry.keys()) if (!seen.has(k)) this.registry.delete(k)
    const withTriggers = new Set([...this.registry.values()].map((e) => e.spaceId))
    // Kept across restarts too: after one, the scheduler sees a space's triggers only once it is open.
    for (const id of withTriggers) if (!this.kept.has(id)) this.kept.set(id, this.account.keepOpen(id, true))
    for (const [id, release] of this.kept) {
      if (withTriggers.has(id)) continue
      release(true)
      this.kept.delete(id)
    }
    for (const e of this.registry.values()) this.fireDue(e, now)
  }

  private async reconcile(space: SpaceEngine, view: ElectionView, now: number, seen: Set<string>): Promise<void> {
    const rows = await readTriggers(space)
    let tomb = this.tombstones.get(space.spaceId)
    if (!tomb) this.tombstones.set(space.spaceId, (tomb = new Set()))
    for (const id of rows.deleted) tomb.add(id)
    let adopted = 0
    for (const { id, value, creator } of rows.live) {
      // Only the account's own records: a member cannot make this device run a program of theirs.
      if (tomb.has(id) || creator !== this.account.accountId) continue
      const def = readTrigger(id, value)
      const mine = view.state !== 'pruned' && (def.owner === this.peerId || (def.owner === '' && view.active))
      const k = key(space.spaceId, id)
      const cur = this.registry.get(k)
      if (!mine || adopted >= AGENT_LIMITS.triggersPerSpace) continue
      adopted++
      seen.add(k)
      if (!cur) {
        const e = this.adopt(space, def, value, now)
        // chat.md: an unowned record adopted by the active device gets its owner stamped; the
        // reserved chat-watch stays floating so it follows the election.
        if (def.owner === '' && id !== CHAT_WATCH_ID) await writeTrigger(space, id, { owner: this.peerId })
        await this.hooks.onAdopt?.(space, e, false)
        await this.health(space, e, now)
        continue
      }
      this.update(cur, def, value, now)
      await this.health(space, cur, now)
    }
  }

  private adopt(space: SpaceEngine, def: TriggerDef, value: JsonObject, now: number): Entry {
    const e: Entry = {
      spaceId: space.spaceId,
      id: def.id,
      def,
      defKey: definitionKey(value),
      armed: armTrigger(def),
      armedAt: now,
      failures: 0,
      running: false,
      queue: [],
      window: [],
    }
    this.arm(e, now)
    this.registry.set(key(space.spaceId, def.id), e)
    void runsOf(space, def.id).then(
      (runs) => (e.window = runs.map((r) => ({ durationMs: r.durationMs, status: r.status }))),
      () => undefined,
    )
    return e
  }

  /** The record as it stands now replaces the entry's copy; a definition edit or an enable re-arms forward. */
  private update(e: Entry, def: TriggerDef, value: JsonObject, now: number): void {
    const k = definitionKey(value)
    const enabledNow = def.enabled && !e.def.enabled
    const rebuilt = k !== e.defKey
    e.def = def
    if (rebuilt || enabledNow) {
      e.defKey = k
      e.armed = armTrigger(def)
      e.armedAt = now
      if (enabledNow) e.failures = 0
      this.arm(e, now)
    } else if (!def.enabled) e.nextAt = undefined
    else if (e.nextAt === undefined) this.arm(e, now)
  }

  private arm(e: Entry, now: number): void {
    e.nextAt = e.def.enabled && e.armed.kind === 'cron' ? e.armed.next(now) : undefined
  }

  /** Markers: stamped while the definition is wrong, cleared once it is fixed (never by another device's guess). */
  private async health(space: SpaceEngine, e: Entry, now: number): Promise<void> {
    if (!e.def.enabled) return
    const verdict = evaluate(e.def, now)
    if (verdict.kind === 'marker') {
      if (e.def.lastStatus !== verdict.marker) await writeTrigger(space, e.id, { lastStatus: verdict.marker })
      e.def.lastStatus = verdict.marker
    } else if (e.def.lastStatus !== undefined && HEALTH.has(e.def.lastStatus)) {
      await writeTrigger(space, e.id, {}, ['lastStatus'])
      e.def.lastStatus = undefined
    }
  }

  private fireDue(e: Entry, now: number): void {
    if (!e.def.enabled || e.running) return
    if (e.armed.kind === 'cron' && e.nextAt !== undefined && now >= e.nextAt) {
      // The next occurrence strictly after now: the missed ones in between do not exist.
      e.nextAt = e.armed.next(now)
      this.fire(e, {})
    } else if (e.armed.kind === 'once' && now >= e.armed.atMs && e.def.lastRunAt === undefined) {
      this.fire(e, {}, true)
    } else if (e.queue.length) {
      this.fire(e, { event: e.queue.shift()! as unknown as Json })
    }
  }

  /** chat.md: a new message in a watched chat fires its event triggers (live only, never the agent's own). */
  private onChange(space: SpaceEngine, change: SpaceChange): void {
    if (this.stopped) return
    for (const e of this.registry.values()) {
      if (e.spaceId !== space.spaceId || e.armed.kind !== 'event' || !e.def.enabled) continue
      const recs = change.records.get(e.armed.objectId)?.get(CHAT_SOURCE)
      if (!recs) continue
      for (const [msgId, ops] of recs) {
        const created = ops.find((o) => o.type === '$set' && o.path === '')
        if (!created) continue
        const v = created.value as JsonObject
        if (isOwnAgentMessage(v, this.account.accountId)) continue
        const at = typeof (v.createdAt as { $date?: unknown } | undefined)?.$date === 'string' ? Date.parse((v.createdAt as { $date: string }).$date) : NaN
        if (!(at >= e.armedAt)) continue
        this.enqueue(e, {
          space: space.spaceId,
          objectId: e.armed.objectId,
          messageId: msgId,
          text: typeof v.text === 'string' ? v.text : '',
          ...(v.agent ? { agent: v.agent } : {}),
        })
      }
    }
  }

  /** An event for a trigger (bounded queue; a full one drops, at most once). */
  enqueue(e: Entry, ev: EventInput): void {
    if (e.queue.length >= AGENT_LIMITS.eventQueue) return
    e.queue.push(ev)
    if (!e.running) this.fire(e, { event: e.queue.shift()! as unknown as Json })
  }

  private fire(e: Entry, extra: JsonObject, once = false): void {
    const space = this.account.held(e.spaceId)
    if (!space) return
    e.running = true
    const p = this.runOnce(space, e, extra, once).finally(() => {
      e.running = false
      this.inFlight.delete(p)
      if (!this.stopped && e.queue.length && e.def.enabled) this.fire(e, { event: e.queue.shift()! as unknown as Json })
    })
    this.inFlight.add(p)
  }

  private async runOnce(space: SpaceEngine, e: Entry, extra: JsonObject, once: boolean): Promise<void> {
    const runId = `${e.id}.${this.env.now()}.${[...this.env.randomBytes(4)].map((b) => b.toString(16).padStart(2, '0')).join('')}`
    const ts = this.env.now()
    let res: Awaited<ReturnType<FireRunner>>
    try {
      res = await this.runner(space, e.def, { ...e.def.args, ...extra }, runId)
    } catch (err) {
      res = {
        status: 'failed',
        traceRef: runId,
        durationMs: Math.max(0, this.env.now() - ts),
        fuelUsed: 0,
        value: null,
        error: (err as Error).message,
        memPages: 0,
        costUsd: 0,
        tokens: 0,
        trace: [],
      }
    }
    if (this.stopped) return
    e.window.unshift({ durationMs: res.durationMs, status: res.status })
    e.window.length = Math.min(e.window.length, AGENT_LIMITS.runsKept)
    e.failures = res.status === 'failed' ? e.failures + 1 : 0
    const set: Record<string, Json> = {
      lastRunAt: ts,
      lastDurationMs: res.durationMs,
      lastStatus: res.marker ?? res.status,
      runCount: e.def.runCount + 1,
      lastRunRef: runId,
      lastFuel: res.fuelUsed,
      lastCostUsd: res.costUsd,
      lastMemPages: res.memPages,
      avgDurationMs: Math.round(e.window.reduce((s, r) => s + r.durationMs, 0) / e.window.length),
      failureRate: e.window.filter((r) => r.status === 'failed').length / e.window.length,
    }
    e.def.runCount++
    e.def.lastRunAt = ts
    if (e.failures >= e.def.maxConsecutiveFailures) {
      // The breaker: off until someone enables it again (which resets the count).
      set.enabled = false
      set.lastStatus = 'auto_disabled'
      e.def.enabled = false
      e.nextAt = undefined
    } else if (once) {
      set.enabled = false
      e.def.enabled = false
    }
    e.def.lastStatus = set.lastStatus as string
    try {
      await writeTrigger(space, e.id, set)
      if (e.def.logRuns) {
        const run: RunRecord = {
          triggerId: e.id,
          ts,
          durationMs: res.durationMs,
          status: res.status,
          traceRef: runId,
          fuel: res.fuelUsed,
          costUsd: res.costUsd,
          tokens: res.tokens,
          memPages: res.memPages,
        }
        if (res.error) run.error = res.error
        if (res.trace.length) Object.assign(run, await keepTrace(this.account, space, runId, res.trace))
        const dropped = await appendRun(space, runId, run)
        await dropTraceFiles(this.account, space, dropped)
      }
    } catch (err) {
      // The space closed or refused the write; the next tick reads the record as it is.
      this.account.log.debug("recording an agent's run failed", { spaceId: space.spaceId, triggerId: e.id, err: errField(err) })
    }
  }

  /** Budgets of a definition (for the runner). */
  static budgets(def: TriggerDef) {
    return budgetsOf(def.limits)
  }
}

export { anchorIdOf, TRIGGERS_DS }
