import { SvcError } from '../core/errors.ts'
import { SerialQueue } from '../core/serial-queue.ts'
import type { Env } from '../core/env.ts'
import type { CryptoProvider } from '../crypto/provider.ts'
import { identityOf, type KeyPair } from '../crypto/keys.ts'
import type { Json, JsonObject, Op } from '../crdt/ops.ts'
import type { StorageAdapter } from '../storage/adapter.ts'
import { KvBlockStore, type BlockStore } from '../storage/block-store.ts'
import { derivedRoot } from '../dag/change.ts'
import { encodeAclRecord } from '../acl/records.ts'
import { Emitter } from '../core/emitter.ts'
import { errField, silentLogger, type Logger } from '../core/log.ts'
import { SpaceEngine, type SpaceChange, type SpaceOptions } from './space-engine.ts'
import { TechRows } from './tech-rows.ts'
import { ModuleSet, type AccountModuleContext, type AnyModule, type SpaceRowFields } from './module.ts'
import { AccountServices } from './account-services.ts'
import { Devices } from './devices.ts'
import { AccountScopedValues } from './scoped-values.ts'
import { TechAccountData } from './account-data.ts'
import { instant, recordDoc, type Doc } from './rows.ts'
import { OneToOne, openPairSpace, type PairRow } from './one-to-one.ts'
import { followProfiles, publishProfile } from './profiles.ts'
import { Sharing } from './sharing/sharing.ts'
import type { DeletedReason, JoinState, OfferState } from './sharing/rows.ts'
import type { SharingNetwork } from '../core/sharing-network.ts'
import { SpaceResidency, type MemoryBudgetOptions, type SpaceSummary } from './residency.ts'
import { spaceDirectoryPart } from './directory-part.ts'
import { DERIVED_SPACE_NAMES, derivedSpaceSeed, PROFILE_RECORD, TECH_ACCOUNT_SEED, TECH_DS, TECH_SPACE_SEED } from './schema.ts'

export type SpaceStatus = 'active' | 'joining' | 'deleted' | 'one_to_one_pending' | 'invite_pending' | 'guest_revoked'
export const SPACE_STATUSES: readonly SpaceStatus[] = ['active', 'joining', 'deleted', 'one_to_one_pending', 'invite_pending', 'guest_revoked']

/** SpaceInfo (spec "Space"). */
export interface SpaceInfo {
  id: string
  name: string
  description: string
  iconCid: string
  spaceIndexObjectId: string
  createdAt: { $date: string }
  spaceType: 'svc.space' | 'svc.onetoone'
  author: string
  ownRole: string
  settings: Record<string, Json>
  /** The push module's key mirror (absent until it ran, or without the module). */
  push?: SpaceRowFields['push']
  derived: boolean
  status: SpaceStatus
}

export interface AccountEngineDeps {
  storage: StorageAdapter
  crypto: CryptoProvider
  env: Env
  accountKey: KeyPair
  /** The modules every space of the account runs (sync/modules/index.ts has the release's list). */
  modules?: ModuleSet | readonly AnyModule[]
  /**
   * Called before each listed space opens while the account opens (`opened` of `total` done so
   * far), and once at the end: a large data directory takes seconds, and the daemon reports
   * the count instead of starting silently.
   */
  onSpaceOpened?: (opened: number, total: number) => void
  /**
   * The listed spaces' object rows load after `open` returns (the daemon: a restart serves once
   * the replicas are open, not once every row of a large space is in memory). A space is held,
   * announced and reached through `space()`/`held()` only once its rows are in; until then
   * `loaded(spaceId)` waits for it and `searchable(spaceId)` reaches it for a search, which
   * answers from its saved index. Default: `open` returns with every space whole.
   */
  spacesInBackground?: boolean
  /**
   * One memory budget for every space of the account (residency.ts): spaces open on demand and
   * in the background by recency, and the least recently used idle ones close past it. Absent:
   * every space opened stays open (a bare engine, the browser).
   */
  memoryBudget?: MemoryBudgetOptions
  /**
   * Where files' blocks live. Default: rows of `storage` (KvBlockStore), which every adapter
   * carries; the daemon passes its files-on-disk store (node/storage/fs-block-store.ts).
   */
  blocks?: BlockStore
  /** Where the account, its spaces and its modules' services log (default: nowhere); the daemon passes its scoped logger. */
  log?: Logger
}

/**
 * What an account announces (`account.events`), in one typed emitter: every held space's
 * changes and ACL moves (tech space included), spaces opening, and the daemon's sync status and
 * processes (node/daemon feeds those two; the engine itself has no network).
 */
