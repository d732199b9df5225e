import type { Role } from '../acl/records.ts'
import type { SpaceReplica } from './space-replica.ts'

/** Roles of full membership: guests (and pending or removed accounts) hold none. */
const FULL: ReadonlySet<Role> = new Set<Role>(['owner', 'admin', 'writer', 'reader'])

/**
 * Whether `identity` is a full member of the replica's space at its current ACL state, and the
 * space has a read key. Network-scope events need it on both ends (the bus refuses a local
 * publish or subscribe without it, the receiver drops a peer's event without it), so the rule
 * lives here, below both.
 */
export function isFullMember(replica: SpaceReplica, identity: string): boolean {
  const st = replica.acl.current()
  return st.readKeyId !== undefined && FULL.has(st.roleOf(identity))
}
