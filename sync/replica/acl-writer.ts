import { SvcError } from '../core/errors.ts'
import { seal } from '../crypto/box.ts'
import { publicKeyOf } from '../crypto/keys.ts'
import { wrapKeyTo } from '../crypto/wrap.ts'
import { signChange, type Change } from '../dag/change.ts'
import { encodeAclRecord, type AclRecord, type Role, type Rotation } from '../acl/records.ts'
import type { ReplicaState } from './replica-state.ts'

/**
 * Signs this replica's own ACL records. Each method runs inside the replica's serial queue
 * (the facade queues it) and hands the signed record to `commit`, which applies it through
 * the same path as a peer's and throws when it is refused.
 */
export class AclWriter {
  constructor(
    private readonly s: ReplicaState,
    private readonly commit: (c: Change) => Promise<void>,
  ) {}

  /** Adds a member with a role, wrapping the current read key to them. */
  addMember(identity: string, role: Exclude<Role, 'owner'>): Promise<string> {
    const st = this.s.acl.current()
    const keyId = st.readKeyId
    const rk = keyId && this.s.keyring.get(keyId)
    if (!keyId || !rk) throw new SvcError('space.read_only', 'no read key for this space')
    return this.write({ type: 'add', identity, role, keyId, key: wrapKeyTo(this.s.deps.env, publicKeyOf(identity), rk) })
  }

  setRole(identity: string, role: Exclude<Role, 'owner'>): Promise<string> {
    return this.write({ type: 'role', identity, role })
  }

  /** Removes a member and rotates the read key to everyone who stays. */
  removeMember(identity: string): Promise<string> {
    return this.write({ type: 'remove', identity, rotation: this.newRotation([identity]) })
  }

  rotateReadKey(): Promise<string> {
    return this.write({ type: 'rotate', rotation: this.newRotation([]) })
  }

  private newRotation(excluding: string[]): Rotation {
    const { env } = this.s.deps
    const st = this.s.acl.current()
    const next = env.randomBytes(32)
    const keys: Record<string, Uint8Array> = {}
    for (const id of st.readers()) if (!excluding.includes(id)) keys[id] = wrapKeyTo(env, publicKeyOf(id), next)
    const prevId = st.readKeyId
    const prev = prevId ? this.s.keyring.get(prevId) : undefined
    if (prevId && !prev) throw new SvcError('space.read_only', 'cannot rotate without the current read key')
    return prevId && prev ? { keys, prev: seal(env, next, prev), prevKeyId: prevId } : { keys }
  }

  private async write(record: AclRecord): Promise<string> {
    const s = this.s
    const heads = s.acl.headIds()
    const lamport = Math.max(...heads.map((h) => s.acl.entries.get(h)!.lamport)) + 1
    const change = await signChange(s.deps.crypto, s.key, {
      spaceId: s.spaceId, treeId: s.spaceId, prevIds: heads, aclHeadId: '', seq: ++s.seq, lamport, timestamp: s.deps.env.now(), readKeyId: '', payload: encodeAclRecord(record),
    })
    await this.commit(change)
    return change.id
  }
}