export interface AccountEvents {
  /** Object rows and records of a held space moved (SpaceEvents `change`). */
  change: { space: SpaceEngine; change: SpaceChange }
  /** A held space's ACL moved: members, roles or keys. */
  members: { space: SpaceEngine; versionId: string }
  /** Spaces opened here: created, or listed or sent by another device (sync them). */
  spacesOpened: { spaceIds: string[] }
  /** Spaces closed under the memory budget (stop syncing their replicas; they reopen on demand). */
  spacesClosed: { spaceIds: string[] }
  /** A space's sync status may have changed (node/daemon/sync-status.ts). */
  syncStatus: { spaceId: string }
  /** A long-running process started or ended (node/daemon/processes.ts). */
  process: { id: string; kind: string; phase: 'start' | 'end' }
}

/** A row of the tech space's `spaces` dataset: one per space the account knows. */
export interface SpaceRow extends PairRow {
  spaceId: string
  spaceType: 'svc.space' | 'svc.onetoone'
  derived: boolean
  derivedName?: string
  createdAt: { $date: string }
  status?: SpaceStatus
  /** Pinned (first write wins): a sticky tombstone no later write revives. */
  deletedAt?: { $date: string }
  /** Sharing fields (sync/space/sharing/rows.ts has their rules). */
  deletedReason?: DeletedReason
  join?: JoinState
  offer?: OfferState
}

/**
 * The engine of one account: its tech space (spaces list, profile, settings; synced only
 * across its own devices) and every space it holds. One per daemon for the process lifetime
 * of an account.
 */
export class AccountEngine implements AccountModuleContext {
  readonly accountId: string
  readonly devices: Devices
  /** Account- and local-scope property values of every space (each space's TypesService holds it). */
  readonly scopedValues: AccountScopedValues
  /** The account's private datasets, as modules of every held space reach them. */
  readonly accountData: TechAccountData
  private readonly spaces = new Map<string, SpaceEngine>()
  /** The tech space's `spaces` dataset, as typed rows. */
  private readonly spaceTable: TechRows<SpaceRow>
  /** Spaces opened in the background whose rows still load (AccountEngineDeps.spacesInBackground). */
  private readonly loading = new Map<string, { engine: SpaceEngine; held: Promise<void> }>()
  private closed = false
  /** Listed spaces not open, recency, summaries, pins and the memory budget (residency.ts). */
  private readonly residency: SpaceResidency
  /**
   * Closed spaces opening now, until held or failed (`held` resolves true or false, never
   * rejects: a failure is logged once, by `reopen`); `replica` once the engine is in `loading`
   * (or the open failed).
   */
  private readonly opening = new Map<string, { replica: Promise<void>; held: Promise<boolean> }>()
  /** The background opening by recency (`allOpened` waits for it). */
  private background: Promise<void> = Promise.resolve()
  private stopSweeps: () => void = () => undefined
  /** One-to-one spaces: never closed under the budget (one-to-one.ts holds them as it lists them). */
  private readonly pairIds = new Set<string>()
  readonly events: Emitter<AccountEvents>
  /** The account's logger (AccountEngineDeps.log): spaces log under `space`, module services under their name. */
  readonly log: Logger
  /** The child every space of the account logs through. */
  private readonly spaceLog: Logger
  /** Invites, joins, members and the rows they move (sync/space/sharing). */
  readonly sharing: Sharing
  /** One-to-one spaces (sync/space/one-to-one.ts). */
  readonly oneToOne: OneToOne
  /** The modules' account services (`accountService`), built last in the constructor. */
  readonly services: AccountServices
  private blockStore?: BlockStore
  /** Stops keeping our profile in the spaces we share (profiles.ts). */
  private stopProfiles: () => void = () => undefined

  private constructor(
    private readonly deps: AccountEngineDeps,
    readonly tech: SpaceEngine,
    private readonly techObjectId: string,
    readonly modules: ModuleSet,
  ) {
    this.accountId = identityOf(deps.accountKey.publicKey)
    this.log = deps.log ?? silentLogger
    this.residency = new SpaceResidency(deps.storage, deps.memoryBudget)
    this.events = new Emitter<AccountEvents>(this.log)
    this.spaceLog = this.log.child('space')
    this.devices = new Devices(tech, techObjectId, deps.env)
    this.scopedValues = new AccountScopedValues(tech, techObjectId, deps.storage)
    this.accountData = new TechAccountData(tech, techObjectId, this.accountId)
    this.spaceTable = new TechRows<SpaceRow>(tech, techObjectId, TECH_DS.spaces, isSpaceRow)
    this.forward(tech)
    this.sharing = new Sharing(this, {
      key: deps.accountKey,
      env: deps.env,
      crypto: deps.crypto,
      row: (id) => this.spaceRow(id),
      rows: () => this.spaceRows(),
      writeRow: (row) => this.writeRow(row),
      open: async (id) => {
        await this.openSpace(id)
        this.announce([id])
        return this.spaces.get(id)!
      },
      drop: (id) => {
        this.spaces.delete(id)
        this.residency.forget(id)
      },
    })
    this.oneToOne = new OneToOne({
      accountId: this.accountId,
      env: deps.env,
      tech,
      techObjectId,
      row: (id) => this.spaceRow(id),
      rows: () => this.spaceRows(),
      writeRow: (row) => this.writeRow(row),
      openPair: async (peer) => {
        const e = await openPairSpace(this.replicaDeps, deps.accountKey, peer, this.spaceOptions)
        this.forward(e)
        return e
      },
      list: (e, listed) => {
        this.pairIds.add(e.spaceId)
        if (listed) this.spaces.set(e.spaceId, e)
        else this.spaces.delete(e.spaceId)
      },
      announce: (ids) => this.announce(ids),
      info: (id) => this.info(id),
      publishProfile: (e) => publishProfile(this, e),
      log: this.log.child('one-to-one'),
    })
    // Before any space is followed, so an account service hears every `spacesOpened`.
    this.services = new AccountServices(this, modules)
  }

