import { SvcError } from '../../core/errors.ts'
import type { Env } from '../../core/env.ts'
import type { InvitePermission } from '../../acl/records.ts'
import { instant } from '../rows.ts'
import { TECH_DS } from '../schema.ts'
import { TechRows } from '../tech-rows.ts'
import type { SpaceEngine } from '../space-engine.ts'
import type { AccountEngine } from '../account-engine.ts'

/** An invite record of the API (spec "Invite record"): the token only where it was minted. */
export interface InviteView {
  recordId: string
  permission: InvitePermission
  inviteToken?: string
}

/** A row of the tech space's `invites` dataset. */
interface StoredToken {
  spaceId: string
  permission: InvitePermission
  inviteToken: string
  createdAt: { $date: string }
}

/**
 * Invites and the guest key of the spaces this account manages (spec "Invites and guest key").
 * The ACL holds each invite's public key; the token (space id, invite id, private key) is kept
 * only in this account's tech space, so it reaches the account's own devices and nobody else.
 */
export class Invites {
  constructor(
    private readonly account: AccountEngine,
    private readonly env: Env,
    private readonly me: string,
  ) {}

  /** `POST {S}/invites`: a new invite that revokes every prior live non-guest one. */
  async create(spaceId: string, permission: 'reader' | 'writer'): Promise<{ spaceId: string; inviteToken: string }> {
    const space = this.account.space(spaceId)
    const prior = this.mustManage(space)
      .invites()
      .filter((i) => i.permission !== 'guest')
      .map((i) => i.recordId)
    const minted = await space.replica.createInvite(permission, { replaces: true })
    await this.keep(minted.recordId, { spaceId, permission, inviteToken: minted.token, createdAt: instant(this.env.now()) })
    await this.forget(prior)
    return { spaceId, inviteToken: minted.token }
  }

  /** Live invites (guest key included), with their tokens where this account minted them. */
  async list(spaceId: string): Promise<InviteView[]> {
    const space = this.account.space(spaceId)
    const out: InviteView[] = []
    for (const inv of space.replica.acl.current().invites()) {
      const view: InviteView = { recordId: inv.recordId, permission: inv.permission }
      const token = await this.token(inv.recordId)
      if (token) view.inviteToken = token
      out.push(view)
    }
    return out
  }

  async get(spaceId: string, recordId: string): Promise<InviteView> {
    const found = (await this.list(spaceId)).find((i) => i.recordId === recordId)
    if (!found) throw new SvcError('invite.not_found', 'no live invite with that id', { spaceId, recordId })
    return found
  }

  /** `DELETE {S}/invites/:recordId`; the guest key goes through `DELETE {S}/guest-key`, owner only. */
  async revoke(spaceId: string, recordId: string): Promise<void> {
    const space = this.account.space(spaceId)
    const st = this.mustManage(space)
    const inv = st.invites().find((i) => i.recordId === recordId)
    if (!inv) throw new SvcError('invite.not_found', 'no live invite with that id', { spaceId, recordId })
    if (inv.permission === 'guest' && st.owner !== this.me) throw new SvcError('acl.forbidden', 'only the owner revokes the guest key', { spaceId })
    await space.replica.revokeInvites([recordId])
    await this.forget([recordId])
  }

  /** `DELETE {S}/invites`: every live member invite (the guest key stays; it has its own route). */
  async revokeAll(spaceId: string): Promise<void> {
    const space = this.account.space(spaceId)
    const st = this.mustManage(space)
    const ids = st
      .invites()
      .filter((i) => i.permission !== 'guest')
      .map((i) => i.recordId)
    if (ids.length === 0) return
    await space.replica.revokeInvites(ids)
    await this.forget(ids)
  }

  /**
   * `POST {S}/guest-key`: owner only, idempotent: while a guest invite minted by this account is
   * live, its token comes back; after a revoke, a fresh key.
   */
  async guestKey(spaceId: string): Promise<{ spaceId: string; inviteToken: string }> {
    const space = this.account.space(spaceId)
    const st = space.replica.acl.current()
    if (st.owner !== this.me) throw new SvcError('acl.forbidden', 'only the owner creates the guest key', { spaceId })
    for (const inv of st.invites()) {
      if (inv.permission !== 'guest') continue
      const token = await this.token(inv.recordId)
      if (token) return { spaceId, inviteToken: token }
    }
    const minted = await space.replica.createInvite('guest')
    await this.keep(minted.recordId, { spaceId, permission: 'guest', inviteToken: minted.token, createdAt: instant(this.env.now()) })
    return { spaceId, inviteToken: minted.token }
  }

  /** `DELETE {S}/guest-key`: guest invites die, every guest is removed, the read key rotates. */
  async revokeGuestKey(spaceId: string): Promise<void> {
    const space = this.account.space(spaceId)
    const st = space.replica.acl.current()
    if (st.owner !== this.me) throw new SvcError('acl.forbidden', 'only the owner revokes the guest key', { spaceId })
    const guestInvites = st
      .invites()
      .filter((i) => i.permission === 'guest')
      .map((i) => i.recordId)
    await space.replica.revokeGuest()
    await this.forget(guestInvites)
  }

  private mustManage(space: SpaceEngine) {
    const st = space.replica.acl.current()
    if (!st.canManage(this.me)) throw new SvcError('acl.forbidden', 'only an owner or admin manages invites', { spaceId: space.spaceId })
    return st
  }

  /** The tokens this account keeps, one per invite record it made. */
  private get tokens(): TechRows<StoredToken> {
    return new TechRows<StoredToken>(this.account.tech, this.account.techObject, TECH_DS.invites, (v) => typeof v.inviteToken === 'string')
  }

  private async token(recordId: string): Promise<string | undefined> {
    return (await this.tokens.get(recordId))?.inviteToken
  }

  private async keep(recordId: string, row: StoredToken) {
    await this.tokens.put(recordId, row)
  }

  /** A dead invite's token opens nothing: dropping it keeps the secret out of later copies. */
  private async forget(recordIds: string[]) {
    const ops = []
    for (const id of recordIds) if (await this.token(id)) ops.push({ op: 'delete' as const, ds: TECH_DS.invites, id })
    if (ops.length) await this.account.tech.write(this.account.techObject, ops)
  }
}
