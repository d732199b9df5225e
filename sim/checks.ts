import { Keyring } from '../sync/acl/keyring.ts'
import type { AclLog } from '../sync/acl/state.ts'
import type { KeyPair } from '../sync/crypto/keys.ts'
import { decodeChange } from '../sync/dag/change.ts'
import type { SpaceReplica } from '../sync/replica/space-replica.ts'
import { DATASETS } from './workload.ts'

/** Every tree's sorted heads, the ACL tree included: equal keys mean equal DAGs. */
export function headsKey(r: SpaceReplica): string {
  return [r.spaceId, ...r.treeIds()].map((t) => `${t}:${r.heads(t).join(',')}`).join(';')
}

/** Whether a replica holds a change (in the DAG: applied or voided). */
export async function holds(r: SpaceReplica, tree: string, id: string): Promise<boolean> {
  if (tree === r.spaceId) return r.acl.has(id)
  if (!r.treeMeta(tree)) return false
  return (await r.treeIndex(tree)).has(id)
}

/**
 * Read keys a removed member must never reach: every key introduced by a record at or after
 * (causally) one of its effective removals. Removed accounts are never added back in the
 * simulation, so all of these are off limits.
 */
export function postRemovalKeys(acl: AclLog, identity: string): Set<string> {
  const removals = acl.effectiveRemovalsOf(identity)
  const out = new Set<string>()
  if (!removals.length) return out
  for (const e of acl.entries.values()) {
    const rec = e.record
    const rotates = rec.type === 'remove' || rec.type === 'rotate' || (rec.type === 'root' && rec.rotation)
    if (rotates && removals.some((r) => acl.precedesOrEquals(r.id, e.id))) out.add(e.id)
  }
  return out
}

/**
 * What a removed member could read that it must not: a post-removal key its key reaches
 * (through the full ACL of a peer that knows everything, and through its own), a change it
 * holds sealed under such a key, or a record stamped by one of `postChanges`.
 */
export async function leaks(
  replica: SpaceReplica, key: KeyPair, fullAcl: AclLog, keys: Set<string>, postChanges?: Set<string>,
): Promise<string[]> {
  const out: string[] = []
  const fresh = new Keyring(fullAcl, key)
  for (const k of keys) {
    if (fresh.get(k)) out.push(`key ${k} reachable through the full ACL`)
    if (replica.keyring.get(k)) out.push(`key ${k} reachable through its own ACL`)
  }
  for (const c of await replica.allChanges()) {
    const ch = decodeChange(c.raw)
    if (ch.readKeyId && keys.has(ch.readKeyId)) out.push(`holds change ${c.id} sealed under post-removal key`)
  }
  if (postChanges?.size) {
    for (const t of replica.treeIds()) {
      for (const ds of ['', ...DATASETS]) {
        for (const rec of await replica.listRecords(t, ds)) {
          if (postChanges.has(rec.created.c) || postChanges.has(rec.modified.c)) out.push(`record ${t}/${ds}/${rec.id} written after removal`)
        }
      }
    }
  }
  return out
}

/** Ids of changes sealed under any of `keys`. */
export async function changesUnder(r: SpaceReplica, keys: Set<string>): Promise<Set<string>> {
  const out = new Set<string>()
  for (const c of await r.allChanges()) {
    const ch = decodeChange(c.raw)
    if (ch.readKeyId && keys.has(ch.readKeyId)) out.add(c.id)
  }
  return out
}