  get env(): Env {
    return this.deps.env
  }

  get storage(): StorageAdapter {
    return this.deps.storage
  }

  get crypto(): CryptoProvider {
    return this.deps.crypto
  }

  get blocks(): BlockStore {
    return (this.blockStore ??= this.deps.blocks ?? new KvBlockStore(this.deps.storage))
  }

  /** Feeds the account's emitter from a space's (once per opened space). */
  private forward(space: SpaceEngine) {
    // Checked first: a commit allocates no payload while nobody listens on the account.
    space.events.on('change', (change) => this.events.count('change') && this.events.emit('change', { space, change }))
    space.events.on('members', (e) => this.events.count('members') && this.events.emit('members', { space, versionId: e.versionId }))
  }

  /** Registers a space engine just opened or created here. */
  private hold(space: SpaceEngine) {
    this.spaces.set(space.spaceId, space)
    this.forward(space)
  }

  static async open(deps: AccountEngineDeps): Promise<AccountEngine> {
    const replicaDeps = { storage: deps.storage, crypto: deps.crypto, env: deps.env }
    // The tech space is derived from the account: every device computes the same id.
    const modules = ModuleSet.of(deps.modules)
    const tech = await SpaceEngine.create(replicaDeps, deps.accountKey, { seed: TECH_SPACE_SEED, modules, log: (deps.log ?? silentLogger).child('space') })
    const techObjectId = await tech.createTree({ seed: TECH_ACCOUNT_SEED })
    const engine = new AccountEngine(deps, tech, techObjectId, modules)
    engine.stopProfiles = followProfiles(engine)
    await engine.sharing.refreshGates()
    await engine.residency.load()
    await engine.followSpaceRows(deps.onSpaceOpened, deps.spacesInBackground === true)
    if (deps.spacesInBackground === true) engine.startBackground()
    // Another device of this account may add or delete spaces: follow the tech space's rows.
    tech.events.on('change', (c) => {
      if (c.records.get(techObjectId)?.has(TECH_DS.spaces) || c.reloaded.has(techObjectId)) {
        engine.following.run(() => engine.followSpaceRows()).catch((err: unknown) => engine.log.warn('opening the spaces listed by another device failed', { err: errField(err) }))
      }
    })
    return engine
  }

  /** Follows the tech space's list of spaces one change at a time. */
  private readonly following = new SerialQueue()

  /** Opens every listed space not open yet (empty until sync fills it), drops deleted ones. */
  private async followSpaceRows(progress?: (opened: number, total: number) => void, background = false) {
    const added: string[] = []
    const rows = await this.spaceRows()
    for (const [i, row] of rows.entries()) {
      progress?.(i, rows.length)
      if (row.spaceType === 'svc.onetoone') {
        if (await this.oneToOne.follow(row)) added.push(row.spaceId)
        continue
      }
      if (rowStatus(row) === 'deleted') {
        this.spaces.delete(row.spaceId)
        this.loading.delete(row.spaceId)
        this.residency.forget(row.spaceId)
        continue
      }
      if (this.spaces.has(row.spaceId) || this.loading.has(row.spaceId) || this.residency.closed.has(row.spaceId)) continue
      // Opened later: on demand, or by recency in the background (startBackground).
      if (background) this.residency.closed.add(row.spaceId)
      else {
        await this.openSpace(row.spaceId)
        added.push(row.spaceId)
      }
    }
    progress?.(rows.length, rows.length)
    if (added.length) this.announce(added)
  }

  private announce(spaceIds: string[]) {
    this.events.emit('spacesOpened', { spaceIds })
  }

  /** Joins and offers over the network, when the daemon runs one (absent in tests and the simulator). */
  private network?: SharingNetwork

  /** The daemon hands its P2P side here once it runs (sharing: joins over the wire, offers). */
  attachNetwork(net: SharingNetwork): void {
    this.network = net
    this.sharing.attach(net)
  }

  /** Every space this account holds open, the tech space first. */
  openSpaces(): SpaceEngine[] {
    return [this.tech, ...this.spaces.values(), ...this.oneToOne.dormantSpaces()]
  }

