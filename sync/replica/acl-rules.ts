/**
 * Every place the replica asks the ACL a question, in one file: whether an ACL record may
 * join the log, whether an author may write a change at the ACL head it cites, whether a
 * change is void, which trees a removal makes rebuild, whether a change may materialize the
 * derived root it builds on, and which head a local writer cites.
 * The rules themselves live in `sync/acl/`; this is how the replica applies them.
 */
import { SvcError } from '../core/errors.ts'
import type { Change } from '../dag/change.ts'
import type { AclLog } from '../acl/state.ts'
import type { Keyring } from '../acl/keyring.ts'
import type { AclRecord } from '../acl/records.ts'
import type { ReplicaState } from './replica-state.ts'
import type { TreeNode } from './tree-index.ts'
import type { RejectReason } from './types.ts'

/** Whether an ACL record (the root included) may join the log whose parents it cites. */
export function judgeAclRecord(acl: AclLog, spaceId: string, c: Change, record: AclRecord): RejectReason | undefined {
  if (c.id === spaceId) {
    if (record.type !== 'root') return 'malformed'
    if (c.author === '' ? record.seed === undefined || record.rotation !== undefined : c.author !== record.owner) return 'not_member'
    return undefined
  }
  if (record.type === 'root' || c.aclHeadId !== '' || c.readKeyId !== '') return 'malformed'
  const st = acl.stateAt(c.prevIds)
  if (!st.canManage(c.author)) return st.roleOf(c.author) === 'none' ? 'not_member' : 'read_only'
  const rot = 'rotation' in record ? record.rotation : undefined
  if (rot && rot.prevKeyId !== st.readKeyId) return 'malformed'
  let maxPrev = 0
  for (const p of c.prevIds) maxPrev = Math.max(maxPrev, acl.entries.get(p)!.lamport)
  if (c.lamport <= maxPrev) return 'bad_lamport'
  return undefined
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

/** Whether the author of an object change may write at its cited head, under that head's key. */
export function judgeWriter(acl: AclLog, keyring: Keyring, c: Change): RejectReason | undefined {
  const st = acl.stateAtHead(c.aclHeadId)
  if (!st.canWrite(c.author)) {
    const role = st.roleOf(c.author)
    return role === 'reader' || role === 'guest' ? 'read_only' : 'not_member'
  }
  if (c.readKeyId !== st.readKeyId) return 'bad_read_key'
  if (!keyring.get(c.readKeyId)) return 'no_read_key'
  return undefined
}

/** A change joins the DAG but its ops do not apply: written by a member after its removal. */
export function isVoid(acl: AclLog, c: Change): boolean {
  return acl.voids(c.author, c.aclHeadId, c.timestamp)
}

/**
 * Whether `c` may materialize the held derived root `rootId` it builds on: only a change its
 * author may write at its cited head (and not void) vouches for an unsigned root.
 */
export function mayBuildOnDerivedRoot(acl: AclLog, keyring: Keyring, c: Change, rootId: string): boolean {
  if (!c.prevIds.includes(rootId) || c.aclHeadId === '' || !acl.has(c.aclHeadId)) return false
  return judgeWriter(acl, keyring, c) === undefined && !isVoid(acl, c)
}

/** Trees holding changes by `identity` stamped after its removal `c`: they need a rebuild. */
export async function treesVoidedBy(s: ReplicaState, identity: string, c: Change, treeIds: string[]): Promise<string[]> {
  const out: string[] = []
  for (const tree of treeIds) {
    const idx = await s.loadIndex(tree)
    for (const id of idx.ids()) {
      const n = idx.get(id)!
      if (n.author === identity && n.timestamp > c.timestamp && !s.acl.precedesOrEquals(c.id, n.aclHeadId)) {
        out.push(tree)
        break
      }
    }
  }
  return out
}

/** Trees an applied ACL record makes rebuild (a removal voids its target's later changes). */
export function rebuildsAfter(s: ReplicaState, c: Change, record: AclRecord, treeIds: string[]): Promise<string[]> | undefined {
  return record.type === 'remove' ? treesVoidedBy(s, record.identity, c, treeIds) : undefined
}

/** The ACL head a local object write or root cites, with the read key it seals under. */
export function writerCitation(s: ReplicaState): { aclHeadId: string; readKeyId: string; readKey: Uint8Array } {
  // Judged at the head it cites, so sealed under that state's key (concurrent ACL branches
  // may each have rotated).
  const aclHeadId = s.acl.latestHead()
  const state = s.acl.stateAt([aclHeadId])
  if (!state.canWrite(s.me)) throw new SvcError('space.read_only', 'this account cannot write in this space')
  const keyId = state.readKeyId
  const rk = keyId && s.keyring.get(keyId)
  if (!keyId || !rk) throw new SvcError('space.read_only', 'no read key for this space')
  return { aclHeadId, readKeyId: keyId, readKey: rk }
}

/** The ACL head a new object root cites (its right to create is judged at that head). */
export function rootCitation(s: ReplicaState): string {
  return s.acl.latestHead()
}
