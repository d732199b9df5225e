import { SvcError } from '../../sync/core/errors.ts'
import type { Env } from '../../sync/core/env.ts'
import type { Json, JsonObject } from '../../sync/crdt/ops.ts'
import { isFullMember } from '../../sync/replica/full-membership.ts'
import { Election, type ElectionView } from '../../sync/modules/agents/election.ts'
import { AGENT_LIMITS } from '../../sync/modules/agents/limits.ts'
import { CHAT_SOURCE, CHAT_WATCH_ID, CHAT_WATCH_PROGRAM, requireProgram } from '../../sync/modules/agents/program-ref.ts'
import { readTrigger as readDef } from '../../sync/modules/agents/record.ts'
import { createTrigger, ensureAnchor, generalChatIdOf, readTrigger, readTriggers, runsOf, writeTrigger } from '../../sync/modules/agents/store.ts'
import type { AccountEngine } from '../../sync/space/account-engine.ts'
import type { SpaceEngine } from '../../sync/space/space-engine.ts'
import { unansweredBacklog } from './chat-watch.ts'
import { errField, silentLogger, type Logger } from '../../sync/core/log.ts'
import { SerialQueue } from '../../sync/core/serial-queue.ts'
import type { ModelConfig } from './model-client.ts'
import { ProgramRunner, resolveProgram, type RunOutcome } from './runner.ts'
import { Scheduler, type Entry } from './scheduler.ts'

export interface AgentsOptions {
  model?: ModelConfig
  /** Off: this device never claims the election (it still runs triggers pinned to it). */
  election?: boolean
  /** Timers off: tests drive `tick()` themselves. */
  timers?: boolean
  /**
   * Peer ids of this account's devices connected to this one now (the same account proved on
   * the link): their claims count as live. Without it (no P2P) only this device's own claim does.
   */
  liveDevices?: () => ReadonlySet<string>
  memoryBytes?: number
  /** Where the agents component logs (the daemon passes its service's scoped logger; default: nowhere). */
  log?: Logger
}

/** Why chat-watch is off when no model is configured (its `lastStatus`). */
export const NO_MODEL_STATUS = 'model_not_configured'

/**
 * One device's agents: the election claim, the trigger scheduler, the program runner and the
 * reserved chat-watch record, for one booted account. The control API (server/modules/agents.ts)
 * calls the methods below; every mutation writes the record, and the registry follows on the
 * next tick.
 */
export class AgentsHost {
  readonly election: Election
  readonly scheduler: Scheduler
  readonly runner: ProgramRunner
  private stopTimers: Array<() => void> = []
  private wasActive = false

  private readonly log: Logger

  constructor(
    readonly account: AccountEngine,
    readonly env: Env,
    readonly peerId: string,
    private readonly opts: AgentsOptions = {},
  ) {
    this.log = opts.log ?? silentLogger
    this.election = new Election(
      account.accountData,
      env,
      peerId,
      async () => new Set((await account.devices.docs()).filter((d) => d.pruned).map((d) => d.id)),
      opts.election !== false,
      opts.liveDevices,
    )
    this.runner = new ProgramRunner({ account, env, model: opts.model, memoryBytes: opts.memoryBytes, log: opts.log })
    this.scheduler = new Scheduler(account, env, peerId, () => this.election.view(), this.runner.fire, {
      beforeTick: (space, view) => this.keepChatWatch(space, view),
      onAdopt: (space, e) => this.onAdopt(space, e),
    })
  }

  async start(): Promise<void> {
    await this.election.claim()
    if (this.opts.timers === false) return
    const loop = (ms: number, fn: () => Promise<void>) => {
      let cancel: () => void = () => undefined
      const again = () => {
        cancel = this.env.setTimer(
          ms,
          () =>
            void fn()
              .catch((err: unknown) => this.log.warn('a periodic agents pass failed', { err: errField(err) }))
              .finally(again),
        )
      }
      again()
      this.stopTimers.push(() => cancel())
    }
    loop(AGENT_LIMITS.tickMs, () => this.tick())
    await this.tick()
  }

