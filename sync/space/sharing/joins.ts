import type { Logger } from '../../core/log.ts'
import { SvcError } from '../../core/errors.ts'
import { Emitter } from '../../core/emitter.ts'
import type { Env } from '../../core/env.ts'
import { fromBase58, toBase58 } from '../../core/ids.ts'
import type { CryptoProvider } from '../../crypto/provider.ts'
import type { KeyPair } from '../../crypto/keys.ts'
import { decodeInviteToken } from '../../acl/invite-token.ts'
import type { JoinMetadata } from '../../acl/records.ts'
import { makeCancelChange, makeJoinChange } from '../../replica/join-change.ts'
import { instant } from '../rows.ts'
import { rowStatus, type SpaceInfo, type SpaceRow } from '../account-engine.ts'
import type { SpaceEngine } from '../space-engine.ts'
import type { DeletedReason, JoinState } from './rows.ts'

/** A signed join or cancel this account must get to a peer holding the space (wire sends it). */
export interface OutgoingJoin {
  spaceId: string
  kind: 'join' | 'cancel'
  /** The raw signed ACL change. */
  change: Uint8Array
}

/** What a peer holding the space answered to our join (wire's `joined {status}`). */
export type JoinAnswer = 'pending' | 'accepted' | 'declined' | 'cancelled'

/** What the joiner's side needs from the account (Sharing lends it). */
export interface JoinHost {
  me: string
  key: KeyPair
  env: Env
  crypto: CryptoProvider
  row(spaceId: string): Promise<SpaceRow | undefined>
  writeRow(row: SpaceRow): Promise<void>
  patchRow(spaceId: string, fields: Record<string, unknown>): Promise<void>
  softDelete(spaceId: string, reason: DeletedReason): Promise<void>
  held(spaceId: string): SpaceEngine | undefined
  open(spaceId: string): Promise<SpaceEngine>
  info(spaceId: string): Promise<SpaceInfo>
  acceptInvite(spaceId: string): Promise<{ info: SpaceInfo; ready: boolean }>
  /** Where a throwing event listener is logged. */
  log: Logger
}

/**
 * The joiner's side of an invite (docs/sharing.md "Flows and states"): `POST /v1/spaces/join`
 * signs a `join` with the token's invite key and writes a `joining` row carrying it; wire
 * repeats it to peers (`events` `send`, `outgoing()`) until one answers; the row turns active
 * once the space's ACL lists us (Sharing's reconcile), or deleted when the join is declined or
 * withdrawn, never as a sticky tombstone, so the same token or a new one may ask again.
 */
export class Joins {
  readonly events: Emitter<{ send: OutgoingJoin }>

  constructor(private readonly h: JoinHost) {
    this.events = new Emitter<{ send: OutgoingJoin }>(h.log)
  }

  /**
   * `POST /v1/spaces/join` (the spec answers 202): the joining row, or the row an
   * `invite_pending` space turns into once its direct add is accepted (`accepted`). 400
   * `invite.invalid` for a malformed token; 409 `space.exists` when this account already reads
   * the space (a member or guest joining again: there is nothing to join); 409 `space.deleted`
   * when the account deleted the space (a declined or withdrawn join, or a dropped guest copy, is
   * no sticky delete).
   */
  async join(inviteToken: string, metadata?: JoinMetadata): Promise<{ info: SpaceInfo; accepted: boolean }> {
    const t = decodeInviteToken(inviteToken)
    const row = await this.h.row(t.spaceId)
    if (row?.deletedAt) throw new SvcError('space.deleted', 'this space was deleted', { spaceId: t.spaceId })
    const status = row ? rowStatus(row) : undefined
    const role = this.h.held(t.spaceId)?.replica.acl.current().roleOf(this.h.me) ?? 'none'
    if (status === 'active' && role !== 'none') throw new SvcError('space.exists', 'this account already reads this space', { spaceId: t.spaceId, role })
    if (status === 'invite_pending') {
      // Already on the ACL through a direct add: the token asks for nothing more.
      const { info } = await this.h.acceptInvite(t.spaceId)
      return { info, accepted: true }
    }
    if (status === 'joining' && row!.join?.inviteId === t.inviteId) {
      this.events.emit('send', { spaceId: t.spaceId, kind: 'join', change: fromBase58(row!.join.change) })
      return { info: await this.h.info(t.spaceId), accepted: false }
    }
    const change = await makeJoinChange({
      spaceId: t.spaceId,
      inviteId: t.inviteId,
      invitePrivateKey: t.privateKey,
      me: this.h.key,
      metadata,
      crypto: this.h.crypto,
      env: this.h.env,
    })
    const join: JoinState = { inviteId: t.inviteId, changeId: change.id, change: toBase58(change.raw), guest: t.guest }
    if (!row) {
      await this.h.writeRow({ spaceId: t.spaceId, spaceType: 'svc.space', derived: false, createdAt: instant(this.h.env.now()), status: 'joining', join })
    } else {
      await this.h.patchRow(t.spaceId, { status: 'joining', join, deletedReason: null })
    }
    if (!this.h.held(t.spaceId)) await this.h.open(t.spaceId)
    this.events.emit('send', { spaceId: t.spaceId, kind: 'join', change: change.raw })
    return { info: await this.h.info(t.spaceId), accepted: false }
  }