  /**
   * Opens a space of this account that this device does not hold yet (another device is
   * sending it); its spaces-list row arrives with the tech space.
   */
  async adopt(spaceId: string): Promise<SpaceEngine> {
    const held = this.held(spaceId)
    if (held) return held
    const row = await this.spaceRow(spaceId)
    if (row?.spaceType === 'svc.onetoone') {
      // A pair space opens from its derived root, listed or dormant as its row says.
      await this.oneToOne.follow(row)
      const pair = this.held(spaceId)
      if (pair) return pair
    }
    if (row && rowStatus(row) === 'deleted') throw new SvcError('space.deleted', 'this space was deleted', { spaceId })
    await this.openSpace(spaceId)
    const e = this.spaces.get(spaceId)!
    this.announce([spaceId])
    return e
  }

  /** The engine of a held space (tech included), or undefined. */
  held(spaceId: string): SpaceEngine | undefined {
    return spaceId === this.tech.spaceId ? this.tech : (this.spaces.get(spaceId) ?? this.oneToOne.dormant(spaceId))
  }

  private get replicaDeps() {
    return { storage: this.deps.storage, crypto: this.deps.crypto, env: this.deps.env }
  }

  /** How every space of this account opens: its modules and scoped value store. */
  private get spaceOptions(): SpaceOptions {
    return { modules: this.modules, scopedValues: this.scopedValues, accountData: this.accountData, log: this.spaceLog }
  }

  // ------------------------------------------------------------------ profile

  async profile(): Promise<{ name: string; description: string; iconCid: string }> {
    const v = ((await this.tech.replica.getRecord(this.techObjectId, TECH_DS.profile, PROFILE_RECORD))?.value ?? {}) as JsonObject
    return { name: s(v.name), description: s(v.description), iconCid: s(v.iconCid) }
  }

  async setProfile(fields: { name?: string; description?: string; iconCid?: string }): Promise<void> {
    const ops: Op[] = []
    for (const [k, v] of Object.entries(fields)) {
      if (v === undefined) continue
      ops.push(v === '' ? { op: 'unset', ds: TECH_DS.profile, id: PROFILE_RECORD, path: k } : { op: 'set', ds: TECH_DS.profile, id: PROFILE_RECORD, path: k, value: v })
    }
    if (ops.length === 0) throw new SvcError('request.missing_field', 'give at least one of name, description, iconCid')
    await this.tech.write(this.techObjectId, ops)
    await publishProfile(this)
  }

  // ------------------------------------------------------------------ spaces

  async createSpace(opts: { name: string; description?: string; iconCid?: string }): Promise<SpaceInfo> {
    const engine = await SpaceEngine.create(this.replicaDeps, this.deps.accountKey, { ...opts, ...this.spaceOptions })
    this.hold(engine)
    this.announce([engine.spaceId])
    await this.writeRow({ spaceId: engine.spaceId, spaceType: 'svc.space', derived: false, createdAt: instant(this.deps.env.now()) })
    return this.info(engine.spaceId)
  }

  /** SpaceInfo rows; `status` is 'all' or one status, default active. */
  async listSpaces(status: SpaceStatus | 'all' = 'active'): Promise<SpaceInfo[]> {
    // Names and members come from the spaces' rows (a closed space's from its summary).
    await this.opensSettled()
    const out: SpaceInfo[] = []
    for (const row of await this.spaceRows()) {
      if (status !== 'all' && rowStatus(row) !== status) continue
      // A closed space lists from its summary; one closed without any (never opened since this
      // version kept them) opens first. A failed open is logged and listed bare.
      if (!this.spaces.has(row.spaceId) && !this.residency.summary(row.spaceId) && (this.residency.closed.has(row.spaceId) || this.opening.has(row.spaceId))) {
        await this.reopen(row.spaceId)
      }
      out.push(await this.infoOf(row))
    }
    return out
  }

  async info(spaceId: string): Promise<SpaceInfo> {
    const row = await this.spaceRow(spaceId)
    if (!row) throw new SvcError('space.not_found', 'space not found', { spaceId })
    await this.loaded(spaceId)
    return this.infoOf(row)
  }

  /** The engine of a held space; 404 `space.not_found`, or the sharing gate's code for a pending row. */
  space(spaceId: string): SpaceEngine {
    const e = this.spaces.get(spaceId)
    if (!e) throw new SvcError('space.not_found', 'space not found', { spaceId })
    this.sharing.gate(spaceId)
    return e
  }

  async patchSpace(spaceId: string, fields: { name?: string; description?: string; iconCid?: string }): Promise<void> {
    await this.space(spaceId).setIndexFields(fields)
  }

