import type { Json, JsonObject } from '../../crdt/ops.ts'
import { AGENT_LIMITS } from './limits.ts'

/** chat.md "Agent trigger record": the dataset, the anchor's runs dataset and the programs registry. */
export const TRIGGERS_DS = 'agent_triggers'
export const RUNS_DS = 'agent_trigger_runs'
export const PROGRAMS_DS = 'agent_programs'

export type TriggerKind = 'cron' | 'event' | 'once'
export const TRIGGER_KINDS: readonly TriggerKind[] = ['cron', 'event', 'once']

/** `lastStatus` values that are health markers rather than a run's outcome (chat.md States). */
export const MARKERS = ['invalid_spec', 'unsupported_source', 'auto_disabled'] as const
export type Marker = (typeof MARKERS)[number]

export interface TriggerLimits {
  fuelPerRun?: number
  timeoutS?: number
  maxCostPerRun?: number
}

/** A trigger record as this device reads it (fields the record lacks take their defaults). */
export interface TriggerDef {
  id: string
  name: string
  kind: string
  spec: Json
  program: string
  /** Hex SHA-256 of the source the trigger runs; set, the program runs only if its source hashes to it. */
  programHash?: string
  args: JsonObject
  owner: string
  enabled: boolean
  logRuns: boolean
  limits: TriggerLimits
  maxConsecutiveFailures: number
  lastRunAt?: number
  lastStatus?: string
  runCount: number
}

/** The rollup fields, written only by the device that runs the trigger. */
export const ROLLUP_FIELDS = [
  'lastRunAt',
  'lastDurationMs',
  'lastStatus',
  'runCount',
  'lastRunRef',
  'lastFuel',
  'lastCostUsd',
  'lastMemPages',
  'avgDurationMs',
  'failureRate',
] as const

/** The fields whose edit rebuilds the trigger and re-arms it forward (chat.md States, "definition edit"). */
export const DEFINITION_FIELDS = ['kind', 'spec', 'program', 'programHash', 'args', 'name', 'limits', 'maxConsecutiveFailures'] as const

/**
 * `lastStatus` of a trigger whose program was not run because nothing vouches for its source:
 * a registry version another account created, not pinned by `programHash`, or a source that
 * does not hash to the pin. A run outcome (the run failed), not an evaluation marker.
 */
export const UNTRUSTED_PROGRAM = 'untrusted_program'

/** The run envelope of chat.md "Agent control API" (`POST /run`). */
export interface RunEnvelope {
  status: 'ok' | 'failed'
  traceRef: string
  durationMs: number
  fuelUsed: number
  value: Json
  error: string | null
}

/** A `trigger_runs` record (chat.md): one per fire when `logRuns`. */
export interface RunRecord {
  triggerId: string
  ts: number
  durationMs: number
  status: 'ok' | 'failed'
  error?: string
  traceRef: string
  /** The trace inline, when it fits AGENT_LIMITS.traceInlineBytes. */
  trace?: string[]
  /** A larger trace: a file attached to the anchor, `svc://f/<spaceId>/<fileId>` (text/plain, lines joined by newlines). */
  traceFile?: string
  /** UTF-8 size of the whole trace, when it is not inline. */
  traceBytes?: number
  /** The program logged past AGENT_LIMITS.traceMaxBytes (or the file could not be stored): the trace kept is cut. */
  traceTruncated?: boolean
  fuel: number
  costUsd: number
  tokens: number
  memPages: number
}

const isObj = (v: unknown): v is JsonObject => typeof v === 'object' && v !== null && !Array.isArray(v)
const num = (v: unknown): number | undefined => (typeof v === 'number' && Number.isFinite(v) ? v : undefined)

/** Epoch ms of an instant as records hold it (`{$date}`, epoch ms or epoch seconds below 1e11). */
export function instantMs(v: unknown): number | undefined {
  if (isObj(v) && typeof v.$date === 'string') {
    const t = Date.parse(v.$date)
    return Number.isFinite(t) ? t : undefined
  }
  return num(v)
}

/** A record's value read leniently: a wrong-typed field takes its default, and kind/spec problems become markers at evaluation. */
export function readTrigger(id: string, v: Json): TriggerDef {
  const r = isObj(v) ? v : {}
  const limits: TriggerLimits = {}
  if (isObj(r.limits)) {
    const l = r.limits
    if (num(l.fuelPerRun) !== undefined) limits.fuelPerRun = l.fuelPerRun as number
    if (num(l.timeoutS) !== undefined) limits.timeoutS = l.timeoutS as number
    if (num(l.maxCostPerRun) !== undefined) limits.maxCostPerRun = l.maxCostPerRun as number
  }
  const mcf = num(r.maxConsecutiveFailures)
  return {
    id,
    name: typeof r.name === 'string' ? r.name : id,
    kind: typeof r.kind === 'string' ? r.kind : '',
    spec: r.spec ?? null,
    program: typeof r.program === 'string' ? r.program : '',
    ...(typeof r.programHash === 'string' ? { programHash: r.programHash.toLowerCase() } : {}),
    args: isObj(r.args) ? r.args : {},
    owner: typeof r.owner === 'string' ? r.owner : '',
    enabled: r.enabled === true,
    logRuns: r.logRuns === true,
    limits,
    maxConsecutiveFailures: mcf !== undefined && mcf >= 1 ? Math.floor(mcf) : AGENT_LIMITS.maxConsecutiveFailures,
    ...(instantMs(r.lastRunAt) !== undefined ? { lastRunAt: instantMs(r.lastRunAt) } : {}),
    ...(typeof r.lastStatus === 'string' ? { lastStatus: r.lastStatus } : {}),
    runCount: num(r.runCount) ?? 0,
  }
}

/** A stable text of the definition fields: a change of it is a definition edit. */
export function definitionKey(v: Json): string {
  const r = isObj(v) ? v : {}
  return JSON.stringify(DEFINITION_FIELDS.map((f) => canonical(r[f])))
}

function canonical(v: Json | undefined): Json {
  if (Array.isArray(v)) return v.map(canonical)
  if (isObj(v))
    return Object.fromEntries(
      Object.keys(v)
        .sort()
        .map((k) => [k, canonical(v[k])]),
    )
  return v === undefined ? null : v
}

/** The run budgets of a trigger, clamped to the module's bounds. */
export function budgetsOf(limits: TriggerLimits): { fuel: number; timeoutMs: number; maxCostUsd: number | undefined } {
  const fuel = Math.min(Math.max(1, Math.floor(limits.fuelPerRun ?? AGENT_LIMITS.fuelPerRun)), AGENT_LIMITS.fuelPerRunMax)
  const timeoutS = Math.min(Math.max(0.001, limits.timeoutS ?? AGENT_LIMITS.timeoutS), AGENT_LIMITS.timeoutSMax)
  return { fuel, timeoutMs: Math.round(timeoutS * 1000), maxCostUsd: limits.maxCostPerRun }
}
