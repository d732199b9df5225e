import type { Json, JsonObject } from '../../crdt/ops.ts'
import type { UserOp } from '../../crdt/resolve.ts'
import type { WriteResult } from '../../replica/types.ts'
import { bundleChildId, bundleRootId } from '../../space/bundles/index.ts'
import type { SpaceEngine } from '../../space/space-engine.ts'
import { AGENT_LIMITS } from './limits.ts'
import { PROGRAMS_DS, RUNS_DS, TRIGGERS_DS, type RunRecord } from './record.ts'

/**
 * Where a space's agent data lives (chat.md "Agent trigger record"): the anchor is the child
 * with the fixed seed `triggers` of the derived bundle `system:agents/v1`, so its id is a pure
 * function of the space (`POST {S}/bundles/system:agents%2Fv1/children {seed: "triggers"}`
 * gives it to a client). It holds `agent_triggers`, `agent_trigger_runs` and `agent_programs`.
 */
export const AGENTS_BUNDLE = 'system:agents/v1'
export const ANCHOR_SEED = 'triggers'
/** The general chat's bundle (sync/space/catalog/usecases.ts): its root holds the chat. */
export const GENERAL_CHAT_BUNDLE = 'system:general-chat/v1'

export const anchorIdOf = (spaceId: string) => bundleChildId(spaceId, AGENTS_BUNDLE, ANCHOR_SEED)
export const generalChatIdOf = (spaceId: string) => bundleRootId(spaceId, GENERAL_CHAT_BUNDLE)

/** The anchor, installing the bundle and its child when this replica lacks them. */
export async function ensureAnchor(space: SpaceEngine): Promise<string> {
  const id = anchorIdOf(space.spaceId)
  if (space.objectDoc(id)) return id
  const bundles = space.services.bundles
  await bundles.install({ id: AGENTS_BUNDLE, name: 'Agents', derived: true }, { system: true })
  const child = await bundles.child(AGENTS_BUNDLE, { seed: ANCHOR_SEED, name: 'Agent triggers' })
  return child.objectId
}

export interface TriggerRows {
  /** `creator`: the account whose change created the record. */
  live: Array<{ id: string; value: JsonObject; creator: string }>
  /** Deleted ids stay tombstoned: a record under one never becomes a trigger again. */
  deleted: Set<string>
}

const isObj = (v: unknown): v is JsonObject => typeof v === 'object' && v !== null && !Array.isArray(v)

export async function readTriggers(space: SpaceEngine): Promise<TriggerRows> {
  const anchor = anchorIdOf(space.spaceId)
  const out: TriggerRows = { live: [], deleted: new Set() }
  if (!space.objectDoc(anchor)) return out
  for (const r of await space.replica.listRecords(anchor, TRIGGERS_DS)) {
    if (r.deleted) out.deleted.add(r.id)
    else if (isObj(r.value)) out.live.push({ id: r.id, value: r.value, creator: r.created.a })
  }
  return out
}

export async function readTrigger(space: SpaceEngine, id: string): Promise<{ value?: JsonObject; deleted: boolean }> {
  const anchor = anchorIdOf(space.spaceId)
  if (!space.objectDoc(anchor)) return { deleted: false }
  const r = await space.replica.getRecord(anchor, TRIGGERS_DS, id)
  if (!r) return { deleted: false }
  return r.deleted ? { deleted: true } : { value: isObj(r.value) ? r.value : {}, deleted: false }
}

/** Field writes on one trigger record in one change (the dataset is the source of truth). */
export function writeTrigger(space: SpaceEngine, id: string, set: Record<string, Json>, unset: readonly string[] = []): Promise<WriteResult> {
  const ops: UserOp[] = [...Object.entries(set).map(([path, value]): UserOp => ({ type: '$set', path, value })), ...unset.map((path): UserOp => ({ type: '$unset', path }))]
  return space.modify({ objectId: anchorIdOf(space.spaceId), dataset: TRIGGERS_DS, records: [{ id, ops }] })
}

/** A new trigger record (an upsert with a `$set` at the empty path, as clients write it). */
export function createTrigger(space: SpaceEngine, id: string, value: JsonObject): Promise<WriteResult> {
  return space.modify({ objectId: anchorIdOf(space.spaceId), dataset: TRIGGERS_DS, records: [{ id, upsert: true, ops: [{ type: '$set', path: '', value }] }] })
}

/** Retained runs of one trigger, newest first. */
export async function runsOf(space: SpaceEngine, triggerId: string, limit: number = AGENT_LIMITS.runsKept): Promise<Array<RunRecord & { id: string }>> {
  const anchor = anchorIdOf(space.spaceId)
  if (!space.objectDoc(anchor)) return []
  const out: Array<RunRecord & { id: string }> = []
  for (const r of await space.replica.listRecords(anchor, RUNS_DS)) {
    if (r.deleted || !isObj(r.value) || r.value.triggerId !== triggerId) continue
    out.push({ ...(r.value as unknown as RunRecord), id: r.id })
  }
  out.sort((a, b) => b.ts - a.ts || (a.id < b.id ? 1 : -1))
  return out.slice(0, limit)
}

/**
 * Writes a run record and tombstones the trigger's runs past the newest `keep` (keep-last-N);
 * returns the runs it tombstoned (their trace files are the caller's to delete).
 */
export async function appendRun(space: SpaceEngine, runId: string, run: RunRecord, keep: number = AGENT_LIMITS.runsKept): Promise<Array<RunRecord & { id: string }>> {
  const anchor = anchorIdOf(space.spaceId)
  await space.modify({ objectId: anchor, dataset: RUNS_DS, records: [{ id: runId, upsert: true, ops: [{ type: '$set', path: '', value: run }] }] })
  const runs = await runsOf(space, run.triggerId, Number.MAX_SAFE_INTEGER)
  const old = runs.slice(keep)
  if (old.length) await space.deleteRecords({ objectId: anchor, dataset: RUNS_DS, recordIds: old.map((r) => r.id) })
  return old
}

/**
 * A registry program version: its source and `creator`, the account whose change created the
 * record (the dataset's write rule keeps every later op to that account, so the creator is
 * who wrote the source). Undefined when absent.
 */
export async function programRecord(space: SpaceEngine, id: string): Promise<{ source: string; creator: string } | undefined> {
  const anchor = anchorIdOf(space.spaceId)
  if (!space.objectDoc(anchor)) return undefined
  const r = await space.replica.getRecord(anchor, PROGRAMS_DS, id)
  return r && !r.deleted && isObj(r.value) && typeof r.value.source === 'string' ? { source: r.value.source, creator: r.created.a } : undefined
}

/** A registry program version's source, or undefined (whoever wrote it: see programRecord). */
export async function programSource(space: SpaceEngine, id: string): Promise<string | undefined> {
  return (await programRecord(space, id))?.source
}