  /**
   * `POST {S}/acl/cancel-join`: withdraws our join while no decision is known here; the row
   * turns deleted (reason withdrawn) and a signed `cancel` goes out. 409
   * `space.join_not_pending` once a peer answered accepted or declined, or the ACL lists us.
   */
  async cancel(spaceId: string): Promise<void> {
    const row = await this.h.row(spaceId)
    if (!row) throw new SvcError('space.not_found', 'space not found', { spaceId })
    const join = row.join
    const decided = join?.answer === 'accepted' || join?.answer === 'declined'
    const member = (this.h.held(spaceId)?.replica.acl.current().roleOf(this.h.me) ?? 'none') !== 'none'
    if (rowStatus(row) !== 'joining' || !join || decided || member) {
      throw new SvcError('space.join_not_pending', 'no pending join to withdraw', { spaceId })
    }
    const cancel = await makeCancelChange({ spaceId, joinId: join.changeId, me: this.h.key, crypto: this.h.crypto, env: this.h.env })
    await this.h.patchRow(spaceId, { join: { ...join, cancelChange: toBase58(cancel.raw) } })
    await this.h.softDelete(spaceId, 'withdrawn')
    this.events.emit('send', { spaceId, kind: 'cancel', change: cancel.raw })
  }

  /**
   * A peer holding the space answered our join (wire's `joined`). `accepted` is kept until the
   * ACL arrives and makes the row active; `declined` and `cancelled` settle the row at once.
   */
  async answered(spaceId: string, answer: JoinAnswer): Promise<void> {
    const row = await this.h.row(spaceId)
    if (!row?.join) return
    if (rowStatus(row) !== 'joining') {
      // Our cancel arrived: nothing is left to send after a restart.
      if (answer === 'cancelled' && row.join.cancelChange) {
        const { cancelChange: _sent, ...join } = row.join
        await this.h.patchRow(spaceId, { join })
      }
      return
    }
    if (answer === 'declined') return this.h.softDelete(spaceId, 'declined')
    if (answer === 'cancelled') return this.h.softDelete(spaceId, 'withdrawn')
    if (row.join.answer !== answer) await this.h.patchRow(spaceId, { join: { ...row.join, answer } })
  }

  /** Joins to (re)send: every `joining` row's join, every withdrawn one's cancel. */
  async outgoing(rows: SpaceRow[]): Promise<OutgoingJoin[]> {
    const out: OutgoingJoin[] = []
    for (const row of rows) {
      if (!row.join) continue
      const status = rowStatus(row)
      if (status === 'joining') out.push({ spaceId: row.spaceId, kind: 'join', change: fromBase58(row.join.change) })
      else if (status === 'deleted' && row.deletedReason === 'withdrawn' && row.join.cancelChange) {
        out.push({ spaceId: row.spaceId, kind: 'cancel', change: fromBase58(row.join.cancelChange) })
      }
    }
    return out
  }
}
