import type { SpaceEngine } from './space-engine.ts'
import { openedProfiles, type OpenedProfile } from './profiles.ts'

/**
 * What one space brings to the identity directory (directory.ts): its ACL roles, pending
 * joiners and its members' profiles (ours left out). A closed space keeps this in its summary
 * (residency.ts), so the directory reads every space without opening the closed ones.
 */
export interface SpaceDirectoryPart {
  roles: Array<[string, string]>
  joiners: string[]
  profiles: Array<[string, OpenedProfile]>
}

export function spaceDirectoryPart(space: SpaceEngine, accountId: string): SpaceDirectoryPart {
  const st = space.replica.acl.current()
  return {
    roles: [...st.roles].map(([identity, role]): [string, string] => [identity, role]),
    joiners: st.requests().map((q) => q.joiner),
    profiles: [...openedProfiles(space)].filter(([identity]) => identity !== accountId),
  }
}
