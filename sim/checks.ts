import { Keyring } from '../sync/acl/keyring.ts'
import type { AclLog } from '../sync/acl/state.ts'
import { identityOf, type KeyPair } from '../sync/crypto/keys.ts'
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
 * Records adding `identity` back (an `add`, or a role it can read with), void ones included: a
 * re-add that loses to a concurrent removal has still handed it the key current where it was
 * written, and through it every older one. Access it got that way is not a leak.
 */
function readdsOf(acl: AclLog, identity: string) {
  return [...acl.entries.values()].filter((e) => {
    const rec = e.record
    return (rec.type === 'add' && rec.identity === identity) || (rec.type === 'role' && rec.identity === identity && rec.role !== 'none')
  })
}

/**
 * Read keys a removed member must never reach: every key introduced by a record at or after
 * (causally) one of its effective removals, at whose state it cannot read, and that no later
 * record giving it access again follows (a re-added member gets the current key, and through it
 * every older one, legitimately). `elsewhere`: other honest peers' ACLs, for re-adds `acl` lacks
 * yet (at a checkpoint, the peer that knows every removal may not have an honest re-add made
 * concurrently with the last one, which handed the member its key all the same).
 */
export function postRemovalKeys(acl: AclLog, identity: string, elsewhere: readonly AclLog[] = []): Set<string> {
  const removals = acl.effectiveRemovalsOf(identity)
  const out = new Set<string>()
  if (!removals.length) return out
  // Records that gave it access again: re-adds, and rotations wrapped to it at a state where it
  // reads. Whatever key they follow it reaches legitimately (a rotation links every older key).
  const grants = [
    ...readdsOf(acl, identity),
    ...[...acl.entries.values()].filter((e) => {
      const rot = 'rotation' in e.record ? e.record.rotation : undefined
      return !!rot?.keys[identity] && acl.stateAtHead(e.id).canRead(identity)
    }),
  ]
  const others = elsewhere.filter((o) => o !== acl).map((o) => ({ o, readds: readdsOf(o, identity) }))
  const readableAfter = [...acl.entries.values()]
    .filter((g) => (g.record.type === 'rotate' || g.record.type === 'remove') && g.record.rotation.keys[identity] && acl.stateAtHead(g.id).canRead(identity))
    .map((g) => g.id)
  for (const e of acl.entries.values()) {
    const rec = e.record
    const rotates = rec.type === 'remove' || rec.type === 'rotate' || (rec.type === 'root' && rec.rotation)
    if (!rotates || !removals.some((r) => acl.precedesOrEquals(r.id, e.id))) continue
    if (acl.stateAtHead(e.id).canRead(identity) || grants.some((g) => acl.precedesOrEquals(e.id, g.id))) continue
    if (others.some(({ o, readds }) => readds.some((g) => o.precedesOrEquals(e.id, g.id)))) continue
    // A later rotation at whose state it may read (a heal after an honest re-add concurrent with
    // this key's record) links every key before it: history a re-added member reads.
    if (readableAfter.some((g) => acl.precedesOrEquals(e.id, g))) continue
    out.add(e.id)
  }
  return out
}

/** Rotations that wrapped a key to `identity` at a state where it reads (made without seeing a removal of it). */
function rotationGrantsOf(acl: AclLog, identity: string): string[] {
  return [...acl.entries.values()]
    .filter((g) => (g.record.type === 'rotate' || g.record.type === 'remove') && g.record.rotation.keys[identity] && acl.stateAtHead(g.id).canRead(identity))
    .map((g) => g.id)
}

/**
 * Members a peer has seen removed: its ACL holds an honest record removing them (`removals`,
 * by identity) and, at its current state, they cannot read. A write this peer seals now must
 * not be readable by any of them (the brief's definition of a leak).
 */
export function removedInView(r: SpaceReplica, removals: ReadonlyMap<string, readonly string[]>): string[] {
  if (!r.known) return []
  const st = r.acl.current()
  const out: string[] = []
  for (const [identity, ids] of removals) if (!st.canRead(identity) && ids.some((id) => r.acl.has(id))) out.push(identity)
  return out
}

/**
 * Seal-time leaks: writes sealed by a peer that had seen X removed, under a key X can reach
 * (through the full ACL, or its own replica's) while X is still removed at the end.
 */
export async function sealLeaks(
  full: SpaceReplica,
  writes: ReadonlyArray<{ id: string; tree: string; peer: string; removedInView?: string[] }>,
  keyOf: (identity: string) => KeyPair,
  ownReplicas: (identity: string) => SpaceReplica[],
): Promise<string[]> {
  const out: string[] = []
  const final = full.acl.current()
  const rings = new Map<string, Keyring[]>()
  const ringsOf = (x: string) => {
    let k = rings.get(x)
    if (!k) rings.set(x, (k = [new Keyring(full.acl, keyOf(x)), ...ownReplicas(x).map((r) => r.keyring)]))
    return k
  }
  for (const w of writes) {
    const victims = (w.removedInView ?? []).filter((x) => !final.canRead(x))
    if (!victims.length) continue
    const raw = (await full.rawChanges(w.tree, [w.id]))[0]?.raw
    if (!raw) continue
    const { readKeyId: keyId, aclHeadId } = decodeChange(raw)
    if (!keyId) continue
    for (const x of victims) {
      // Added back after this write (even by a re-add a concurrent removal voids): it was handed
      // the history then, this write included.
      if (readdsOf(full.acl, x).some((g) => !full.acl.precedesOrEquals(g.id, aclHeadId))) continue
      // Likewise a rotation wrapped to it by an admin that had not seen its removal, which this
      // write's citation does not include: that rotation links every key before it, this one
      // included (the grant postRemovalKeys allows as well).
      if (rotationGrantsOf(full.acl, x).some((g) => !full.acl.precedesOrEquals(g, aclHeadId) && full.acl.has(keyId) && full.acl.precedesOrEquals(keyId, g))) continue
      if (ringsOf(x).some((k) => k.get(keyId)))
        out.push(`${w.peer} sealed ${w.id} under key ${keyId} after seeing ${x.slice(0, 6)} removed, and ${x.slice(0, 6)} can open it (leak: rules 3, 4)`)
    }
  }
  return out
}

