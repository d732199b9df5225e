import type { Env } from '../core/env.ts'
import { errField, silentLogger, type Logger } from '../core/log.ts'
import { fromUtf8 } from '../core/encoding.ts'
import { identityOf, type KeyPair } from '../crypto/keys.ts'
import type { CryptoProvider } from '../crypto/provider.ts'
import { BoundedMap } from '../protocol/bounded-map.ts'
import type { HubMessage, HubUsage, SpaceCode } from '../protocol/hub-wire.ts'
import type { SyncHost } from '../protocol/responder.ts'
import type { SpaceReplica } from '../replica/space-replica.ts'
import { verifyAdmission } from './admission.ts'
import { HUB_DEFAULTS, type HubQuotas } from './constants.ts'

/**
 * What the hub keeps about accounts and registrations (docs/hub.md): the node's HubStore on
 * SQLite or PostgreSQL, memory in the simulator. Every process sharing a store sees the same.
 */
export interface HubRegistry {
  admit(account: string, via: 'config' | 'token', at: number): Promise<void>
  admitted(account: string): Promise<boolean>
  register(account: string, spaceId: string, at: number): Promise<void>
  unregister(account: string, spaceId: string): Promise<void>
  registrations(account: string): Promise<string[]>
  registrants(spaceId: string): Promise<string[]>
  /** Spaces and bytes an account's quotas count (the bytes of every space it registered). */
  usage(account: string): Promise<{ spaces: number; bytes: number }>
}

export interface HubCoreOptions {
  /** The hub's own key: its identity on every link, and the key its admission tokens carry. */
  key: KeyPair
  crypto: CryptoProvider
  env: Env
  registry: HubRegistry
  /** Opens the keyless replica of a kept space (`ReplicaDeps.keyless`); called once per space. */
  openReplica(spaceId: string): Promise<SpaceReplica>
  /** Accounts the operator admits by configuration. */
  allowlist?: readonly string[]
  quotas?: Partial<HubQuotas>
  /** Told when a replica opens, so the caller watches its commits (pushes to readers, counts). */
  opened?(spaceId: string, replica: SpaceReplica): void
  /**
   * The memory the open replicas may hold (their change bytes, as `sizeOf` counts them): past
   * it, the least recently used spaces close (`closed` is told) and reopen from the store when
   * a peer asks for them again. Absent: spaces stay open.
   */
  openBudget?: { maxBytes: number; sizeOf(spaceId: string): number; closed(spaceId: string): void }
  log?: Logger
}

/**
 * The hub's side of head sync and of its control protocol, runtime-neutral (the node's hub
 * process and the simulator's hub run it): which spaces it keeps and for whom, the quotas, and
 * the keyless replicas that check and hold the changes.
 *
 * Access: a kept space is served by its ACL alone, as on any peer; before the ACL is known (a
 * space just registered) only the accounts that registered it may sync it, which is how its
 * ACL arrives. A space nobody registered is answered as unknown, exactly like one never seen.
 */
export class HubCore implements SyncHost {
  readonly identity: string
  private readonly quotas: HubQuotas
  private readonly allow: ReadonlySet<string>
  private readonly log: Logger
  private readonly replicas = new Map<string, SpaceReplica>()
  private readonly opening = new Map<string, Promise<SpaceReplica | undefined>>()
  /** Registrants per space, as last read from the registry (kept spaces only). */
  private readonly registrantsOf = new Map<string, Set<string>>()
  /** Spaces read from the registry as kept by nobody, so a stranger's guesses cost one read each (bounded). */
  private readonly notKept: BoundedMap<string, number>
  /** Per account: the bytes its quota counts, as last read, plus what it was charged since. */
  private readonly bytesOf = new Map<string, number>()
  /** Per account: its change budget (tokens, refilled continuously at changesPerMinute). */
  private readonly budgets: BoundedMap<string, { tokens: number; at: number }>
  /** Per account: spaces refused for its quotas since it was last told (docs/hub.md "Quotas"). */
  private readonly refusals = new Map<string, Map<string, SpaceCode>>()

