import { SerialQueue } from '../core/serial-queue.ts'
import { errField } from '../core/log.ts'
import type { AccountEngine } from './account-engine.ts'
import type { SpaceEngine } from './space-engine.ts'
import { TECH_DS } from './schema.ts'

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
    } catch (err) {
      // No current read key (a manager must rotate) or the space is closing: skip it.
      account.log.debug('publishing our profile into a space skipped', { spaceId: space.spaceId, err: errField(err) })
    }
  }
}

const sameFields = (a: ProfileFields, b: ProfileFields) => a.name === b.name && a.description === b.description && a.iconCid === b.iconCid

/** Debounce of profile publishing after a burst of ACL or row changes. */
const SETTLE_MS = 50

/**
 * Keeps our profile in every active space shared with others as it becomes one: a join or an
 * invite accepted (the row turns active), a member added to a space we had alone, a one-to-one
 * accepted on another device. Listens to ACL moves of held spaces and to the tech space's rows,
 * and publishes outside the listener (a listener must not await a write). Returns the stop
 * function.
 */
export function followProfiles(account: AccountEngine): () => void {
  const due = new Set<string>()
  const queue = new SerialQueue()
  let timer: (() => void) | undefined
  let stopped = false
  const run = () => {
    timer = undefined
    const ids = [...due]
    due.clear()
    queue
      .run(async () => {
        for (const id of ids) {
          const space = account.held(id)
          if (stopped || !space) continue
          const info = await account.info(id).catch((err: unknown) => {
            account.log.debug('reading a space before publishing our profile failed', { spaceId: id, err: errField(err) })
            return undefined
          })
          if (info?.status === 'active') await publishProfile(account, space)
        }
      })
      .catch((err: unknown) => account.log.warn('publishing our profile failed', { err: errField(err) }))
  }
  const schedule = (spaceId: string) => {
    if (stopped || spaceId === account.tech.spaceId) return
    due.add(spaceId)
    timer ??= account.tech.env.setTimer(SETTLE_MS, run)
  }
  const offs = [
    account.events.on('members', ({ space }) => schedule(space.spaceId)),
    account.tech.events.on('change', (c) => {
      for (const id of c.records.get(account.techObject)?.get(TECH_DS.spaces)?.keys() ?? []) schedule(id)
    }),
  ]
  return () => {
    stopped = true
    timer?.()
    for (const off of offs) off()
  }
}