/**
 * What a removed member could read that it must not: a post-removal key its key reaches
 * (through the full ACL of a peer that knows everything, and through its own), a change it
 * holds sealed under such a key, or a record stamped by one of `postChanges`.
 * `hostileHeld`: ids of changes that hostile peers of other accounts hold (see below).
 */
export async function leaks(
  replica: SpaceReplica,
  key: KeyPair,
  fullAcl: AclLog,
  keys: Set<string>,
  postChanges?: Set<string>,
  hostileHeld?: ReadonlySet<string>,
): Promise<string[]> {
  const out: string[] = []
  const fresh = new Keyring(fullAcl, key)
  // Its own replica may hold records the full ACL lacks yet (a re-add in a branch still cut off):
  // through its own ACL, only keys off limits in both views count.
  const own = replica.known ? postRemovalKeys(replica.acl, identityOf(key.publicKey)) : new Set<string>()
  for (const k of keys) {
    if (fresh.get(k)) out.push(`key ${k} reachable through the full ACL`)
    if (own.has(k) && replica.keyring.get(k)) out.push(`key ${k} reachable through its own ACL`)
  }
  const me = identityOf(key.publicKey)
  const ownAcl = replica.known ? replica.acl : undefined
  for (const c of await replica.allChanges()) {
    const ch = decodeChange(c.raw)
    if (!ch.readKeyId || !keys.has(ch.readKeyId) || !(own.has(ch.readKeyId) || fresh.get(ch.readKeyId))) continue
    // Not a leak: a key it cannot open through either ACL, whose record is concurrent with a
    // re-add of it. Once both are merged it is a member again (until a later removal reaches the
    // sender), so members rightly sync it every change, those sealed under a rotation made
    // without it included; it holds their ciphertext and nothing opens it. A change it can open,
    // or one under a post-removal key no concurrent re-add explains (served while removed), still
    // fails.
    if (!fresh.get(ch.readKeyId) && !replica.keyring.get(ch.readKeyId) && concurrentReadd(ch.readKeyId, me, [fullAcl, ownAcl])) continue
    // Not a leak either: ciphertext it cannot open that a hostile peer of another account holds.
    // Whatever a hostile peer holds it may send to anyone, and no rule an honest peer follows
    // can stop that; what the rules guarantee is that the receiver cannot open it. The path is
    // real: a member adversary given a rotation's key before its own concurrent removal was
    // seen pushes a write sealed under it to a member that does not know of its own removal
    // yet either; that member parks it for the ACL record it cites, and once both removals
    // arrive applies it as void, without its key, as every replica does a void change (seed
    // 185 with 12 peers and 2 adversaries). Honest serving is still checked here without
    // adversaries, and whenever no hostile peer holds the change.
    if (!fresh.get(ch.readKeyId) && !replica.keyring.get(ch.readKeyId) && hostileHeld?.has(c.id)) continue
    out.push(`holds change ${c.id} sealed under post-removal key`)
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

/** Whether some ACL holds a re-add of `identity` neither before nor after the record `keyId`. */
function concurrentReadd(keyId: string, identity: string, acls: ReadonlyArray<AclLog | undefined>): boolean {
  return acls.some((acl) => !!acl?.has(keyId) && readdsOf(acl, identity).some((g) => !acl.precedesOrEquals(g.id, keyId) && !acl.precedesOrEquals(keyId, g.id)))
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

/**
 * Rule 1 as the simulator reads it, independently of the replica: a change (or root) by
 * `author` is void when an effective removal of the author in the merged ACL is neither in the
 * causal past of the ACL head the change cites nor witnesses it (the change is, in its tree,
 * an ancestor-or-equal of an id the removal names).
 */
export async function voidByRemoval(r: SpaceReplica, tree: string, id: string, raw: Uint8Array): Promise<boolean> {
  const c = decodeChange(raw)
  const removals = r.acl.effectiveRemovalsOf(c.author)
  if (!removals.length) return false
  const idx = await r.treeIndex(tree)
  for (const rm of removals) {
    if (c.aclHeadId !== '' && r.acl.precedesOrEquals(rm.id, c.aclHeadId)) continue
    const witness = rm.record.type === 'remove' ? (rm.record.witness ?? []) : []
    if (witness.includes(id) || idx.ancestors(witness).has(id)) continue
    return true
  }
  return false
}
