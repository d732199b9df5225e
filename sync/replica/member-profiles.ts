import { decodeCanonical } from '../core/encoding.ts'
import { open } from '../crypto/box.ts'
import type { Keyring } from '../acl/keyring.ts'
import { profileAad } from '../acl/profile-seal.ts'
import type { AclState } from '../acl/state.ts'
import type { ProfileFields } from './acl-writer.ts'

/** A member's newest profile as this replica sees it: `profile` absent until it can open it. */
export interface MemberProfile {
  identity: string
  recordId: string
  profile?: ProfileFields
}

/**
 * Opens every member's newest profile where the keyring reaches its key, by identity. One sealed
 * under a key not reached yet (or that does not open under its author's name) comes back without
 * fields: the name is empty until a key arrives.
 */
export function openProfiles(st: AclState, keyring: Keyring, spaceId: string): MemberProfile[] {
  const out: MemberProfile[] = []
  for (const p of st.profiles().values()) {
    const entry: MemberProfile = { identity: p.identity, recordId: p.recordId }
    const key = keyring.get(p.keyId)
    if (key) {
      try {
        const v = decodeCanonical<Record<string, unknown>>(open(key, p.sealed, profileAad(spaceId, p.identity)))
        const profile: ProfileFields = {}
        for (const k of ['name', 'description', 'iconCid'] as const) if (typeof v?.[k] === 'string') profile[k] = v[k]
        entry.profile = profile
      } catch {
        // Not resolved yet, like one without a key.
      }
    }
    out.push(entry)
  }
  return out.sort((a, b) => (a.identity < b.identity ? -1 : 1))
}