  async stop(): Promise<void> {
    for (const s of this.stopTimers) s()
    this.stopTimers = []
    this.scheduler.stop()
    await this.election.withdraw().catch((err: unknown) => this.log.debug('withdrawing from the agents election on stop failed', { err: errField(err) }))
  }

  private readonly ticks = new SerialQueue()

  /** One tick at a time: the timer's and the control API's would otherwise adopt a record twice. */
  tick(): Promise<void> {
    // The caller of this tick gets its failure; the next tick runs whatever it was.
    return this.ticks.run(() => this.scheduler.tick())
  }

  /** The reserved record: the active device writes it into each space with a general chat it may write. */
  private async keepChatWatch(space: SpaceEngine, view: ElectionView): Promise<void> {
    if (!view.active) return
    const chatId = generalChatIdOf(space.spaceId)
    if (!space.objectDoc(chatId) || !isFullMember(space.replica, this.account.accountId)) return
    const cur = await readTrigger(space, CHAT_WATCH_ID)
    if (cur.deleted) return
    const configured = this.opts.model !== undefined
    if (!cur.value) {
      await ensureAnchor(space)
      await createTrigger(space, CHAT_WATCH_ID, {
        name: 'chat watch',
        kind: 'event',
        spec: { dataset: CHAT_SOURCE, objectId: chatId },
        program: CHAT_WATCH_PROGRAM,
        args: {},
        owner: '',
        enabled: configured,
        logRuns: true,
        limits: {},
        maxConsecutiveFailures: AGENT_LIMITS.maxConsecutiveFailures,
        ...(configured ? {} : { lastStatus: NO_MODEL_STATUS }),
      })
    } else if (configured && cur.value.enabled === false && cur.value.lastStatus === NO_MODEL_STATUS) {
      // Off only because no model was configured then: a configured device turns it on.
      await writeTrigger(space, CHAT_WATCH_ID, { enabled: true }, ['lastStatus'])
    } else if (!configured && cur.value.enabled === true) {
      await writeTrigger(space, CHAT_WATCH_ID, { enabled: false, lastStatus: NO_MODEL_STATUS })
    }
  }

  /** A takeover of chat-watch (this device stood by behind another live winner, not a lone start) answers the chat's unanswered backlog. */
  private async onAdopt(space: SpaceEngine, e: Entry): Promise<void> {
    if (e.def.program !== CHAT_WATCH_PROGRAM || e.armed.kind !== 'event' || !e.def.enabled) return
    if (!(await this.election.isTakeover())) return
    for (const ev of await unansweredBacklog(space, e.armed.objectId)) this.scheduler.enqueue(e, ev)
  }

  // ------------------------------------------------------------------ control API

  async electionView(): Promise<ElectionView> {
    return this.election.view()
  }

  /** Every registry entry: definition, owner, enabled, rollup and resource stats. */
  async triggers(): Promise<JsonObject[]> {
    const out: JsonObject[] = []
    for (const e of this.scheduler.registry.values()) {
      const space = this.account.held(e.spaceId)
      const cur = space ? await readTrigger(space, e.id) : undefined
      out.push(this.describe(e.spaceId, e.id, cur?.value ?? {}, e))
    }
    return out
  }

  private describe(spaceId: string, id: string, value: JsonObject, e?: Entry): JsonObject {
    return {
      ...value,
      id,
      spaceId,
      registered: e !== undefined,
      ...(e ? { stats: { nextAt: e.nextAt ?? null, running: e.running, queued: e.queue.length, consecutiveFailures: e.failures, armedAt: e.armedAt } } : {}),
    }
  }

