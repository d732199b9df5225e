/**
 * The oracle for hostile peers: what no honest replica may hold or do, whatever adversaries
 * sent (docs/simulation.md, "Checks").
 *
 * - A forged, tampered or junk change (a derived root nobody expects, an orphan) is never held.
 * - A join whose proof is not the invite key's signature for its author is never listed as a request.
 * - A change, object root or ACL record an adversary made after its removal existed in the
 *   global order (sim/timeline.ts) is void (rule 1): its marker is in no record, its object
 *   materializes no record, and its ACL record is void in the merged state and changes no role
 *   or key.
 */
import { AclLog, type AclEntry } from '../sync/acl/state.ts'
import type { SpaceReplica } from '../sync/replica/space-replica.ts'
import type { Crafted } from './adversary-types.ts'
import { MARKER_DS } from './attacks.ts'
import { holds } from './checks.ts'
import { DATASETS } from './workload.ts'
import type { Timeline } from './timeline.ts'

/** Crafted changes, each judged once: `void` must have no effect, `rejected` must not be held. */
export interface Judged {
  rejected: Crafted[]
  void: Crafted[]
}

export function judge(ledger: readonly Crafted[], timeline: Timeline, owner: string): Judged {
  const out: Judged = { rejected: [], void: [] }
  for (const c of ledger) {
    if (c.expect === 'rejected') out.rejected.push(c)
    else if (timeline.statusAt(c.author, c.seq, owner) === 'removed') out.void.push(c)
  }
  return out
}

/** Failure lines for one honest replica (every check of the module comment), without its name. */
export async function voidOrForgedHeld(r: SpaceReplica, j: Judged): Promise<string[]> {
  const out: string[] = []
  const trees = new Set(r.treeIds())
  const requests = r.known
    ? new Set(
        r.acl
          .current()
          .requests()
          .map((q) => q.recordId),
      )
    : new Set<string>()
  for (const c of j.rejected) {
    if (c.what === 'join') {
      // Whether the replica keeps the bytes is its business; listing the request is not.
      if (requests.has(c.id)) out.push(`lists ${c.kind} ${c.id} by ${c.author.slice(0, 6)} as a join request (its proof is not the invite key's)`)
      continue
    }
    if (c.what === 'derived' ? r.treeMeta(c.id) !== undefined : await holds(r, c.tree, c.id)) {
      out.push(`holds ${c.kind} ${c.what} ${c.id} (forged, tampered or junk: must be refused)`)
    }
  }
  const voidAcl = new Set<string>()
  const merged = r.acl.current()
  for (const c of j.void) {
    if (c.what === 'acl') {
      if (!r.acl.has(c.id)) continue
      voidAcl.add(c.id)
      if (!merged.isVoid(c.id)) out.push(`ACL record ${c.id} (${c.kind}) by ${c.author.slice(0, 6)} made after its removal takes effect (rule 1)`)
      continue
    }
    if (c.what === 'root' && trees.has(c.id)) {
      // The tree may stay in the DAG (its voidness can change as records arrive), but nothing in it materializes.
      for (const ds of ['', ...DATASETS]) {
        const live = (await r.listRecords(c.id, ds)).filter((x) => !x.deleted)
        if (live.length) out.push(`object ${c.id} created by ${c.author.slice(0, 6)} after its removal materialized ${live.length} records in '${ds}' (${c.kind}; rule 1)`)
      }
    }
    if (c.marker && trees.has(c.tree)) {
      const rec = await r.getRecord(c.tree, MARKER_DS, c.marker)
      if (rec && !rec.deleted) out.push(`applied ${c.kind} ${c.id} by ${c.author.slice(0, 6)} made after its removal: record ${c.marker} (rule 1)`)
    }
  }
  if (voidAcl.size) out.push(...voidAclEffects(r, voidAcl))
  return out
}

/**
 * A void ACL record must change nothing: the replica's ACL state equals the state of the same
 * records with the void ones spliced out (their children cite their parents instead). (That no
 * writer cites a head its fold skipped, rule 3, is checked when it writes: sim/runner.ts.)
 */
function voidAclEffects(r: SpaceReplica, voids: Set<string>): string[] {
  const out: string[] = []
  const spliced = splice(r.acl, voids)
  const mine = r.acl.current()
  const theirs = spliced.current()
  const ids = new Set<string>()
  for (const e of r.acl.entries.values()) {
    const rec = e.record
    if ('identity' in rec) ids.add(rec.identity)
    if (rec.type === 'root') ids.add(rec.owner)
  }
  const diff = [...ids].filter((id) => mine.roleOf(id) !== theirs.roleOf(id)).sort()
  if (diff.length) {
    out.push(`void ACL records ${[...voids].join(',')} changed roles of ${diff.map((id) => `${id.slice(0, 6)} ${theirs.roleOf(id)}->${mine.roleOf(id)}`).join(', ')} (rules 1, 2)`)
  }
  if (mine.readKeyId !== undefined && voids.has(mine.readKeyId)) out.push(`the current read key comes from void ACL record ${mine.readKeyId} (rule 1)`)
  return out
}

/** The same ACL records without `voids`: a record citing a void one cites its parents instead. */
function splice(acl: AclLog, voids: Set<string>): AclLog {
  const parentsOf = (id: string, seen = new Set<string>()): string[] => {
    const e = acl.entries.get(id)
    if (!e || seen.has(id)) return []
    seen.add(id)
    return e.prevIds.flatMap((p) => (voids.has(p) ? parentsOf(p, seen) : [p]))
  }
  const out = new AclLog(acl.spaceId)
  const kept: AclEntry[] = [...acl.entries.values()].filter((e) => !voids.has(e.id)).sort((a, b) => a.lamport - b.lamport)
  for (const e of kept) out.add({ ...e, prevIds: [...new Set(parentsOf(e.id))].sort() })
  return out
}
