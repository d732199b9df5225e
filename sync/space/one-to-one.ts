import { ed25519 } from '@noble/curves/ed25519.js'
import { SvcError } from '../core/errors.ts'
import { SerialQueue } from '../core/serial-queue.ts'
import { fromBase58 } from '../core/ids.ts'
import { LIMITS } from '../core/limits.ts'
import type { Env } from '../core/env.ts'
import type { JsonObject } from '../crdt/ops.ts'
import { derivedObjectId, SpaceReplica, type ReplicaDeps } from '../replica/space-replica.ts'
import type { KeyPair } from '../crypto/keys.ts'
import { pairSpaceId } from '../acl/pair.ts'
import { SpaceEngine, type SpaceOptions } from './space-engine.ts'
import type { SpaceInfo, SpaceStatus } from './account-engine.ts'
import { instant } from './rows.ts'
import { errField, type Logger } from '../core/log.ts'
import { openedProfiles } from './profiles.ts'
import { TECH_DS } from './schema.ts'

/**
 * One-to-one spaces (spec "One-to-one and direct-add"; docs/sharing.md "One-to-one").
 *
 * A pair space's id is its derived ACL root `{type: 'root', pair: [a, b]}` (identities sorted),
 * so both accounts compute the same id whoever starts, and both directions at once meet in one
 * space. Its first read key comes from the two accounts' key agreement (sync/acl), so either
 * side holds the whole space without any message.
 *
 * Starting is a record in the space: the derived object `ONE_TO_ONE_SEED` holds, per account,
 * how many times it started the conversation (dataset `starts`, record id = the account, `{n}`,
 * counted only when that account wrote it). A decline (or a local delete) remembers the other
 * side's count in our row (`oneToOne.peerStarts`; a decline at least 1, since the row may turn
 * pending on the offer before the start's change arrives); a count above it is a later start, which
 * un-declines the row to `one_to_one_pending`. That is why a declined pair space stays open and
 * synced here (dormant: not listed, not served to routes): the later start reaches us like any
 * write, with no message type of its own.
 *
 * Row states (tech-space `spaces` row, `spaceType: 'svc.onetoone'`, `derived: true`):
 * - `active`: we started it (initiate) or accepted it;
 * - `one_to_one_pending`: the other side offered it (its device opened a round for the pair
 *   space, see `offered`), or the user registered it as incoming, or a later start un-declined;
 * - `deleted` with `deletedReason` `declined` (decline) or `deleted` (DELETE {S}): a plain
 *   last-writer-wins status, never the pinned `deletedAt`, so a later start by either side
 *   brings the row back (re-derivable).
 */

/** Seed of the derived object holding the start counts of a pair space. */
export const ONE_TO_ONE_SEED = 'svc/one-to-one/v1'
export const STARTS_DS = 'starts'

/** A pair row's own fields. */
export interface PairState {
  /** The other account. */
  peer: string
  /** What the user called the peer when registering it as incoming (shown until a profile resolves). */
  displayHint?: string
  /** The peer's start count when we declined or deleted: only a higher one un-declines. */
  peerStarts?: number
}

/** The fields of a tech-space `spaces` row this file reads and writes. */
export interface PairRow {
  spaceId: string
  spaceType: 'svc.space' | 'svc.onetoone'
  derived: boolean
  createdAt: { $date: string }
  status?: SpaceStatus
  deletedAt?: { $date: string }
  deletedReason?: 'deleted' | 'declined' | 'withdrawn'
  oneToOne?: PairState
}

export const pairRowStatus = (row: PairRow): SpaceStatus => (row.deletedAt ? 'deleted' : (row.status ?? 'active'))

/** What the account engine lends the one-to-one logic (sync/space/account-engine.ts builds it). */
export interface OneToOneHost {
  readonly accountId: string
  readonly env: Env
  readonly tech: SpaceEngine
  readonly techObjectId: string
  row(spaceId: string): Promise<PairRow | undefined>
  rows(): Promise<PairRow[]>
  /** Writes a whole row of the tech space's `spaces` dataset. */
  writeRow(row: PairRow): Promise<void>
  /** Opens the pair space with `peer` (creating its derived root here if needed) and forwards its events; not listed. */
  openPair(peer: string): Promise<SpaceEngine>
  /** Lists a pair space among the held spaces routes reach (active or pending), or unlists it (dormant). */
  list(space: SpaceEngine, listed: boolean): void
  announce(spaceIds: string[]): void
  info(spaceId: string): Promise<SpaceInfo>
  /** Seals our profile into a space we share (no-op when it carries the current one). */
  publishProfile(space: SpaceEngine): Promise<void>
  readonly log: Logger
}