  /** Account-private, single-level scalar settings per space (spec "Space" settings). */
  async patchSettings(spaceId: string, set: Record<string, Json>, unset: string[]): Promise<void> {
    if (!(await this.spaceRow(spaceId))) throw new SvcError('space.not_found', 'space not found', { spaceId })
    if (Object.keys(set).length + unset.length === 0) throw new SvcError('request.missing_field', 'give at least one setting to set or unset')
    for (const k of unset) if (Object.hasOwn(set, k)) throw new SvcError('request.invalid_field', 'a key is both set and unset', { field: k })
    for (const k of [...Object.keys(set), ...unset]) {
      if (!SETTING_KEY_RE.test(k)) throw new SvcError('request.invalid_field', 'settings keys are single-level names ([A-Za-z0-9_-], up to 128)', { field: k })
    }
    for (const [k, v] of Object.entries(set)) {
      if (v !== null && typeof v === 'object') throw new SvcError('request.invalid_field', 'settings are scalar values', { field: k })
      if (k === 'notifyMode' && !['all', 'mentions', 'none'].includes(v as string)) throw new SvcError('request.invalid_field', 'notifyMode is all, mentions or none', { field: k })
    }
    const ops: Op[] = [
      ...Object.entries(set).map(([k, v]): Op => ({ op: 'set', ds: TECH_DS.settings, id: spaceId, path: k, value: v })),
      ...unset.map((k): Op => ({ op: 'unset', ds: TECH_DS.settings, id: spaceId, path: k })),
    ]
    await this.tech.write(this.techObjectId, ops)
  }

  /** Sticky tombstone; derived spaces cannot be deleted. */
  async deleteSpace(spaceId: string): Promise<void> {
    const row = await this.spaceRow(spaceId)
    if (!row || rowStatus(row) === 'deleted') throw new SvcError('space.not_found', 'space not found', { spaceId })
    if (row.spaceType === 'svc.onetoone') return this.oneToOne.remove(spaceId)
    if (row.derived) throw new SvcError('space.derived_undeletable', 'a derived space cannot be deleted', { spaceId })
    // A pending join, invite or guest copy is left without a sticky tombstone (sharing/rows.ts).
    // Closed, it is not opened for this: it leaves the closed set (nothing opens it again).
    await this.opening.get(spaceId)?.held
    this.residency.forget(spaceId)
    if (await this.sharing.leave(row)) return void this.spaces.delete(spaceId)
    await this.tech.write(this.techObjectId, [{ op: 'set', ds: TECH_DS.spaces, id: spaceId, path: 'deletedAt', value: instant(this.deps.env.now()) }])
    this.spaces.delete(spaceId)
  }

  /** Derived spaces by name: resolves, never creates. */
  async derivedSpaces(): Promise<Array<{ name: string; spaceId: string; created: boolean; status?: SpaceStatus }>> {
    const out = []
    for (const name of DERIVED_SPACE_NAMES) {
      const spaceId = await this.derivedSpaceId(name)
      const row = await this.spaceRow(spaceId)
      out.push(row ? { name, spaceId, created: true, status: rowStatus(row) } : { name, spaceId, created: false })
    }
    return out
  }

  /** Idempotent: creates the derived space on first call, returns it on every call. */
  async ensureDerivedSpace(name: string): Promise<SpaceInfo> {
    if (!(DERIVED_SPACE_NAMES as readonly string[]).includes(name)) throw new SvcError('space.derived_unknown', 'unknown derived space', { name })
    const spaceId = await this.derivedSpaceId(name)
    const row = await this.spaceRow(spaceId)
    if (row && rowStatus(row) === 'deleted') throw new SvcError('space.deleted', 'this space was deleted', { spaceId })
    // A derived space closed under the budget reopens rather than opening a second engine of it.
    if (this.residency.closed.has(spaceId) || this.opening.has(spaceId)) await this.reopen(spaceId)
    if (!this.spaces.has(spaceId)) {
      const engine = await SpaceEngine.create(this.replicaDeps, this.deps.accountKey, { seed: derivedSpaceSeed(name), name, ...this.spaceOptions })
      this.hold(engine)
      this.announce([engine.spaceId])
    }
    if (!row) await this.writeRow({ spaceId, spaceType: 'svc.space', derived: true, derivedName: name, createdAt: instant(0) })
    return this.info(spaceId)
  }

  private async derivedSpaceId(name: string): Promise<string> {
    // The derived ACL root depends only on (owner, seed): compute it without writing anything.
    return derivedRoot('', encodeAclRecord({ type: 'root', owner: this.accountId, seed: derivedSpaceSeed(name) })).id
  }

  // ------------------------------------------------------------------ tech rows

  /** Raw tech-space rows of `spaces` or `profile`, for `/v1/spaces/query`. */
  async techDocs(dataset: 'spaces' | 'profile'): Promise<Doc[]> {
    const recs = await this.tech.replica.listRecords(this.techObjectId, TECH_DS[dataset])
    return recs
      .filter((r) => !r.deleted && r.value !== undefined)
      .map((r) => {
        const d = recordDoc(r)
        const row = dataset === 'spaces' ? this.spaceTable.rowOf(r.value) : undefined
        if (row) d.status = rowStatus(row)
        return d
      })
  }

  get techObject() {
    return this.techObjectId
  }

  private async spaceRows(): Promise<SpaceRow[]> {
    return (await this.spaceTable.list()).map((r) => r.row)
  }

