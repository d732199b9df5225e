import { SvcError } from '../core/errors.ts'
import { errField } from '../core/log.ts'
import type { AccountEngine } from './account-engine.ts'
import type { OpenedProfile } from './profiles.ts'
import { spaceDirectoryPart, type SpaceDirectoryPart } from './directory-part.ts'

/**
 * The identity directory (spec "Identity"): every identity this account has encountered, and
 * nothing more: it carries no rights. That is the account itself and every identity in the ACL
 * of a space it holds: members (removed ones keep an entry with fewer `spaceIds`), joiners
 * asking to join, one-to-one peers (including ones registered as incoming before their space
 * synced). `spaceIds`: the spaces where the identity holds a role other than none.
 *
 * Names: the account's own entry carries its profile. A contact's profile is the newest of its
 * ACL `profile` records (sealed under a read key; profiles.ts) that a key we hold opens; until
 * one opens, `name` is empty and `description` and `iconCid` absent. A record is about its
 * author only, so no member can name another.
 *
 * Composed from engine reads (profile, space list, ACL state), so every front end (HTTP, a
 * browser client) answers the same.
 */
export interface IdentityInfo {
  identity: string
  name?: string
  description?: string
  iconCid?: string
  spaceIds: string[]
}

export interface IdentitiesFrame {
  added: IdentityInfo[]
  updated: IdentityInfo[]
  removed: string[]
}

/**
 * What each space the account lists (active and pending rows) brings to the directory: an open
 * space's read now, a closed one's from its summary (residency.ts).
 */
async function spaceParts(account: AccountEngine): Promise<Array<{ spaceId: string } & SpaceDirectoryPart>> {
  const out: Array<{ spaceId: string } & SpaceDirectoryPart> = []
  for (const info of await account.listSpaces('all')) {
    const kept = account.closedSummary(info.id)
    if (kept) {
      out.push({ spaceId: info.id, roles: kept.roles, joiners: kept.joiners, profiles: kept.profiles })
      continue
    }
    try {
      out.push({ spaceId: info.id, ...spaceDirectoryPart(account.space(info.id), account.accountId) })
    } catch (err) {
      // Not held (deleted, or not synced yet): no ACL to read.
      account.log.debug('directory skips a space not held', { spaceId: info.id, err: errField(err) })
    }
  }
  return out
}

export async function identityDirectory(account: AccountEngine): Promise<Map<string, IdentityInfo>> {
  const me = await account.profile()
  const out = new Map<string, IdentityInfo>([[account.accountId, { identity: account.accountId, ...me, spaceIds: [] }]])
  const entry = (identity: string) => {
    let e = out.get(identity)
    if (!e) out.set(identity, (e = { identity, name: '', spaceIds: [] }))
    return e
  }
  const profiles = new Map<string, OpenedProfile>()
  for (const part of await spaceParts(account)) {
    for (const [identity, role] of part.roles) {
      const e = entry(identity)
      if (role !== 'none' && !e.spaceIds.includes(part.spaceId)) e.spaceIds.push(part.spaceId)
    }
    for (const joiner of part.joiners) entry(joiner)
    for (const [identity, p] of part.profiles) {
      const prev = profiles.get(identity)
      if (!prev || p.at > prev.at || (p.at === prev.at && p.recordId > prev.recordId)) profiles.set(identity, p)
    }
  }
  for (const peer of await account.oneToOne.peers()) entry(peer)
  for (const [identity, p] of profiles) {
    const e = out.get(identity)
    if (e) out.set(identity, { identity, name: p.name, description: p.description, iconCid: p.iconCid, spaceIds: e.spaceIds })
  }
  for (const e of out.values()) e.spaceIds.sort()
  return out
}

export async function identityInfo(account: AccountEngine, identity: string): Promise<IdentityInfo> {
  const e = (await identityDirectory(account)).get(identity)
  if (!e) throw new SvcError('identity.not_found', 'identity not found', { identity })
  return e
}

/** Debounce of directory recomputation after a burst of writes. */
const SETTLE_MS = 20

/**
 * Watches the directory: after any change of the tech space (profile, space list) or of the ACL
 * of a held space, recomputes it and reports the difference. Returns the stop function.
 */
export function watchDirectory(account: AccountEngine, emit: (frame: IdentitiesFrame) => void): () => void {
  let prev: Map<string, IdentityInfo> | undefined
  let timer: (() => void) | undefined
  let stopped = false
  const schedule = () => {
    if (!stopped && !timer) timer = account.tech.env.setTimer(SETTLE_MS, () => void run())
  }
  const run = async () => {
    timer = undefined
    try {
      const next = await identityDirectory(account)
      if (stopped) return
      if (prev) {
        const frame: IdentitiesFrame = { added: [], updated: [], removed: [] }
        for (const [id, e] of next) {
          const old = prev.get(id)
          if (!old) frame.added.push(e)
          else if (JSON.stringify(old) !== JSON.stringify(e)) frame.updated.push(e)
        }
        for (const id of prev.keys()) if (!next.has(id)) frame.removed.push(id)
        if (frame.added.length + frame.updated.length + frame.removed.length > 0) emit(frame)
      }
      prev = next
    } catch (err) {
      // The account is being torn down; the stream closes with it.
      account.log.debug('recomputing the identity directory failed', { err: errField(err) })
    }
  }
  // What the directory reads: ACLs (members, joiners, profile records, keys), the profile and
  // the space rows. Object writes change none of it, so a sync of thousands of them costs no
  // recomputation (one recomputation of 20 spaces x 20 members with profiles took ~6-26 ms here).
  const offs = [account.events.on('members', schedule), account.tech.events.on('change', schedule), account.events.on('spacesOpened', schedule)]
  void run()
  return () => {
    stopped = true
    timer?.()
    for (const off of offs) off()
  }
}