/** An Ed25519 identity: base58 of 32 bytes that decode to a curve point. Throws 400 `request.invalid_field`. */
export function checkIdentity(identity: string, field: string): void {
  if (!validIdentity(identity)) throw new SvcError('request.invalid_field', 'not an account identity (base58 Ed25519 public key)', { field })
}

export function validIdentity(identity: string): boolean {
  if (typeof identity !== 'string' || identity.length < 32 || identity.length > 50) return false
  try {
    const bytes = fromBase58(identity)
    if (bytes.length !== 32) return false
    ed25519.Point.fromBytes(bytes)
    return true
  } catch {
    return false
  }
}

/** The id of the one-to-one space of `a` and `b`, whichever order they come in. */
export { pairSpaceId }

/**
 * Whether `spaceId` is the one-to-one space of `a` and `b`: the cheap check the offer path
 * makes before opening anything a peer names (a stranger's made-up id is not the pair's).
 */
export function isPairSpace(spaceId: string, a: string, b: string): boolean {
  if (a === b || !validIdentity(a) || !validIdentity(b)) return false
  return pairSpaceId(a, b) === spaceId
}

export class OneToOne {
  /** Every pair space opened here (listed or dormant), by space id. */
  private readonly engines = new Map<string, SpaceEngine>()
  private readonly dormantIds = new Set<string>()
  private readonly opening = new Map<string, Promise<SpaceEngine>>()
  private readonly startsIds = new Map<string, string>()
  /** Row transitions one at a time: two calls never read the same row and both write. */
  private readonly queue = new SerialQueue()

  constructor(private readonly host: OneToOneHost) {}

  private restartCheckFailed(spaceId: string, err: unknown): void {
    this.host.log.warn('checking whether a one-to-one space was restarted failed', { spaceId, err: errField(err) })
  }

  /** Dormant pair spaces: declined or deleted, still synced so a later start reaches us. */
  dormantSpaces(): SpaceEngine[] {
    return [...this.dormantIds].map((id) => this.engines.get(id)!)
  }

  /** The peer of every one-to-one row, whatever its status (the directory lists them). */
  async peers(): Promise<string[]> {
    const out: string[] = []
    for (const row of await this.host.rows()) if (row.spaceType === 'svc.onetoone' && row.oneToOne?.peer) out.push(row.oneToOne.peer)
    return out
  }

  /**
   * What a one-to-one is called while nobody named the space: the peer's name from its profile
   * record in the space once a key opens it, else the user's `displayHint`, else empty.
   */
  displayName(row: PairRow): string {
    const peer = row.oneToOne?.peer
    const space = this.engines.get(row.spaceId)
    const fromProfile = peer && space ? openedProfiles(space).get(peer)?.name : undefined
    return fromProfile || row.oneToOne?.displayHint || ''
  }

  dormant(spaceId: string): SpaceEngine | undefined {
    return this.dormantIds.has(spaceId) ? this.engines.get(spaceId) : undefined
  }

  // ------------------------------------------------------------------ routes

  /** `POST /v1/spaces/one-to-one`: initiate, accept what the peer started, or un-decline. */
  async initiate(other: string): Promise<SpaceInfo> {
    checkIdentity(other, 'otherIdentity')
    if (other === this.host.accountId) throw new SvcError('request.invalid_field', 'a one-to-one needs another account', { field: 'otherIdentity' })
    return this.queue.run(async () => {
      const fresh = !this.engines.has(pairSpaceId(this.host.accountId, other))
      const space = await this.ensureOpen(other, false)
      await this.bumpStart(space)
      const row = await this.host.row(space.spaceId)
      if (!row) await this.writeNewRow(space.spaceId, { peer: other }, 'active')
      else await this.setStatus(row, 'active')
      this.setListed(space, true)
      await this.host.publishProfile(space)
      // Announced (so sync rounds start) once it holds our start: a round about a space that
      // holds nothing signed yet offers the other side nothing, and the next would wait.
      if (fresh) this.host.announce([space.spaceId])
      return this.host.info(space.spaceId)
    })
  }

  /** `POST /v1/spaces/one-to-one/register-incoming`: idempotent; never revives a declined row. */
  async registerIncoming(peer: string, displayHint?: string): Promise<void> {
    checkIdentity(peer, 'peerIdentity')
    if (peer === this.host.accountId) throw new SvcError('request.invalid_field', 'a one-to-one needs another account', { field: 'peerIdentity' })
    return this.queue.run(async () => {
      const spaceId = pairSpaceId(this.host.accountId, peer)
      const row = await this.host.row(spaceId)
      if (!row) {
        const space = await this.ensureOpen(peer)
        await this.writeNewRow(spaceId, displayHint ? { peer, displayHint } : { peer }, 'one_to_one_pending')
        this.setListed(space, true)
      } else if (displayHint !== undefined && row.oneToOne?.displayHint !== displayHint) {
        await this.writeFields(spaceId, [displayHint === '' ? unset('oneToOne.displayHint') : set('oneToOne.displayHint', displayHint)])
      }
    })
  }

