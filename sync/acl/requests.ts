import type { FoldResult } from './fold.ts'
import type { GrantRole, InvitePermission, JoinMetadata } from './records.ts'
import type { AclEntry } from './state.ts'

/** A live invite: valid, not revoked by an `uninvite`, not replaced by a later `invite`. */
export interface InviteInfo {
  recordId: string
  /** The invite's Ed25519 public key (base58): join proofs verify against it. */
  key: string
  permission: InvitePermission
  author: string
}

export type JoinStatus = 'pending' | 'accepted' | 'declined' | 'cancelled'

/** A join request (a `join` record) and where it stands in the merged state. */
export interface JoinRequest {
  /** The `join` record's id. */
  recordId: string
  joiner: string
  /** The `invite` record it cites. */
  invite: string
  /** The role an accept gives, from the invite; undefined when the invite record is void. */
  role?: GrantRole
  metadata?: JoinMetadata
  status: JoinStatus
  /** The record that decided it (`add`, `cancel` or `decline`); absent while pending or when the invite died. */
  decidedBy?: string
}

/** The newest valid `profile` record of one member (still sealed). */
export interface ProfileEntry {
  identity: string
  recordId: string
  keyId: string
  sealed: Uint8Array
}

export interface SharingBook {
  invites: InviteInfo[]
  requests: JoinRequest[]
  profiles: Map<string, ProfileEntry>
}

export const roleForInvite = (p: InvitePermission): GrantRole => p

/**
 * The sharing bookkeeping of a fold: live invites, join requests with their status, and each
 * member's newest profile. A pure function of the fold, so it is the same on every peer.
 *
 * - An invite dies when a valid `uninvite` names it (a guest invite only by the owner's), or when
 *   a valid `invite` with `replaces` has it in its causal past and it is not a guest invite.
 * - A request is `accepted` once a valid `add` names it and adds its joiner (an accept is an
 *   ordinary grant, so it wins over a concurrent cancel or decline when valid); else `cancelled`
 *   by its joiner's `cancel`; else `declined` by a valid `decline`, or when its invite is void
 *   (never valid), or is a guest invite no longer live (guest requests are only ever decided by
 *   the auto-accept); else `pending`. A member request whose invite was revoked or replaced after
 *   it was taken in stays pending: it was asked while the invite lived, and a manager decides it.
 */
export function sharingBook(f: FoldResult): SharingBook {
  const invites = new Map<string, AclEntry>()
  const accepts = new Map<string, AclEntry>()
  const declines = new Map<string, AclEntry>()
  const dead = new Set<string>()
  const replacing: AclEntry[] = []
  const profiles = new Map<string, ProfileEntry>()
  for (const e of f.valid) {
    const r = e.record
    if (r.type === 'invite') {
      invites.set(e.id, e)
      if (r.replaces) replacing.push(e)
    } else if (r.type === 'add' && r.request !== undefined) {
      if (!accepts.has(r.request)) accepts.set(r.request, e)
    } else if (r.type === 'decline') {
      if (!declines.has(r.request)) declines.set(r.request, e)
    } else if (r.type === 'profile') {
      profiles.set(e.author, { identity: e.author, recordId: e.id, keyId: r.keyId, sealed: r.sealed })
    }
  }
  for (const e of f.valid) {
    const r = e.record
    if (r.type !== 'uninvite') continue
    for (const id of r.invites) {
      const inv = invites.get(id)
      if (inv && (inv.record.type !== 'invite' || inv.record.permission !== 'guest' || e.author === f.owner)) dead.add(id)
    }
  }
  for (const rep of replacing) {
    for (const [id, inv] of invites) {
      if (id !== rep.id && inv.record.type === 'invite' && inv.record.permission !== 'guest' && f.precedes(id, rep.id)) dead.add(id)
    }
  }
  const live: InviteInfo[] = []
  for (const [id, e] of invites) {
    if (dead.has(id) || e.record.type !== 'invite') continue
    live.push({ recordId: id, key: e.record.key, permission: e.record.permission, author: e.author })
  }
  const liveIds = new Set(live.map((i) => i.recordId))
  const cancels = new Map<string, AclEntry>()
  for (const e of f.requests) if (e.record.type === 'cancel' && !cancels.has(e.record.request)) cancels.set(e.record.request, e)
  const requests: JoinRequest[] = []
  for (const e of f.requests) {
    const r = e.record
    if (r.type !== 'join') continue
    const inv = invites.get(r.invite)?.record
    const req: JoinRequest = { recordId: e.id, joiner: e.author, invite: r.invite, status: 'pending' }
    if (inv?.type === 'invite') req.role = roleForInvite(inv.permission)
    if (r.metadata) req.metadata = r.metadata
    const accept = accepts.get(e.id)
    const cancel = cancels.get(e.id)
    const decline = declines.get(e.id)
    if (accept && accept.record.type === 'add' && accept.record.identity === e.author) decide(req, 'accepted', accept.id)
    else if (cancel && cancel.author === e.author) decide(req, 'cancelled', cancel.id)
    else if (decline) decide(req, 'declined', decline.id)
    // Nobody decides a guest request but the auto-accept, which a dead guest key stops; a request
    // through a void invite never was one anybody could grant.
    else if (inv?.type !== 'invite' || (inv.permission === 'guest' && !liveIds.has(r.invite))) req.status = 'declined'
    requests.push(req)
  }
  return { invites: live, requests, profiles }
}

function decide(req: JoinRequest, status: JoinStatus, by: string) {
  req.status = status
  req.decidedBy = by
}
