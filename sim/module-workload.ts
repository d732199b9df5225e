import { CHANGE_DERIVED_ID, type Json, type Op } from '../sync/crdt/ops.ts'
import { PROGRAMS_DS, RUNS_DS, TRIGGERS_DS } from '../sync/modules/agents/record.ts'
import { CHAT_MESSAGES } from '../sync/modules/chat/messages.ts'
import { DEFAULT_MODULES } from '../sync/modules/index.ts'
import type { SpaceReplica } from '../sync/replica/space-replica.ts'
import { ModuleSet } from '../sync/space/module.ts'
import { spacePolicy } from '../sync/space/schema.ts'
import { instant } from '../sync/space/rows.ts'
import type { Prng } from './prng.ts'

/**
 * Concurrent writers on the datasets whose merge has a rule (the `module` kind of workload.ts):
 * creator-only agent records, chat's author-only messages and signer-only reaction leaves, and
 * the pinned (first-write-wins) fields of registry programs. Every account writes the same few
 * record ids, so creates race, a loser keeps editing what it believes is its record, and
 * members forge edits and reactions of others' messages. The runner's digest checks then prove
 * that every peer picks the same creator and drops the same ops, whatever the arrival order
 * (sync/crdt/ruled-record.ts); the sim's peers merge under the release's module policy so that
 * these rules are the daemon's own.
 */
export const SIM_POLICY = new ModuleSet(DEFAULT_MODULES).policy(spacePolicy)

const AGENT_DATASETS = [TRIGGERS_DS, RUNS_DS, PROGRAMS_DS]
const RULED_ID: Record<string, string> = { [TRIGGERS_DS]: 'weekly', [RUNS_DS]: 'weekly', [PROGRAMS_DS]: 'report@v1' }
const EMOJI = ['👍', '🎉']

/** `objects`: the live trees; every writer picks the same one (the lowest id), so that creates collide. */
export async function moduleWrite(rep: SpaceReplica, objects: readonly string[], r: Prng): Promise<{ label: string; changeId: string; tree: string }> {
  const obj = [...objects].sort()[0]
  if (r.chance(0.45)) return { ...(await chatWrite(rep, obj, r)), tree: obj }
  const ds = r.pick(AGENT_DATASETS)
  const id = RULED_ID[ds]
  const source = `export default () => ${JSON.stringify(rep.me.slice(0, 6) + r.int(100))}`
  let ops: Op[]
  switch (r.int(5)) {
    case 0:
    case 1:
      // A whole-record create (or overwrite): what the control API writes for a new program or trigger.
      ops = [
        {
          op: 'set',
          ds,
          id,
          path: '',
          value: ds === PROGRAMS_DS ? { name: 'report', version: 1, source } : { id, enabled: r.chance(0.7), program: 'report@v1', by: rep.me.slice(0, 6) },
        },
      ]
      break
    case 2:
      // A field edit: on a program, a pinned field (dropped once set); elsewhere an ordinary one.
      ops = [{ op: 'set', ds, id, path: ds === PROGRAMS_DS ? 'source' : 'lastStatus', value: ds === PROGRAMS_DS ? source : r.pick(['ok', 'failed']) }]
      break
    case 3:
      ops = [{ op: 'unset', ds, id, path: 'enabled' }]
      break
    default:
      ops = [{ op: 'delete', ds, id }]
  }
  const res = await rep.write(obj, ops)
  return { label: `module ${ds} ${res.changeId}`, changeId: res.changeId, tree: obj }
}

/** Messages are created under their change's id; the contested writes are edits, deletes and reactions of existing ones. */
async function chatWrite(rep: SpaceReplica, obj: string, r: Prng): Promise<{ label: string; changeId: string }> {
  const live = (await rep.listRecords(obj, CHAT_MESSAGES)).filter((m) => !m.deleted && m.value !== undefined)
  const existing = live.map((m) => m.id)
  const authors = live.map((m) => String((m.value as { creator?: unknown }).creator))
  let ops: Op[]
  if (existing.length === 0 || r.chance(0.25)) {
    ops = [{ op: 'set', ds: CHAT_MESSAGES, id: CHANGE_DERIVED_ID, path: '', value: { creator: rep.me, createdAt: instant(1), modifiedAt: instant(1), text: `m${r.int(100)}` } }]
  } else {
    const id = r.pick(existing)
    // Half of the reactions go into someone else's leaf: a forgery every peer must drop alike.
    const leaf = r.chance(0.5) ? rep.me : r.pick(authors)
    switch (r.int(4)) {
      case 0:
        ops = [{ op: 'set', ds: CHAT_MESSAGES, id, path: 'text', value: `edit${r.int(100)}` as Json }]
        break
      case 1:
        ops = [{ op: 'set', ds: CHAT_MESSAGES, id, path: `reactions.${r.pick(EMOJI)}.${leaf}`, value: instant(2) }]
        break
      case 2:
        ops = [{ op: 'unset', ds: CHAT_MESSAGES, id, path: `reactions.${r.pick(EMOJI)}.${leaf}` }]
        break
      default:
        ops = [{ op: 'delete', ds: CHAT_MESSAGES, id }]
    }
  }
  const res = await rep.write(obj, ops)
  return { label: `module ${CHAT_MESSAGES} ${res.changeId}`, changeId: res.changeId }
}
