/**
 * The sharing fields of a tech-space `spaces` row (docs/sharing.md "Flows and states").
 *
 * Deletion has two forms. `deletedAt` is pinned (first write wins), so a space the account
 * deleted stays deleted on every device whatever a later write says: a join with a token of
 * it answers 409 `space.deleted`. A declined invite, a withdrawn join or a dropped guest copy
 * is instead `status: 'deleted'` with a `deletedReason`, a plain last-writer-wins field that a
 * later join (or a new direct add) overwrites: synced, sticky until then, never terminal.
 */

/** Why a row is deleted: the account deleted it, declined the invite, or withdrew its join. */
export type DeletedReason = 'deleted' | 'declined' | 'withdrawn'

/**
 * A join this account sent (status `joining`). `change` is the signed `join` ACL change,
 * base58, kept so the join can be re-sent (wire's backoff) from any of the account's devices
 * until the space answers.
 */
export interface JoinState {
  /** Record id of the invite the token names. */
  inviteId: string
  /** Id of our `join` change: the request's record id on the owner's side. */
  changeId: string
  change: string
  /** The token was a guest key (auto-accepted by any manager device). */
  guest: boolean
  /** What a peer holding the space last answered (wire's `joined`). */
  answer?: 'pending' | 'accepted' | 'declined' | 'cancelled'
  /** Our `cancel` change, base58, once the join was withdrawn (so a peer can be told). */
  cancelChange?: string
}

/**
 * A direct add that offered us the space (status `invite_pending`): who offered it and the
 * `add` record that put us on its ACL. A decline remembers that record, so the same add
 * never re-offers the space, while a later, different add does.
 */
export interface OfferState {
  from: string
  addId: string
}

/** Roles a direct add (`POST {S}/acl/add`) or a role change grants. */
export const GRANTABLE = ['reader', 'writer', 'admin'] as const
export type Grantable = (typeof GRANTABLE)[number]
