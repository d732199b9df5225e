import type { AclState } from '../../acl/state.ts'
import type { Role } from '../../acl/records.ts'

/**
 * Member records (`GET {S}/members`, `{S}/members/me`, the `member` frames): one per identity
 * the space's ACL names, plus one per join request that is not settled yet. Computed from the
 * merged ACL alone, so every member's device lists the same records.
 *
 * `status`: `active` (a role other than none), `pending` (a join request awaiting a manager),
 * `invited` (added directly, this account has not accepted yet: only on its own `me`),
 * `declined` / `cancelled` (a request a manager declined or the joiner withdrew), `removed`
 * (was a member, role none now).
 */
export type MemberStatus = 'active' | 'pending' | 'invited' | 'declined' | 'cancelled' | 'removed'

export interface MemberInfo {
  identity: string
  role: Role
  status: MemberStatus
  /** Display name and icon: the join request's metadata until the member's profile is readable. */
  name: string
  iconCid: string
  /** This account. */
  self: boolean
  /** The join request, when the member asked through an invite. */
  request?: { recordId: string; permission: string; status: RequestStatus }
}

export type RequestStatus = 'pending' | 'accepted' | 'declined' | 'cancelled'

/** What the ACL fold says of one join request (AclState.requests() of sync/acl). */
export interface JoinRequestView {
  recordId: string
  identity: string
  permission: string
  status: RequestStatus
  metadata?: { name?: string; iconCid?: string }
}

/** Statuses `GET {S}/members` lists without `?status=all`. */
export const LISTED: ReadonlySet<MemberStatus> = new Set(['active', 'pending'])

/**
 * Every member record of a state, sorted owner first, then by role power, then identity.
 * `requests` are the fold's join requests (newest per identity wins for display); `profiles`
 * the members' opened profiles (a sealed one not readable yet is absent).
 */
export function membersOf(
  st: AclState,
  me: string,
  requests: readonly JoinRequestView[] = [],
  profiles: ReadonlyMap<string, { name?: string; iconCid?: string }> = new Map(),
): MemberInfo[] {
  const latest = new Map<string, JoinRequestView>()
  for (const r of requests) latest.set(r.identity, r)
  const out = new Map<string, MemberInfo>()
  for (const [identity, role] of st.roles) {
    out.set(identity, { identity, role, status: role === 'none' ? 'removed' : 'active', name: '', iconCid: '', self: identity === me })
  }
  for (const r of latest.values()) {
    const m = out.get(r.identity)
    const request = { recordId: r.recordId, permission: r.permission, status: r.status }
    if (m) {
      // A former member asking again is pending; a member keeps its role whatever it asked.
      if (m.status === 'removed' && r.status === 'pending') m.status = 'pending'
      m.request = request
    } else {
      const status = r.status === 'pending' ? 'pending' : r.status === 'accepted' ? 'active' : r.status
      out.set(r.identity, { identity: r.identity, role: 'none', status, name: '', iconCid: '', self: r.identity === me, request })
    }
    const m2 = out.get(r.identity)!
    m2.name = r.metadata?.name ?? ''
    m2.iconCid = r.metadata?.iconCid ?? ''
  }
  // A member's own profile, once readable here, wins over what its join request said.
  for (const [identity, p] of profiles) {
    const m = out.get(identity)
    if (!m) continue
    if (p.name !== undefined) m.name = p.name
    if (p.iconCid !== undefined) m.iconCid = p.iconCid
  }
  return [...out.values()].sort((a, b) => RANK[a.role] - RANK[b.role] || (a.identity < b.identity ? -1 : a.identity > b.identity ? 1 : 0))
}

const RANK: Record<Role, number> = { owner: 0, admin: 1, writer: 2, reader: 3, guest: 4, none: 5 }

/** A `member` frame of `{S}/members/subscribe`. */
export interface MemberFrame {
  kind: 'added' | 'changed' | 'removed'
  member: MemberInfo
  previous: MemberInfo | null
}

/**
 * The frames between two listings: a record entering the listed set (active or pending) is
 * `added`, one leaving it `removed` (with its new state as `member`), one changing inside it
 * `changed`.
 */
export function memberDiff(before: ReadonlyMap<string, MemberInfo>, after: ReadonlyMap<string, MemberInfo>): MemberFrame[] {
  const frames: MemberFrame[] = []
  const shown = (m: MemberInfo | undefined) => !!m && LISTED.has(m.status)
  for (const id of new Set([...before.keys(), ...after.keys()])) {
    const a = before.get(id)
    const b = after.get(id)
    if (!shown(a) && shown(b)) frames.push({ kind: 'added', member: b!, previous: null })
    else if (shown(a) && !shown(b)) frames.push({ kind: 'removed', member: b ?? { ...a!, role: 'none', status: 'removed' }, previous: a! })
    else if (shown(a) && shown(b) && JSON.stringify(a) !== JSON.stringify(b)) frames.push({ kind: 'changed', member: b!, previous: a! })
  }
  return frames
}

export const byIdentity = (members: readonly MemberInfo[]) => new Map(members.map((m) => [m.identity, m]))