  /** A trigger by id in the registry or any held space; `spaceId` picks one when the id is in several. */
  async find(id: string, spaceId?: string): Promise<{ space: SpaceEngine; value: JsonObject }> {
    const found: Array<{ space: SpaceEngine; value: JsonObject }> = []
    for (const space of this.account.openSpaces()) {
      if (space === this.account.tech || (spaceId !== undefined && space.spaceId !== spaceId)) continue
      const cur = await readTrigger(space, id)
      if (cur.value) found.push({ space, value: cur.value })
    }
    if (found.length === 0) throw new SvcError('agents.trigger_not_found', 'no trigger with this id in a held space', { id })
    if (found.length > 1) {
      const inRegistry = found.filter((f) => this.scheduler.registry.has(`${f.space.spaceId}/${id}`))
      if (inRegistry.length === 1) return inRegistry[0]
      throw new SvcError('request.invalid_field', 'this trigger id exists in several spaces: name one with ?spaceId=', {
        field: 'spaceId',
        spaceIds: found.map((f) => f.space.spaceId),
      })
    }
    return found[0]
  }

  async trigger(id: string, spaceId?: string): Promise<JsonObject> {
    const { space, value } = await this.find(id, spaceId)
    return this.describe(space.spaceId, id, value, this.scheduler.registry.get(`${space.spaceId}/${id}`))
  }

  async runs(id: string, spaceId?: string): Promise<JsonObject[]> {
    const { space } = await this.find(id, spaceId)
    return (await runsOf(space, id, AGENT_LIMITS.runsListed)) as unknown as JsonObject[]
  }

  /** PATCH: a new spec re-arms forward (the next tick sees the definition edit). */
  async patch(id: string, body: { spec?: Json; enabled?: boolean }, spaceId?: string): Promise<JsonObject> {
    const { space, value } = await this.find(id, spaceId)
    const set: Record<string, Json> = {}
    if (body.spec !== undefined) set.spec = body.spec
    const unset: string[] = []
    if (body.enabled !== undefined) {
      set.enabled = body.enabled
      if (body.enabled && value.enabled !== true && value.lastStatus === 'auto_disabled') unset.push('lastStatus')
    }
    if (Object.keys(set).length) await writeTrigger(space, id, set, unset)
    await this.tick()
    return this.trigger(id, space.spaceId)
  }

  async enable(id: string, spaceId?: string): Promise<JsonObject> {
    const { space } = await this.find(id, spaceId)
    return this.patch(id, { enabled: true }, space.spaceId)
  }

  async disable(id: string, spaceId?: string): Promise<JsonObject> {
    const { space } = await this.find(id, spaceId)
    return this.patch(id, { enabled: false }, space.spaceId)
  }

  /**
   * POST /run: a program by spec or caller-supplied source; capabilities bound to `spaceId` when
   * given. A registry version another account created runs only when `programHash` pins its source.
   */
  async run(body: { program?: string; programHash?: string; source?: string; args?: JsonObject; spaceId?: string }): Promise<RunOutcome> {
    // The control API has no route preHandler: a space closed under the memory budget opens here.
    if (body.spaceId !== undefined) await this.account.opened(body.spaceId)
    const space = body.spaceId !== undefined ? this.account.space(body.spaceId) : undefined
    const runId = `run.${this.env.now()}.${[...this.env.randomBytes(4)].map((b) => b.toString(16).padStart(2, '0')).join('')}`
    if (body.program === undefined && body.source === undefined) throw new SvcError('request.missing_field', 'program or source is required', { field: 'program' })
    if (body.source === undefined && body.program !== undefined) {
      const ref = requireProgram(body.program)
      if (ref.scope !== 'internal' && (await resolveProgram(space, body.program, { account: this.account.accountId })) === undefined) {
        throw new SvcError(
          'agents.program_not_found',
          ref.scope === 'registry' && !space ? "a registry program needs spaceId (its registry is the space's)" : 'no such program version',
          { program: body.program },
        )
      }
    }
    return this.runner.run({ space, program: body.program, programHash: body.programHash?.toLowerCase(), source: body.source, args: body.args ?? {}, runId })
  }

  /** The records of one space as this device reads them (tests, CLI). */
  async records(space: SpaceEngine) {
    return (await readTriggers(space)).live.map(({ id, value }) => readDef(id, value))
  }
}