  /** `POST {S}/one-to-one/accept`: pending to active; active stays (idempotent). */
  accept(spaceId: string): Promise<SpaceInfo> {
    return this.queue.run(async () => {
      const row = await this.pairRow(spaceId)
      const status = pairRowStatus(row)
      if (status === 'deleted') throw new SvcError('space.deleted', 'this one-to-one was declined or deleted: start it again instead', { spaceId })
      const space = await this.ensureOpen(row.oneToOne!.peer)
      if (status !== 'active') await this.setStatus(row, 'active')
      this.setListed(space, true)
      await this.host.publishProfile(space)
      return this.host.info(spaceId)
    })
  }

  /** `POST {S}/one-to-one/decline`: synced to our devices, sticky until the peer starts again. */
  decline(spaceId: string): Promise<void> {
    return this.queue.run(async () => {
      const row = await this.pairRow(spaceId)
      if (pairRowStatus(row) === 'deleted' && row.deletedReason === 'declined') return
      await this.putAside(row, 'declined')
    })
  }

  /** `DELETE {S}` of a pair space: our copy only (the peer keeps theirs), re-derivable. */
  remove(spaceId: string): Promise<void> {
    return this.queue.run(async () => {
      const row = await this.pairRow(spaceId)
      if (pairRowStatus(row) === 'deleted') throw new SvcError('space.not_found', 'space not found', { spaceId })
      await this.putAside(row, 'deleted')
    })
  }

  // ------------------------------------------------------------------ offers and rows

  /**
   * A peer of account `from` opened a round for `spaceId`, which we do not hold. When it is the
   * pair space of (from, us), open it and show it as pending; anything else is not ours to
   * open (false). A declined or deleted row stays as it is: only a later start revives it.
   * At most `LIMITS.maxPendingOneToOne` pending rows come from offers, since any account may
   * offer one and identities cost nothing to mint.
   */
  offered(spaceId: string, from: string): Promise<boolean> {
    if (!isPairSpace(spaceId, from, this.host.accountId)) return Promise.resolve(false)
    return this.queue.run(async () => {
      const row = await this.host.row(spaceId)
      if (row) {
        if (!this.engines.has(spaceId)) await this.follow(row)
        return true
      }
      const rows = await this.host.rows()
      if (rows.filter((r) => r.spaceType === 'svc.onetoone' && pairRowStatus(r) === 'one_to_one_pending').length >= LIMITS.maxPendingOneToOne) return false
      const space = await this.ensureOpen(from)
      await this.writeNewRow(spaceId, { peer: from }, 'one_to_one_pending')
      this.setListed(space, true)
      return true
    })
  }

  /**
   * Brings the pair space of a row (from this device or another of the account) to the state
   * the row says: listed when active or pending, dormant when deleted. True when it was opened
   * here just now (the caller announces it).
   */
  async follow(row: PairRow): Promise<boolean> {
    const peer = row.oneToOne?.peer
    const opened = !this.engines.has(row.spaceId)
    // Every tech-space change re-follows every row: the pair check runs once per space.
    if (!peer || (opened && !isPairSpace(row.spaceId, peer, this.host.accountId))) return false
    const space = await this.ensureOpen(peer, false)
    const listed = pairRowStatus(row) !== 'deleted'
    const wasListed = !this.dormantIds.has(row.spaceId) && !opened
    this.setListed(space, listed)
    // Put aside here or by another device: a start we already hold may be later than it saw.
    if (!listed && (opened || wasListed)) this.queue.run(() => this.checkRestart(row.spaceId)).catch((err: unknown) => this.restartCheckFailed(row.spaceId, err))
    return opened
  }

  /** A start count of `identity` in a pair space, counted only when that account wrote it. */
  startsOf(space: SpaceEngine, identity: string): Promise<number> {
    return space.replica.getRecord(this.startsObjectId(space), STARTS_DS, identity).then((rec) => {
      if (!rec || rec.deleted || rec.modified.a !== identity) return 0
      const n = (rec.value as JsonObject | undefined)?.n
      return typeof n === 'number' && Number.isSafeInteger(n) && n > 0 ? n : 0
    })
  }

  // ------------------------------------------------------------------ internals

  private startsObjectId(space: SpaceEngine): string {
    let id = this.startsIds.get(space.spaceId)
    if (!id) this.startsIds.set(space.spaceId, (id = startsObjectId(space.spaceId)))
    return id
  }