  private async spaceRow(spaceId: string): Promise<SpaceRow | undefined> {
    return this.spaceTable.get(spaceId)
  }

  private async writeRow(row: SpaceRow) {
    await this.spaceTable.put(row.spaceId, row)
  }

  private async openSpace(spaceId: string) {
    if (this.spaces.has(spaceId)) return
    if (this.residency.closed.has(spaceId) || this.opening.has(spaceId)) {
      if (!(await this.reopen(spaceId))) throw new SvcError('space.not_found', 'the space could not be opened', { spaceId })
      return
    }
    const pending = this.loading.get(spaceId)
    if (pending) return pending.held
    this.hold(await SpaceEngine.open(this.replicaDeps, spaceId, this.deps.accountKey, this.spaceOptions))
  }

  // ------------------------------------------------------------------ residency (residency.ts)

  /**
   * Opens a listed space that is closed (not opened yet, or closed under the budget): held and
   * announced once its rows are in. True once held; false when the open failed, which leaves it
   * closed and is logged here (a route then answers `space.not_found`, as for a failed load).
   */
  private reopen(spaceId: string): Promise<boolean> {
    const pending = this.opening.get(spaceId)
    if (pending) return pending.held
    if (!this.residency.closed.has(spaceId)) return this.loaded(spaceId).then(() => this.spaces.has(spaceId))
    this.residency.closed.delete(spaceId)
    let replicaDone!: () => void
    const replicaReady = new Promise<void>((r) => (replicaDone = r))
    const held = this.openInBackground(spaceId)
      .finally(replicaDone)
      .then(() => this.loading.get(spaceId)?.held)
      .then(() => {
        if (!this.spaces.has(spaceId) && !this.closed) throw new SvcError('internal', 'the space did not load', { spaceId })
        return true
      })
      .catch((err: unknown) => {
        if (!this.closed) this.residency.closed.add(spaceId)
        this.log.warn('opening a space failed', { spaceId, err: errField(err) })
        return false
      })
      .finally(() => {
        this.opening.delete(spaceId)
        this.enforceBudget().catch((err: unknown) => this.log.warn('closing spaces over the memory budget failed', { err: errField(err) }))
      })
    this.opening.set(spaceId, { replica: replicaReady, held })
    return held
  }

  /** Opens closed spaces, most recently used first, while the open ones fill under half the budget; checks the budget from now on. */
  private startBackground() {
    const tried = new Set<string>()
    const run = async () => {
      for (;;) {
        if (this.closed) return
        const id = this.residency.nextToOpen(this.openBytes(), tried)
        if (id === undefined) return
        tried.add(id)
        // A failure is logged by reopen; the next one is tried.
        await this.reopen(id)
        await new Promise<void>((r) => this.deps.env.setTimer(0, r))
      }
    }
    this.background = run()
    const sweep = () => {
      this.stopSweeps = this.deps.env.setTimer(
        this.residency.sweepMs,
        () => {
          if (this.closed) return
          this.enforceBudget()
            .catch((err: unknown) => this.log.warn('closing spaces over the memory budget failed', { err: errField(err) }))
            .finally(sweep)
        },
        true,
      )
    }
    if (this.residency.budget) sweep()
  }

  /** The estimated heap of every open space (SpaceEngine.memoryEstimate). */
  openBytes(): number {
    let n = 0
    for (const e of this.spaces.values()) n += e.memoryEstimate()
    for (const l of this.loading.values()) n += l.engine.memoryEstimate()
    return n
  }

  /** The budget, what the open spaces hold by estimate, and how many spaces are open and closed. */
  residencyStats(): { budgetBytes: number | null; openBytes: number; open: number; closed: number } {
    return { budgetBytes: this.residency.budget?.bytes ?? null, openBytes: this.openBytes(), open: this.spaces.size, closed: this.residency.closed.size }
  }

  /** Marks a space used now (requests, syncs): the budget closes the least recently used first. */
  touch(spaceId: string): void {
    this.residency.touch(spaceId, this.deps.env.now())
  }

  /**
   * Keeps a space open whatever the budget until the returned function is called (a request,
   * agents). `acrossRestarts`: the next start opens it first too, unless released with `true`
   * (the holder no longer needs it, rather than stopping with the account).
   */
  keepOpen(spaceId: string, acrossRestarts = false): (dropped?: boolean) => void {
    return this.residency.pin(spaceId, acrossRestarts)
  }

  /** True when a listed space is not held now: closed (it opens on demand) or opening. */
  isClosed(spaceId: string): boolean {
    return this.residency.closed.has(spaceId) || this.opening.has(spaceId)
  }

  /**
   * The engine of a listed space, opened first when it is closed (sync, the directory,
   * services outside a route); undefined for a space not listed here.
   */
  async opened(spaceId: string): Promise<SpaceEngine | undefined> {
    this.touch(spaceId)
    if (this.residency.closed.has(spaceId) || this.opening.has(spaceId)) await this.reopen(spaceId)
    else await this.loaded(spaceId)
    return this.held(spaceId)
  }

