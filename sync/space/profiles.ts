import type { AccountEngine } from './account-engine.ts'
import type { SpaceEngine } from './space-engine.ts'

/**
 * Profiles between accounts (docs/sharing.md "Identities and profiles"). An account's profile
 * lives in its tech space, which only its own devices hold; other accounts see it through the
 * ACL `profile` record the account writes about itself in every space it shares, sealed under
 * that space's read key (`SpaceReplica.setProfile`, `SpaceReplica.profiles`). So a contact's
 * name is empty until we hold a key that opens one of its profile records, and it changes when
 * the contact publishes a newer one.
 */
export interface ProfileFields {
  name: string
  description: string
  iconCid: string
}

/** A contact's profile as opened in one space, with where it stands among its other records. */
export interface OpenedProfile extends ProfileFields {
  /** The record's timestamp (the author's clock: it only orders the author's own profiles). */
  at: number
  recordId: string
}

const EMPTY: ProfileFields = { name: '', description: '', iconCid: '' }

/** Every member's newest profile record in a space that a key we hold opens, by identity. */
export function openedProfiles(space: SpaceEngine): Map<string, OpenedProfile> {
  const out = new Map<string, OpenedProfile>()
  for (const p of space.replica.profiles()) {
    if (!p.profile) continue
    const at = space.replica.acl.entries.get(p.recordId)?.timestamp ?? 0
    out.set(p.identity, { name: p.profile.name ?? '', description: p.profile.description ?? '', iconCid: p.profile.iconCid ?? '', at, recordId: p.recordId })
  }
  return out
}

/** Whether a space is shared with another account (or is a one-to-one): where our profile goes. */
function sharedWithOthers(space: SpaceEngine, me: string): boolean {
  const st = space.replica.acl.current()
  if (!st.canRead(me)) return false
  return st.pair !== undefined || st.readers().some((id) => id !== me)
}

/**
 * Seals our current profile into `only`, or into every held space we share with another
 * account, unless the space already carries it. A space where we cannot seal (no current read
 * key) is skipped: the profile follows with the next change of the profile.
 */
export async function publishProfile(account: AccountEngine, only?: SpaceEngine): Promise<void> {
  const me = account.accountId
  const fields = await account.profile()
  // Active rows only: not a one-to-one or an invite still pending or declined, nor a join in flight.
  const spaces = only ? [only] : (await account.listSpaces('active')).map((i) => account.held(i.id)).filter((s) => s !== undefined)
  for (const space of spaces) {
    if (!sharedWithOthers(space, me)) continue
    const current = openedProfiles(space).get(me)
    if (sameFields(current ?? EMPTY, fields) && (current || !space.replica.acl.current().profiles().has(me))) continue
    try {
      await space.replica.setProfile(fields)
    } catch {
      // No current read key (a manager must rotate) or the space is closing: skip it.
    }
  }
}

const sameFields = (a: ProfileFields, b: ProfileFields) => a.name === b.name && a.description === b.description && a.iconCid === b.iconCid