  private async pairRow(spaceId: string): Promise<PairRow> {
    const row = await this.host.row(spaceId)
    if (!row || row.spaceType !== 'svc.onetoone' || !row.oneToOne) throw new SvcError('space.not_found', 'no one-to-one with this id', { spaceId })
    return row
  }

  private async ensureOpen(peer: string, announce = true): Promise<SpaceEngine> {
    const spaceId = pairSpaceId(this.host.accountId, peer)
    const space = this.engines.get(spaceId)
    if (space) return space
    // Row following (the account's queue) and route calls (ours) may open the same space at once.
    let p = this.opening.get(spaceId)
    if (!p) {
      p = (async () => {
        const opened = await this.host.openPair(peer)
        // Expected here, so the peer's start object is accepted as soon as it arrives.
        const starts = await opened.createTree({ seed: ONE_TO_ONE_SEED })
        // A peer's later start un-declines: watch its record (only pair spaces pay for this).
        opened.events.on('change', (c) => {
          if (c.records.has(starts) || c.reloaded.has(starts)) this.queue.run(() => this.checkRestart(spaceId)).catch((err: unknown) => this.restartCheckFailed(spaceId, err))
        })
        this.engines.set(spaceId, opened)
        if (announce) this.host.announce([spaceId])
        return opened
      })().finally(() => this.opening.delete(spaceId))
      this.opening.set(spaceId, p)
    }
    return p
  }

  private setListed(space: SpaceEngine, listed: boolean) {
    if (listed) this.dormantIds.delete(space.spaceId)
    else this.dormantIds.add(space.spaceId)
    this.host.list(space, listed)
  }

  private async bumpStart(space: SpaceEngine) {
    const n = (await this.startsOf(space, this.host.accountId)) + 1
    await space.write(this.startsObjectId(space), [{ op: 'set', ds: STARTS_DS, id: this.host.accountId, path: 'n', value: n }])
  }

  private async putAside(row: PairRow, reason: 'declined' | 'deleted') {
    const peer = row.oneToOne!.peer
    const space = await this.ensureOpen(peer)
    // A decline covers the start that made the row pending even when the offer (or the user's
    // register-incoming) came before that start's change did: only a second start is later.
    const peerStarts = Math.max(await this.startsOf(space, peer), reason === 'declined' ? 1 : 0)
    await this.writeFields(row.spaceId, [set('status', 'deleted'), set('deletedReason', reason), set('oneToOne.peerStarts', peerStarts)])
    this.setListed(space, false)
  }

  /** A declined or deleted row whose peer started again since: back to pending. */
  private async checkRestart(spaceId: string) {
    const row = await this.host.row(spaceId)
    const space = this.engines.get(spaceId)
    if (!row?.oneToOne || !space || pairRowStatus(row) !== 'deleted' || row.deletedAt) return
    if ((await this.startsOf(space, row.oneToOne.peer)) <= (row.oneToOne.peerStarts ?? 0)) return
    await this.setStatus(row, 'one_to_one_pending')
    this.setListed(space, true)
  }

  private async setStatus(row: PairRow, status: 'active' | 'one_to_one_pending') {
    const ops = [set('status', status)]
    if (row.deletedReason !== undefined) ops.push(unset('deletedReason'))
    await this.writeFields(row.spaceId, ops)
  }

  private async writeNewRow(spaceId: string, pair: PairState, status: 'active' | 'one_to_one_pending') {
    const row: PairRow = { spaceId, spaceType: 'svc.onetoone', derived: true, createdAt: instant(this.host.env.now()), status, oneToOne: pair }
    await this.host.writeRow(row)
  }

  private async writeFields(spaceId: string, ops: FieldOp[]) {
    await this.host.tech.write(
      this.host.techObjectId,
      ops.map((o) => ({ ...o, ds: TECH_DS.spaces, id: spaceId })),
    )
  }
}

type FieldOp = { op: 'set'; path: string; value: JsonObject[string] } | { op: 'unset'; path: string }
const set = (path: string, value: JsonObject[string]): FieldOp => ({ op: 'set', path, value })
const unset = (path: string): FieldOp => ({ op: 'unset', path })

/**
 * Opens the pair space of `me` and `peer` here: its root is derived, so it is written locally
 * (ingested like a peer's copy would be) before the space engine opens over it.
 */
export async function openPairSpace(deps: ReplicaDeps, me: KeyPair, peer: string, opts: SpaceOptions): Promise<SpaceEngine> {
  const bare = await SpaceReplica.openPair(deps, me, peer)
  return SpaceEngine.open(deps, bare.spaceId, me, opts)
}

/** The derived object of a pair space holding its start counts. */
export const startsObjectId = (spaceId: string): string => derivedObjectId(spaceId, ONE_TO_ONE_SEED)