  /**
   * Closes the spaces past the budget (residency.ts `victims`): not the tech space, a
   * one-to-one, a pinned space or one a live query follows (a listener on its changes besides
   * the account's own).
   */
  async enforceBudget(): Promise<string[]> {
    if (!this.residency.budget || this.closed) return []
    const candidates: Array<{ spaceId: string; bytes: number }> = []
    let total = 0
    for (const [id, e] of this.spaces) {
      const bytes = e.memoryEstimate()
      total += bytes
      if (e.events.count('change') > 1 || this.pairIds.has(id) || !e.rowsReady) continue
      candidates.push({ spaceId: id, bytes })
    }
    for (const l of this.loading.values()) total += l.engine.memoryEstimate()
    const victims = this.residency.victims(candidates, total, this.deps.env.now())
    for (const id of victims) await this.closeSpace(id)
    return victims
  }

  /** Closes one open space: its summary kept, its replica retired, its services closed (search saves its index). */
  private async closeSpace(spaceId: string): Promise<void> {
    const e = this.spaces.get(spaceId)
    const row = await this.spaceRow(spaceId)
    if (!e || !row || row.spaceType !== 'svc.space' || rowStatus(row) === 'deleted') return
    await this.residency.keep(spaceId, this.summaryOf(e))
    // Checked again: a request may have opened or used it meanwhile.
    if (this.spaces.get(spaceId) !== e || this.deps.env.now() - this.residency.lastUsed(spaceId) < this.residency.minIdleMs) return
    this.spaces.delete(spaceId)
    this.residency.closed.add(spaceId)
    this.events.emit('spacesClosed', { spaceIds: [spaceId] })
    await e.replica.retire()
    await e.close()
    this.log.debug('closed an idle space under the memory budget', { spaceId })
  }

  private summaryOf(e: SpaceEngine): Omit<SpaceSummary, 'lastUsed'> {
    const acl = e.replica.acl.current()
    const moduleFields: Partial<SpaceRowFields> = {}
    for (const m of this.modules.list) if (m.spaceRow) Object.assign(moduleFields, m.spaceRow(e))
    return {
      ...e.indexFields(),
      spaceIndexObjectId: e.spaceIndexObjectId,
      author: acl.owner ?? '',
      ownRole: acl.roleOf(this.accountId),
      moduleFields,
      ...spaceDirectoryPart(e, this.accountId),
    }
  }

  /** Closed spaces whose summary keeps push keys (the push module renews their registrations). */
  closedPushKeys(): Array<{ spaceId: string; spaceKey: string }> {
    const out: Array<{ spaceId: string; spaceKey: string }> = []
    for (const id of this.residency.closed) {
      const k = this.residency.summary(id)?.moduleFields.push
      if (k) out.push({ spaceId: id, spaceKey: k.spaceKey })
    }
    return out
  }

  /**
   * The summary of a listed space not held now (closed, or opening again), or undefined: what
   * listing it and the identity directory read. It is the state the space closed with, which
   * nothing moves until it is held again.
   */
  closedSummary(spaceId: string): SpaceSummary | undefined {
    return this.spaces.has(spaceId) || this.oneToOne.dormant(spaceId) ? undefined : this.residency.summary(spaceId)
  }

  /**
   * Opens a space's replica now and its rows after: held and announced once they are in (a
   * space whose row was deleted meanwhile, or an account closed meanwhile, is not). A load that
   * fails leaves the space unheld, as a failed `open` would.
   */
  private async openInBackground(spaceId: string) {
    const engine = await SpaceEngine.openLoading(this.replicaDeps, spaceId, this.deps.accountKey, this.spaceOptions)
    const entry = { engine, held: Promise.resolve() }
    entry.held = engine.rowsLoaded.then(
      () => {
        if (this.loading.get(spaceId) !== entry) return
        this.loading.delete(spaceId)
        if (this.closed || this.spaces.has(spaceId)) return
        this.hold(engine)
        this.announce([spaceId])
      },
      () => {
        if (this.loading.get(spaceId) === entry) this.loading.delete(spaceId)
      },
    )
    this.loading.set(spaceId, entry)
  }

  /** Spaces opened in the background whose rows still load (their index work shows in processes). */
  loadingSpaces(): SpaceEngine[] {
    return [...this.loading.values()].map((l) => l.engine)
  }

  /**
   * Resolves once a listed space is held: a closed one opens now, ahead of the background
   * opening (at once for any other id).
   */
  async loaded(spaceId: string): Promise<void> {
    this.touch(spaceId)
    const opening = this.opening.get(spaceId)
    if (opening) await opening.held
    else if (this.residency.closed.has(spaceId)) await this.reopen(spaceId)
    else await this.loading.get(spaceId)?.held
  }

  /** Resolves once a listed space's engine exists (its rows may still load): what `searchable` needs. */
  async replicaOpen(spaceId: string): Promise<void> {
    this.touch(spaceId)
    // Not waited for here (it never rejects): the search answers from the saved index meanwhile.
    if (this.residency.closed.has(spaceId)) void this.reopen(spaceId)
    await this.opening.get(spaceId)?.replica
  }