  constructor(private readonly o: HubCoreOptions) {
    this.identity = identityOf(o.key.publicKey)
    this.quotas = { ...HUB_DEFAULTS.quotas, ...o.quotas }
    this.allow = new Set(o.allowlist ?? [])
    this.log = o.log ?? silentLogger
    this.notKept = new BoundedMap(HUB_DEFAULTS.maxNotKeptCache)
    this.budgets = new BoundedMap(HUB_DEFAULTS.maxAccountBudgets)
  }

  /** Spaces whose replicas are open in this process: what head-sync rounds run for. */
  openSpaceIds(): string[] {
    return [...this.replicas.keys()]
  }

  openReplica(spaceId: string): SpaceReplica | undefined {
    return this.replicas.get(spaceId)
  }

  // ------------------------------------------------------------------ SyncHost

  space(spaceId: string): SpaceReplica | undefined | Promise<SpaceReplica | undefined> {
    const r = this.replicas.get(spaceId)
    if (!r) return this.open(spaceId)
    // Map order is recency: the first entries are the least recently used.
    this.replicas.delete(spaceId)
    this.replicas.set(spaceId, r)
    return r
  }

  /**
   * Closes the least recently used open spaces while the open ones hold more than the budget
   * (never `keep`, the one just opened). Runs when a space opens, and when the caller sees an
   * open space grow. A closed space's replica is dropped; exchanges still running on
   * it finish (what they store goes to the store), and the next request reopens it from there.
   */
  fitBudget(keep?: string): void {
    const b = this.o.openBudget
    if (!b) return
    let total = 0
    for (const id of this.replicas.keys()) total += b.sizeOf(id)
    for (const id of [...this.replicas.keys()]) {
      if (total <= b.maxBytes) return
      if (id === keep) continue
      total -= b.sizeOf(id)
      this.replicas.delete(id)
      this.registrantsOf.delete(id)
      b.closed(id)
    }
  }

  trusts(spaceId: string, identity: string): boolean {
    return this.registrantsOf.get(spaceId)?.has(identity) === true
  }

  admitChanges(spaceId: string, identity: string, count: number, bytes: number): boolean {
    if (!this.takeBudget(identity, count)) {
      this.refused(identity, spaceId, 'rate_limited')
      return false
    }
    const registrants = this.registrantsOf.get(spaceId)
    if (!registrants?.size) return true
    // The space's bytes count against each account that asked to keep it; it grows while any
    // of them has room (one full account does not hold up a team's shared space).
    let room = false
    for (const a of registrants) if ((this.bytesOf.get(a) ?? 0) + bytes <= this.quotas.maxBytes) room = true
    if (!room) {
      for (const a of registrants) this.refused(a, spaceId, 'over_bytes')
      return false
    }
    for (const a of registrants) this.bytesOf.set(a, (this.bytesOf.get(a) ?? 0) + bytes)
    return true
  }

  /** Spaces refused for an account's quotas since it was last asked (then forgotten). */
  takeRefusals(account: string): Array<[string, SpaceCode]> {
    const m = this.refusals.get(account)
    if (!m) return []
    this.refusals.delete(account)
    return [...m]
  }

  /** Whether an account has refusals waiting to be told. */
  hasRefusals(account: string): boolean {
    return this.refusals.has(account)
  }

  // ------------------------------------------------------------------ control protocol

