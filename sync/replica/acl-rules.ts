/**
 * Every place the replica asks the ACL a question, in one file: whether an ACL record may
 * join the log, whether an author may write a change at the ACL head it cites, whether a
 * change is void, which trees a removal makes rebuild, whether a change may materialize the
 * derived root it builds on, and which head a local writer cites.
 * The rules themselves live in `sync/acl/`; this is how the replica applies them.
 */
import { SvcError } from '../core/errors.ts'
import { writeRefusal } from './write-refusal.ts'
import type { Change } from '../dag/change.ts'
import { LIMITS } from '../core/limits.ts'
import type { AclLog, AclState } from '../acl/state.ts'
import type { Keyring } from '../acl/keyring.ts'
import { decodeAclRecord, type AclRecord } from '../acl/records.ts'
import { aclEntryOf } from './replica-state.ts'
import type { ReplicaState } from './replica-state.ts'
import type { TreeNode } from './tree-index.ts'
import type { RejectReason } from './types.ts'

/** Whether an ACL record (the root included) may join the log whose parents it cites. */
export function judgeAclRecord(acl: AclLog, spaceId: string, c: Change, record: AclRecord): RejectReason | undefined {
  if (c.id === spaceId) {
    if (record.type !== 'root') return 'malformed'
    // A derived root (no author) is a seeded space or a one-to-one pair, and carries no key.
    if (c.author === '' ? (record.seed === undefined) === (record.pair === undefined) || record.rotation !== undefined : c.author !== record.owner || record.pair !== undefined)
      return 'not_member'
    return undefined
  }
  if (record.type === 'root' || c.aclHeadId !== '' || c.readKeyId !== '') return 'malformed'
  return acl.admissible(aclEntryOf(c, record))
}

/**
 * What an ACL record waits for beyond its parents: a `join` cites the root alone, but is judged
 * against the `invite` record it names, which may arrive later (head sync sends by lamport).
 * Decoded once per change object.
 */
export function aclRecordDep(c: Change): string | undefined {
  let dep = extraDeps.get(c)
  if (dep === undefined) {
    try {
      const r = decodeAclRecord(c.payload)
      dep = r.type === 'join' ? r.invite : null
    } catch {
      dep = null
    }
    extraDeps.set(c, dep)
  }
  return dep ?? undefined
}
const extraDeps = new WeakMap<Change, string | null>()

/** An ACL change carrying a `join` or `cancel` (records a non-member may author). */
export function isRequestChange(c: Change): boolean {
  try {
    const t = decodeAclRecord(c.payload).type
    return t === 'join' || t === 'cancel'
  } catch {
    return false
  }
}

/** Whether the signed root of an object may be created by its author at the head it cites. */
export function judgeSignedRoot(acl: AclLog, c: Change): RejectReason | undefined {
  if (c.aclHeadId === '' || !acl.has(c.aclHeadId)) return 'not_member'
  const st = acl.stateAt([c.aclHeadId])
  if (!st.canWrite(c.author)) return st.roleOf(c.author) === 'none' ? 'not_member' : 'read_only'
  return undefined
}

/**
 * A change may not cite an ACL state older than one its parent `n` already cited: once a tree
 * has moved past a removal, the removed member cannot append to it. (Concurrent ACL heads are
 * fine: only going back behind a parent's head is refused.)
 */
export function citesStaleHead(acl: AclLog, c: Change, n: TreeNode): boolean {
  return n.aclHeadId !== '' && n.aclHeadId !== c.aclHeadId && acl.precedesOrEquals(c.aclHeadId, n.aclHeadId)
}

/**
 * Whether the author of an object change may write at its cited head, under that head's key:
 * a function of the change and the ACL records it cites only, so every replica answers alike.
 * Whether this replica can reach the key is `judgeKey`, asked only of changes that are not void.
 */
export function judgeWriter(acl: AclLog, c: Change): RejectReason | undefined {
  const st = acl.stateAtHead(c.aclHeadId)
  if (!st.canWrite(c.author)) {
    const role = st.roleOf(c.author)
    return role === 'reader' || role === 'guest' ? 'read_only' : 'not_member'
  }
  if (c.readKeyId !== st.readKeyId) return 'bad_read_key'
  return undefined
}

/**
 * Whether this replica can open a change's payload. Not asked of a void change: it joins the
 * DAG without its ops, and the key it was sealed under may come from a record the merged state
 * voids (a removed admin's own rotation), which only members that cached it earlier can reach.
 */
export function judgeKey(keyring: Keyring, c: Change): RejectReason | undefined {
  return keyring.get(c.readKeyId) ? undefined : 'no_read_key'
}

