import { SvcError } from '../../sync/core/errors.ts'
import type { Env } from '../../sync/core/env.ts'
import type { Json, JsonObject } from '../../sync/crdt/ops.ts'
import { AGENT_LIMITS } from '../../sync/modules/agents/limits.ts'
import { parseProgram } from '../../sync/modules/agents/program-ref.ts'
import { budgetsOf, type TriggerDef, type TriggerLimits } from '../../sync/modules/agents/record.ts'
import { programSource } from '../../sync/modules/agents/store.ts'
import type { AccountEngine } from '../../sync/space/account-engine.ts'
import type { SpaceEngine } from '../../sync/space/space-engine.ts'
import { BUILTIN_PROGRAMS } from './builtins.ts'
import { capabilities, type CapabilityContext, type Spend } from './capabilities.ts'
import { chatWatch } from './chat-watch.ts'
import type { EventInput } from './events.ts'
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
}

/** The source of a program spec: shipped (`agent:`), or the space's registry version; undefined when absent. */
export async function resolveProgram(space: SpaceEngine | undefined, spec: string): Promise<string | undefined> {
  const ref = parseProgram(spec)
  if (!ref || ref.scope === 'internal') return undefined
  if (ref.scope === 'agent') return BUILTIN_PROGRAMS[ref.id]
  return space ? programSource(space, ref.id) : undefined
}

/**
 * Runs programs: `internal:chat-watch` natively, everything else in the sandbox with the
 * capability API bound to the given space. One function for the scheduler's fires and the
 * control API's `POST /run`.
 */
export class ProgramRunner {
  constructor(private readonly deps: RunnerDeps) {}

  /** A trigger's fire (the scheduler's FireRunner). */
  readonly fire: FireRunner = async (space, def, args, runId) => this.run({ space, program: def.program, args, limits: def.limits, runId })

  async run(req: { space?: SpaceEngine; program?: string; source?: string; args: JsonObject; limits?: TriggerLimits; runId: string }): Promise<RunOutcome> {
    const { env } = this.deps
    const started = env.now()
    const budgets = budgetsOf(req.limits ?? {})
    const spend: Spend = { costUsd: 0, tokens: 0, calls: 0 }
    const failed = (error: string): RunOutcome => ({ status: 'failed', traceRef: req.runId, durationMs: Math.max(0, env.now() - started), fuelUsed: 0, value: null, error, memPages: 0, costUsd: spend.costUsd, tokens: spend.tokens, trace: [] })
    if (req.source !== undefined && req.source.length > AGENT_LIMITS.sourceBytes) throw new SvcError('request.invalid_field', `source is at most ${AGENT_LIMITS.sourceBytes} characters`, { field: 'source' })
    const ref = req.program !== undefined ? parseProgram(req.program) : undefined
    if (req.program !== undefined && !ref) return failed(`program ${req.program} is not <name>@v<N>, agent:<name>@v<N> or internal:chat-watch`)
    const ctx: CapabilityContext | undefined = req.space ? { account: this.deps.account, space: req.space, model: this.deps.model, maxCostUsd: budgets.maxCostUsd, spend } : undefined
    if (ref?.scope === 'internal' && req.source === undefined) {
      const event = req.args.event as unknown as EventInput | undefined
      if (!ctx || !event || typeof event.messageId !== 'string') return failed('internal:chat-watch runs on a chat event')
      try {
        const value = await chatWatch(ctx, event)
        return { status: 'ok', traceRef: req.runId, durationMs: Math.max(0, env.now() - started), fuelUsed: 0, value, error: null, memPages: 0, costUsd: spend.costUsd, tokens: spend.tokens, trace: [] }
      } catch (err) {
        return failed((err as Error).message)
      }
    }
    const source = req.source ?? (req.program !== undefined ? await resolveProgram(req.space, req.program) : undefined)
    if (source === undefined) return failed(`program ${req.program ?? ''} not found`)
    const res = await runSandboxed({
      source, args: req.args as Json, capabilities: ctx ? capabilities(ctx) : {}, env, runId: req.runId,
      budgets: { fuel: budgets.fuel, timeoutMs: budgets.timeoutMs, memoryBytes: this.deps.memoryBytes ?? AGENT_LIMITS.memoryBytes },
    })
    return { ...res, costUsd: spend.costUsd, tokens: spend.tokens }
  }
}
