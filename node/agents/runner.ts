import { createHash } from 'node:crypto'
import { SvcError } from '../../sync/core/errors.ts'
import type { Env } from '../../sync/core/env.ts'
import type { JsonObject } from '../../sync/crdt/ops.ts'
import { AGENT_LIMITS } from '../../sync/modules/agents/limits.ts'
import { parseProgram } from '../../sync/modules/agents/program-ref.ts'
import { budgetsOf, UNTRUSTED_PROGRAM, type TriggerLimits } from '../../sync/modules/agents/record.ts'
import { programRecord } from '../../sync/modules/agents/store.ts'
import type { AccountEngine } from '../../sync/space/account-engine.ts'
import type { SpaceEngine } from '../../sync/space/space-engine.ts'
import { BUILTIN_PROGRAMS } from './builtins.ts'
import { capabilities, type CapabilityContext, type Spend } from './capabilities.ts'
import { chatWatch } from './chat-watch.ts'
import type { EventInput } from './events.ts'
import { silentLogger, type Logger } from '../../sync/core/log.ts'
import type { ModelConfig } from './model-client.ts'
import { runSandboxed } from './sandbox.ts'
import type { FireRunner } from './scheduler.ts'

export type RunOutcome = Awaited<ReturnType<FireRunner>>

export interface RunnerDeps {
  account: AccountEngine
  env: Env
  model?: ModelConfig
  /** The sandbox's heap per run (default AGENT_LIMITS.memoryBytes). */
  memoryBytes?: number
  log?: Logger
}

export const sourceHash = (source: string): string => createHash('sha256').update(source, 'utf8').digest('hex')

/** What vouches for the code a run may execute: the account it runs as, and a content pin. */
export interface ProgramTrust {
  /** The account whose keys the run uses (the trigger's creator: the scheduler adopts only its own account's records). */
  account: string
  /** Hex SHA-256 the source must hash to (the trigger's `programHash`). */
  programHash?: string
}

export type Resolved = { source: string } | { untrusted: string } | undefined

/**
 * The source of a program spec: shipped (`agent:`), or the space's registry version; undefined
 * when absent. A registry version is a name any writer of the space can claim first (merge pins
 * keep the first write), so it runs only if the trusted account created it, or if the trigger
 * pins its content (`programHash`); otherwise the answer says why it is untrusted. A pin holds
 * for shipped programs too.
 */
export async function resolveProgram(space: SpaceEngine | undefined, spec: string, trust: ProgramTrust): Promise<Resolved> {
  const ref = parseProgram(spec)
  if (!ref || ref.scope === 'internal') return undefined
  let source: string | undefined
  let creator: string | undefined
  if (ref.scope === 'agent') source = BUILTIN_PROGRAMS[ref.id]
  else if (space) ({ source, creator } = (await programRecord(space, ref.id)) ?? {})
  if (source === undefined) return undefined
  if (trust.programHash !== undefined) {
    const got = sourceHash(source)
    return got === trust.programHash.toLowerCase()
      ? { source }
      : { untrusted: `${UNTRUSTED_PROGRAM}: program ${spec} hashes to ${got}, not to the trigger's programHash ${trust.programHash}` }
  }
  if (creator !== undefined && creator !== trust.account) {
    return { untrusted: `${UNTRUSTED_PROGRAM}: program ${spec} was created by another account (${creator}); pin its source with programHash to run it` }
  }
  return { source }
}

/**
 * Runs programs: `internal:chat-watch` natively, everything else in the sandbox with the
 * capability API bound to the given space. One function for the scheduler's fires and the
 * control API's `POST /run`.
 */
export class ProgramRunner {
  private readonly log: Logger

  constructor(private readonly deps: RunnerDeps) {
    this.log = deps.log ?? silentLogger
  }

  /** A trigger's fire (the scheduler's FireRunner). */
  readonly fire: FireRunner = async (space, def, args, runId) =>
    this.run({ space, program: def.program, programHash: def.programHash, args, limits: def.limits, runId, triggerId: def.id })

  async run(req: {
    space?: SpaceEngine
    program?: string
    programHash?: string
    source?: string
    args: JsonObject
    limits?: TriggerLimits
    runId: string
    triggerId?: string
  }): Promise<RunOutcome> {
    const { env } = this.deps
    const started = env.now()
    const budgets = budgetsOf(req.limits ?? {})
    const spend: Spend = { costUsd: 0, tokens: 0, calls: 0 }
    const failed = (error: string): RunOutcome => ({
      status: 'failed',
      traceRef: req.runId,
      durationMs: Math.max(0, env.now() - started),
      fuelUsed: 0,
      value: null,
      error,
      memPages: 0,
      costUsd: spend.costUsd,
      tokens: spend.tokens,
      trace: [],
    })
    if (req.source !== undefined && req.source.length > AGENT_LIMITS.sourceBytes)
      throw new SvcError('request.invalid_field', `source is at most ${AGENT_LIMITS.sourceBytes} characters`, { field: 'source' })
    const ref = req.program !== undefined ? parseProgram(req.program) : undefined
    if (req.program !== undefined && !ref) return failed(`program ${req.program} is not <name>@v<N>, agent:<name>@v<N> or internal:chat-watch`)
    const ctx: CapabilityContext | undefined = req.space
      ? { account: this.deps.account, space: req.space, model: this.deps.model, maxCostUsd: budgets.maxCostUsd, spend, triggerId: req.triggerId }
      : undefined
    if (ref?.scope === 'internal' && req.source === undefined) {
      const event = req.args.event as unknown as EventInput | undefined
      if (!ctx || !event || typeof event.messageId !== 'string') return failed('internal:chat-watch runs on a chat event')
      try {
        const value = await chatWatch(ctx, event)
        return {
          status: 'ok',
          traceRef: req.runId,
          durationMs: Math.max(0, env.now() - started),
          fuelUsed: 0,
          value,
          error: null,
          memPages: 0,
          costUsd: spend.costUsd,
          tokens: spend.tokens,
          trace: [],
        }
      } catch (err) {
        return failed((err as Error).message)
      }
    }
    let source = req.source
    if (source === undefined && req.program !== undefined) {
      const resolved = await resolveProgram(req.space, req.program, { account: this.deps.account.accountId, programHash: req.programHash })
      if (resolved && 'untrusted' in resolved) {
        this.log.warn('a program was not run: nothing vouches for its source', { runId: req.runId, program: req.program, spaceId: req.space?.spaceId, why: resolved.untrusted })
        return { ...failed(resolved.untrusted), marker: UNTRUSTED_PROGRAM }
      }
      source = resolved?.source
    }
    if (source === undefined) return failed(`program ${req.program ?? ''} not found`)
    const res = await runSandboxed(
      {
        source,
        args: req.args,
        capabilities: ctx ? capabilities(ctx) : {},
        env,
        runId: req.runId,
        budgets: { fuel: budgets.fuel, timeoutMs: budgets.timeoutMs, memoryBytes: this.deps.memoryBytes ?? AGENT_LIMITS.memoryBytes },
      },
      this.log.child('sandbox'),
    )
    return { ...res, costUsd: spend.costUsd, tokens: spend.tokens }
  }
}