/** What the void rule needs of a change: its tree's DAG node facts. */
type Node = Pick<TreeNode, 'id' | 'lamport' | 'prevIds' | 'author' | 'aclHeadId'>

/**
 * Removal wins, for an object change or root (docs/acl.md, "Removal and concurrent
 * writes"): void when its author cannot write at its cited head counting only valid records,
 * or when an effective removal of its author is not in that head's past and did not witness
 * it. A change in a tree whose root is void is void too: that tree never materializes.
 * `pending`: changes of the batch being applied, so a witnessed id arriving in the same batch
 * as the changes it covers counts.
 */
export function isVoid(s: ReplicaState, c: Node, tree: string, pending?: ReadonlyMap<string, Node>): boolean {
  if (voidsNode(s, c, tree, pending)) return true
  if (c.id === tree) return false
  const root = s.indexes.get(tree)?.get(tree)
  return !!root && voidsNode(s, root, tree, pending)
}

/**
 * Whether `c` may materialize the held derived root `rootId` it builds on: only a change its
 * author may write at its cited head (and not void) vouches for an unsigned root.
 */
export function mayBuildOnDerivedRoot(s: ReplicaState, c: Change, rootId: string): boolean {
  if (!c.prevIds.includes(rootId) || c.aclHeadId === '' || !s.acl.has(c.aclHeadId)) return false
  return judgeWriter(s.acl, c) === undefined && judgeKey(s.keyring, c) === undefined && !voidsNode(s, c, rootId)
}

function voidsNode(s: ReplicaState, c: Node, tree: string, pending?: ReadonlyMap<string, Node>): boolean {
  if (c.author === '') return false
  if (sealedUnderVoidKey(s.acl, s.acl.current(), c)) return true
  return s.acl.voids(c.author, c.aclHeadId, (witness) => witnessCovers(s, c, tree, witness, pending))
}

/**
 * A change (not a root: roots are not sealed) sealed under a read key that a record the merged
 * state `st` voids introduced: a writer cited that record before learning it was void (a removed
 * admin's rotation concurrent with its removal), and sealed under its key. Its author chose whom
 * to wrap that key to, and no valid key links it, so members it left out could never open the
 * change: it is void, like its author's own writes there. (A change is sealed under its cited
 * head's key, or refused as `bad_read_key`.)
 */
function sealedUnderVoidKey(acl: AclLog, st: AclState, c: Node): boolean {
  if (c.prevIds.length === 0 || c.aclHeadId === '' || !acl.has(c.aclHeadId)) return false
  const key = acl.stateAtHead(c.aclHeadId).readKeyId
  return key !== undefined && st.isVoid(key)
}

/** `c` is an ancestor-or-equal, in its own tree, of one of the witnessed ids. */
function witnessCovers(s: ReplicaState, c: Node, tree: string, witness: readonly string[], pending?: ReadonlyMap<string, Node>): boolean {
  const idx = s.indexes.get(tree)
  const nodeOf = (id: string): Node | undefined => idx?.get(id) ?? pending?.get(id)
  const seen = new Set<string>()
  const stack = witness.filter((w) => nodeOf(w))
  while (stack.length) {
    const id = stack.pop()!
    if (id === c.id) return true
    if (seen.has(id)) continue
    seen.add(id)
    const n = nodeOf(id)
    if (!n || n.lamport <= c.lamport) continue
    stack.push(...n.prevIds)
  }
  return false
}

/**
 * Trees an ACL record just applied (`added`) makes rebuild: those holding a change (or root)
 * whose voidness differs between the merged state before and after it. Only changes by
 * members whose effective removals changed, or who are the subject of a record whose validity
 * flipped, can differ.
 */