  /**
   * Resolves once every space opening now is held (or failed to load). Closed spaces stay
   * closed: readers of every space use their summaries (listSpaces, the directory).
   */
  async opensSettled(): Promise<void> {
    while (this.loading.size || this.opening.size) {
      await Promise.all([...this.loading.values()].map((l) => l.held))
      await Promise.all([...this.opening.values()].map((o) => o.held))
    }
  }

  /** Resolves once the background opening by recency has stopped (every space open, or the budget half full) and every open space is held. */
  async allLoaded(): Promise<void> {
    await this.background
    await this.opensSettled()
  }

  /**
   * The engine a search of a space uses: the held one, or one still loading its rows (its
   * search answers from the saved index; sync/modules/search/service.ts). Codes as `space()`.
   */
  searchable(spaceId: string): SpaceEngine {
    const pending = this.loading.get(spaceId)
    if (!pending) return this.space(spaceId)
    this.sharing.gate(spaceId)
    return pending.engine
  }

  private async infoOf(row: SpaceRow): Promise<SpaceInfo> {
    const status = rowStatus(row)
    const engine = this.spaces.get(row.spaceId)
    const kept = this.closedSummary(row.spaceId)
    if (kept) return this.infoOfClosed(row, kept)
    const idx = engine?.indexFields() ?? { name: '', description: '', iconCid: '' }
    if (row.spaceType === 'svc.onetoone' && !idx.name) idx.name = this.oneToOne.displayName(row)
    const acl = engine?.replica.acl.current()
    const settingsRec = await this.tech.replica.getRecord(this.techObjectId, TECH_DS.settings, row.spaceId)
    const moduleFields: Partial<SpaceRowFields> = {}
    if (engine) for (const m of this.modules.list) if (m.spaceRow) Object.assign(moduleFields, m.spaceRow(engine))
    return {
      ...moduleFields,
      id: row.spaceId,
      ...idx,
      spaceIndexObjectId: engine?.spaceIndexObjectId ?? '',
      createdAt: row.createdAt,
      spaceType: row.spaceType,
      author: acl?.owner ?? '',
      ownRole: acl ? acl.roleOf(this.accountId) : 'none',
      settings: ((settingsRec && !settingsRec.deleted ? settingsRec.value : undefined) ?? {}) as Record<string, Json>,
      derived: row.derived,
      status,
    }
  }

  private async infoOfClosed(row: SpaceRow, k: SpaceSummary): Promise<SpaceInfo> {
    const settingsRec = await this.tech.replica.getRecord(this.techObjectId, TECH_DS.settings, row.spaceId)
    return {
      ...k.moduleFields,
      id: row.spaceId,
      name: k.name,
      description: k.description,
      iconCid: k.iconCid,
      spaceIndexObjectId: k.spaceIndexObjectId,
      createdAt: row.createdAt,
      spaceType: row.spaceType,
      author: k.author,
      ownRole: k.ownRole,
      settings: ((settingsRec && !settingsRec.deleted ? settingsRec.value : undefined) ?? {}) as Record<string, Json>,
      derived: row.derived,
      status: rowStatus(row),
    }
  }

  async close(): Promise<void> {
    this.stopSweeps()
    // Every open listed space's summary is kept, with when it was last used: the next start
    // lists them all and opens them by recency without opening any first.
    if (this.residency.budget || this.deps.spacesInBackground) {
      for (const [id, e] of this.spaces) {
        if (this.oneToOne.dormant(id) || !e.rowsReady) continue
        await this.residency.keep(id, this.summaryOf(e)).catch((err: unknown) => this.log.warn('keeping a space summary failed', { spaceId: id, err: errField(err) }))
      }
    }
    await Promise.allSettled([...this.opening.values()].map((o) => o.held))
    this.closed = true
    // Loads still reading rows finish first: the storage closes after this.
    const loading = [...this.loading.values()].map((l) => l.engine)
    await Promise.allSettled(loading.map((e) => e.rowsLoaded))
    // The spaces' services before the account's: a space service may use an account one.
    await Promise.allSettled([...new Set([...this.spaces.values(), ...loading, this.tech])].map((e) => e.close()))
    await this.services.close()
    this.stopProfiles()
    this.scopedValues.close()
    this.spaces.clear()
  }
}

/** A stored `spaces` record is a row when it names its space (every writer sets spaceId). */
const isSpaceRow = (v: JsonObject): boolean => typeof v.spaceId === 'string'

export function rowStatus(row: SpaceRow): SpaceStatus {
  return row.deletedAt ? 'deleted' : (row.status ?? 'active')
}

/** Settings are single-level scalar keys (spec "Space" settings). */
const SETTING_KEY_RE = /^[A-Za-z0-9_-]{1,128}$/

const s = (v: Json | undefined) => (typeof v === 'string' ? v : '')
