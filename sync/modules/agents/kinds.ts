import { Cron } from 'croner'
import type { Json, JsonObject } from '../../crdt/ops.ts'
import type { Marker, TriggerDef } from './record.ts'
import { CHAT_SOURCE } from './program-ref.ts'

/**
 * What fires a trigger, by kind (chat.md "Spec by kind"). `arm` gives a schedule's next fire
 * time strictly after a moment: a missed occurrence does not exist, so a daemon that was down
 * or a definition edit never fires the occurrences in between.
 */
export type Armed =
  | { kind: 'cron'; next: (afterMs: number) => number | undefined }
  | { kind: 'once'; atMs: number }
  | { kind: 'event'; objectId: string }
  | { kind: 'marker'; marker: Marker; reason: string }

const isObj = (v: unknown): v is JsonObject => typeof v === 'object' && v !== null && !Array.isArray(v)

export function armTrigger(def: TriggerDef): Armed {
  switch (def.kind) {
    case 'cron':
      return armCron(def.spec)
    case 'once': {
      const at = isObj(def.spec) ? def.spec.at : undefined
      if (typeof at !== 'number' || !Number.isFinite(at)) return { kind: 'marker', marker: 'invalid_spec', reason: 'a once trigger needs {at: <epoch seconds>}' }
      return { kind: 'once', atMs: at * 1000 }
    }
    case 'event': {
      if (!isObj(def.spec)) return { kind: 'marker', marker: 'invalid_spec', reason: 'an event trigger needs {dataset, objectId}' }
      if (def.spec.dataset !== CHAT_SOURCE) return { kind: 'marker', marker: 'unsupported_source', reason: `only ${CHAT_SOURCE} fires event triggers` }
      if (typeof def.spec.objectId !== 'string' || def.spec.objectId === '') return { kind: 'marker', marker: 'invalid_spec', reason: 'an event trigger needs the chat objectId' }
      return { kind: 'event', objectId: def.spec.objectId }
    }
    default:
      return { kind: 'marker', marker: 'invalid_spec', reason: 'kind is cron, event or once' }
  }
}

/** A cron expression, `{cron}` or `{every_s}`; an expression without a next occurrence is invalid. */
function armCron(spec: Json): Armed {
  const invalid = (reason: string): Armed => ({ kind: 'marker', marker: 'invalid_spec', reason })
  if (isObj(spec) && spec.every_s !== undefined) {
    const s = spec.every_s
    if (typeof s !== 'number' || !Number.isFinite(s) || s < 1) return invalid('every_s is a number of seconds, at least 1')
    // Anchored at the epoch, so every device and every restart agree on the grid.
    const period = Math.round(s * 1000)
    return { kind: 'cron', next: (after) => (Math.floor(after / period) + 1) * period }
  }
  const expr = typeof spec === 'string' ? spec : isObj(spec) && typeof spec.cron === 'string' ? spec.cron : undefined
  if (expr === undefined) return invalid('a cron trigger needs an expression, {cron} or {every_s}')
  let cron: Cron
  try {
    cron = new Cron(expr, { timezone: 'UTC', paused: true })
  } catch (err) {
    return invalid(`cron expression: ${(err as Error).message}`)
  }
  const next = (after: number) => cron.nextRun(new Date(after))?.getTime()
  return { kind: 'cron', next }
}

/** `invalid_spec` also covers a cron that parses but never occurs again (evaluated now). */
export function evaluate(def: TriggerDef, nowMs: number): Armed {
  const armed = armTrigger(def)
  if (armed.kind === 'cron' && armed.next(nowMs) === undefined) return { kind: 'marker', marker: 'invalid_spec', reason: 'the cron expression has no next occurrence' }
  return armed
}