export async function treesAffected(s: ReplicaState, before: AclState, after: AclState, added: string, treeIds: string[]): Promise<string[]> {
  const who = new Set<string>()
  /** Read keys whose introducing record became void or valid: changes sealed under them flip. */
  let keys = false
  const removalIds = (st: AclState) => new Set([...st.removals.values()].flat().map((e) => e.id))
  const [b, a] = [removalIds(before), removalIds(after)]
  for (const [identity, list] of before.removals) if (list.some((e) => !a.has(e.id))) who.add(identity)
  for (const [identity, list] of after.removals) if (list.some((e) => !b.has(e.id))) who.add(identity)
  for (const id of new Set([...before.skipped, ...after.skipped])) {
    if (id === added || before.isVoid(id) === after.isVoid(id)) continue
    const r = s.acl.entries.get(id)!.record
    if (r.type === 'add' || r.type === 'role' || r.type === 'remove') who.add(r.identity)
    if ((r.type === 'remove' || r.type === 'rotate') && r.rotation) keys = true
  }
  if (who.size === 0 && !keys) return []
  const out: string[] = []
  for (const tree of treeIds) {
    const idx = await s.loadIndex(tree)
    const root = idx.get(tree)
    for (const id of idx.ids()) {
      const n = idx.get(id)!
      if (keys && sealedUnderVoidKey(s.acl, before, n) !== sealedUnderVoidKey(s.acl, after, n)) {
        out.push(tree)
        break
      }
      if (!who.has(n.author)) continue
      const covered = (witness: readonly string[]) => witnessCovers(s, n, tree, witness)
      const rootCovered = (witness: readonly string[]) => !!root && witnessCovers(s, root, tree, witness)
      const flips = s.acl.voidsIn(before, n.author, n.aclHeadId, covered) !== s.acl.voidsIn(after, n.author, n.aclHeadId, covered)
      const rootFlips = id === tree && !!root && s.acl.voidsIn(before, root.author, root.aclHeadId, rootCovered) !== s.acl.voidsIn(after, root.author, root.aclHeadId, rootCovered)
      if (flips || rootFlips) {
        out.push(tree)
        break
      }
    }
  }
  return out
}

/**
 * A change an effective removal witnessed, arriving after changes of its author in the same tree
 * were judged without it: those may be covered after all. Changes of the batch it belongs to saw
 * it (`pending`), unless it was parked then and woken later in the batch: those judged void
 * (`voidedHere`) before it woke were judged without it too.
 */
export function witnessArrived(s: ReplicaState, c: Node, tree: string, pending: ReadonlyMap<string, Node>, voidedHere: ReadonlySet<string>): boolean {
  if (!s.acl.current().witnessed.has(c.id)) return false
  const idx = s.indexes.get(tree)
  if (!idx) return false
  for (const id of idx.ids()) if (idx.get(id)!.author === c.author && (!pending.has(id) || voidedHere.has(id))) return true
  return false
}

/**
 * The witness of a removal of `identity`: per object tree, its changes that no other change of
 * its there descends from (the root, when it only created the tree). Beyond the bound, the
 * newest (by lamport) are kept: the member's writes left uncovered are void.
 */
export async function removalWitness(s: ReplicaState, identity: string, treeIds: string[]): Promise<string[]> {
  const found: Array<{ id: string; lamport: number }> = []
  for (const tree of treeIds) {
    const idx = await s.loadIndex(tree)
    const mine: TreeNode[] = []
    for (const id of idx.ids()) {
      const n = idx.get(id)!
      if (n.author === identity) mine.push(n)
    }
    if (mine.length === 0) continue
    // Walk down from each of its changes, newest first; whatever is reached is not maximal.
    mine.sort((a, b) => b.lamport - a.lamport)
    const below = new Set<string>()
    for (const n of mine) {
      if (below.has(n.id)) continue
      found.push({ id: n.id, lamport: n.lamport })
      const stack = [...n.prevIds]
      while (stack.length) {
        const id = stack.pop()!
        if (below.has(id)) continue
        below.add(id)
        stack.push(...(idx.get(id)?.prevIds ?? []))
      }
    }
  }
  found.sort((a, b) => b.lamport - a.lamport || (a.id < b.id ? -1 : 1))
  return found
    .slice(0, LIMITS.maxRemovalWitness)
    .map((f) => f.id)
    .sort()
}

/**
 * The ACL head a local object write or root cites, with the read key it seals under: the
 * merged state of every known ACL record, through a `merge` record (written by `merge`) when
 * there is more than one valid frontier record. A head the fold skipped is never cited.
 */
export async function writerCitation(s: ReplicaState, merge: (prevIds: string[]) => Promise<string>): Promise<{ aclHeadId: string; readKeyId: string; readKey: Uint8Array }> {
  const merged = s.acl.current()
  if (!merged.canWrite(s.me)) throw writeRefusal(merged, s.me)
  const keyId = merged.readKeyId
  const rk = keyId && s.keyring.get(keyId)
  if (!keyId || !rk) throw new SvcError('space.read_only', 'no current read key for this space (a manager must rotate it)')
  const c = s.acl.citation()
  const aclHeadId = 'head' in c ? c.head : await merge(c.merge)
  // Judged at the head it cites, so sealed under that state's key: the merged state's.
  const st = s.acl.stateAtHead(aclHeadId)
  if (st.readKeyId !== keyId || !st.canWrite(s.me)) throw new SvcError('internal', 'the cited ACL state is not the merged state')
  return { aclHeadId, readKeyId: keyId, readKey: rk }
}
