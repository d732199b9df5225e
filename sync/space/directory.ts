import { SvcError } from '../core/errors.ts'
import type { AccountEngine } from './account-engine.ts'
import type { SpaceEngine } from './space-engine.ts'

/**
 * The identity directory (spec "Identity"): every identity this account has encountered, which
 * today means the account itself and every identity on the ACL of a space it holds (members,
 * including removed ones, which keep an entry with fewer `spaceIds`). It carries no rights.
 * Contacts' profiles are encrypted and not exchanged yet, so their `name` is empty; the
 * account's own entry carries its profile. `spaceIds`: the spaces where the identity holds a
 * role other than none.
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

/** Engines of the spaces the account holds locally (active rows). */
async function heldSpaces(account: AccountEngine): Promise<SpaceEngine[]> {
  const out: SpaceEngine[] = []
  for (const info of await account.listSpaces('all')) {
    try {
      out.push(account.space(info.id))
    } catch {
      // Not held (deleted, pending): no ACL to read.
    }
  }
  return out
}

export async function identityDirectory(account: AccountEngine): Promise<Map<string, IdentityInfo>> {
  const me = await account.profile()
  const out = new Map<string, IdentityInfo>([[account.accountId, { identity: account.accountId, ...me, spaceIds: [] }]])
  for (const space of await heldSpaces(account)) {
    for (const [identity, role] of space.replica.acl.current().roles) {
      let e = out.get(identity)
      if (!e) out.set(identity, (e = { identity, name: '', spaceIds: [] }))
      if (role !== 'none' && !e.spaceIds.includes(space.spaceId)) e.spaceIds.push(space.spaceId)
    }
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
 * Watches the directory: after any change of the tech space (profile, space list) or of a held
 * space (its ACL), recomputes it and reports the difference. Returns the stop function.
 */
export function watchDirectory(account: AccountEngine, emit: (frame: IdentitiesFrame) => void): () => void {
  let prev: Map<string, IdentityInfo> | undefined
  let timer: ReturnType<typeof setTimeout> | undefined
  let stopped = false
  const schedule = () => {
    if (!stopped && !timer) timer = setTimeout(() => void run(), SETTLE_MS)
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
    } catch {
      // The account is being torn down; the stream closes with it.
    }
  }
  // Every held space, tech included, and spaces opened later: the account forwards them all.
  const offs = [account.events.on('change', schedule), account.events.on('members', schedule)]
  void run()
  return () => {
    stopped = true
    clearTimeout(timer)
    for (const off of offs) off()
  }
}