  /**
   * Answers a control request of the account `identity` proved on its link (undefined: none
   * yet). Always a `status`.
   */
  async handle(identity: string | undefined, m: HubMessage): Promise<HubMessage> {
    const status = (code: 'ok' | 'not_admitted' | 'bad_token', spaces: Array<[string, SpaceCode]> = [], usage?: HubUsage): HubMessage => ({
      kind: 'status',
      reqId: m.reqId,
      code,
      spaces,
      usage: usage ?? { spaces: 0, bytes: 0, maxSpaces: this.quotas.maxSpaces, maxBytes: this.quotas.maxBytes },
    })
    if (m.kind === 'status' || identity === undefined) return status('not_admitted')
    if (m.kind === 'register' && m.token.byteLength > 0) {
      const v = await verifyAdmission(this.o.crypto, this.identity, fromUtf8(m.token), this.o.env.now())
      if ('refused' in v || v.account !== identity) return status('bad_token')
      await this.o.registry.admit(identity, 'token', this.o.env.now())
    }
    if (!(await this.isAdmitted(identity))) return status('not_admitted')
    const out: Array<[string, SpaceCode]> = []
    if (m.kind === 'unregister') {
      for (const id of m.spaceIds) {
        await this.o.registry.unregister(identity, id)
        this.registrantsOf.get(id)?.delete(identity)
        out.push([id, 'released'])
      }
    } else {
      let mine = new Set(await this.o.registry.registrations(identity))
      for (const id of m.spaceIds) {
        if (!mine.has(id)) {
          if (mine.size >= this.quotas.maxSpaces) {
            out.push([id, 'over_spaces'])
            continue
          }
          await this.o.registry.register(identity, id, this.o.env.now())
          mine = new Set([...mine, id])
          this.notKept.delete(id)
          const set = this.registrantsOf.get(id)
          if (set) set.add(identity)
        }
        out.push([id, await this.standing(id, identity)])
      }
    }
    out.push(...this.takeRefusals(identity))
    const usage = await this.o.registry.usage(identity)
    this.bytesOf.set(identity, usage.bytes)
    return status('ok', out, { ...usage, maxSpaces: this.quotas.maxSpaces, maxBytes: this.quotas.maxBytes })
  }

  /** Where a space an account registered stands now. */
  private async standing(spaceId: string, identity: string): Promise<SpaceCode> {
    const r = await this.space(spaceId)
    if (!r?.known) return 'pending'
    return r.acl.current().canRead(identity) ? 'kept' : 'not_reader'
  }

  private async isAdmitted(identity: string): Promise<boolean> {
    return this.allow.has(identity) || (await this.o.registry.admitted(identity))
  }

  // ------------------------------------------------------------------ replicas

  private open(spaceId: string): Promise<SpaceReplica | undefined> | undefined {
    if (this.notKept.has(spaceId) && (this.notKept.get(spaceId) ?? 0) > this.o.env.now()) return undefined
    let p = this.opening.get(spaceId)
    if (p) return p
    p = (async () => {
      const registrants = await this.o.registry.registrants(spaceId)
      if (!registrants.length) {
        // Asked again after a while: another hub process may have taken a registration since.
        this.notKept.set(spaceId, this.o.env.now() + HUB_DEFAULTS.notKeptRecheckMs)
        return undefined
      }
      this.registrantsOf.set(spaceId, new Set(registrants))
      for (const a of registrants) if (!this.bytesOf.has(a)) this.bytesOf.set(a, (await this.o.registry.usage(a)).bytes)
      const r = await this.o.openReplica(spaceId)
      this.replicas.set(spaceId, r)
      this.o.opened?.(spaceId, r)
      this.fitBudget(spaceId)
      return r
    })()
      .catch((err: unknown) => {
        this.log.error('opening a kept space failed', { spaceId, err: errField(err) })
        return undefined
      })
      .finally(() => this.opening.delete(spaceId))
    this.opening.set(spaceId, p)
    return p
  }

  /** Registrants of a space as the registry holds them now (another hub process may have added some). */
  async refreshRegistrants(spaceId: string): Promise<void> {
    if (!this.replicas.has(spaceId)) return
    this.registrantsOf.set(spaceId, new Set(await this.o.registry.registrants(spaceId)))
  }

  private takeBudget(identity: string, count: number): boolean {
    const now = this.o.env.now()
    const perMinute = this.quotas.changesPerMinute
    let b = this.budgets.get(identity)
    if (!b) this.budgets.set(identity, (b = { tokens: perMinute, at: now }))
    b.tokens = Math.min(perMinute, b.tokens + ((now - b.at) * perMinute) / 60_000)
    b.at = now
    // A step larger than a whole minute's budget still goes through when the bucket is full, so
    // a backlog is never refused for good; the bucket then stays empty for that long.
    if (b.tokens < Math.min(count, perMinute)) return false
    b.tokens -= count
    return true
  }

  private refused(account: string, spaceId: string, code: SpaceCode) {
    let m = this.refusals.get(account)
    if (!m) {
      if (this.refusals.size >= HUB_DEFAULTS.maxAccountBudgets) return
      this.refusals.set(account, (m = new Map<string, SpaceCode>()))
    }
    if (m.size < HUB_DEFAULTS.maxRefusalsPerAccount) m.set(spaceId, code)
  }
}
