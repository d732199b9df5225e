import { type ErrorCode, SvcError, withIndex } from '../core/errors.ts'
import { writeRefusal } from '../replica/write-refusal.ts'
import { SerialQueue } from '../core/serial-queue.ts'
import type { KeyPair } from '../crypto/keys.ts'
import type { Json, JsonObject, Op } from '../crdt/ops.ts'
import type { UserOp } from '../crdt/resolve.ts'
import { derivedObjectId, SpaceReplica, type MaterializedRecord, type ReplicaDeps } from '../replica/space-replica.ts'
import { modifyRecords } from './modify.ts'
import { ROW_ALIAS } from './history.ts'
import { AUTO_SORT } from '../query/sorted-index.ts'
import type { CommitInfo, WriteResult } from '../replica/types.ts'
import { InMemoryIndex, type QuerySource } from '../query/source.ts'
import { DatasetCache } from './dataset-cache.ts'
import { idsNamedBy } from '../query/id-lookup.ts'
import { objectRowDoc, recordDoc, isJsonObject, asStringArray, type Doc } from './rows.ts'
import { BUILTIN_TYPE_IDS, ROW_DS, ROW_ID, SPACE_INDEX_SEED, spacePolicy } from './schema.ts'
import { Emitter } from '../core/emitter.ts'
import { OBJECT_CREATE_PAGE } from '../core/limits.ts'
import { errField, silentLogger, type Logger } from '../core/log.ts'
import type { Env } from '../core/env.ts'
import { ModuleSet, type AnyModule } from './module.ts'
import { SpaceServices } from './services.ts'
import type { ObjectCreateBody, ScopedValueStore } from './types/index.ts'
import type { AccountData } from './account-data.ts'

/** How a space opens: the account's modules and its store of account- and local-scope values. */
export interface SpaceOptions {
  modules?: ModuleSet | readonly AnyModule[]
  /** Default: an in-memory store (a bare engine, as in tests). */
  scopedValues?: ScopedValueStore
  /** The account's private datasets for modules (default: in memory). */
  accountData?: AccountData
  /** Where the space and its modules' services log (default: nowhere). */
  log?: Logger
}

/** What moved in a module's overlay (SpaceEngine.announceOverlay). */
export interface OverlayMoves {
  /** Object rows whose overlay moved, with the ops live object queries frame. */
  rows?: Map<string, Array<{ type: '$set' | '$unset'; path: string; value?: unknown }>>
  /** Per object and dataset, records whose overlay moved, with their frame ops. */
  records?: SpaceChange['records']
}

export interface ModifyBody {
  objectId: string
  dataset: string
  records: Array<{ id: string; upsert?: boolean; ops: UserOp[] }>
  traceIds?: string[]
}

/** A change the engine announces to live queries: which object rows and records moved. */
export interface SpaceChange {
  versionId: string
  /** Object ids whose row changed or was deleted (check `objectDoc`). */
  objects: Set<string>
  /** Per object, the datasets touched, with each record's applied ops. */
  records: Map<string, Map<string, Map<string, Array<{ type: '$set' | '$unset'; path: string; value?: unknown }>>>>
  /** Objects whose records must be re-read wholesale. */
  reloaded: Set<string>
  /** Per object, the ops merge applied to its row (live object queries frame them). */
  rowOps: Map<string, Array<{ type: '$set' | '$unset'; path: string; value?: unknown }>>
  /** Written here, not received from a peer (push sends only for its own writes). Absent on overlay moves. */
  local?: boolean
}

/** What a space engine announces (`engine.events`); the account engine forwards them all. */
export interface SpaceEvents {
  /** Object rows and records moved (after the object index caught up and module hooks ran). */
  change: SpaceChange
  /** The space's ACL moved (members, roles, keys): `versionId` is the commit's. */
  members: { versionId: string }
}

/**
 * One space as the API sees it: the replica plus the object index (every live object row,
 * kept current from commits) and the rules of objects and the data plane. Routes call these
 * methods and map results; no rule lives in a route.
 */
export class SpaceEngine {
  readonly spaceIndexObjectId: string
  /**
   * Every live object row, with equality indexes on the paths object queries filter by most
   * (`id`, `core.types`, authorship), so `{S}/objects/query` visits only candidates; other
   * paths that equality filters keep using get an index on demand (OBJECT_AUTO_INDEX).
   */
  private readonly rows = new InMemoryIndex(OBJECT_INDEX_PATHS, [], { autoIndex: OBJECT_AUTO_INDEX, autoSort: AUTO_SORT })
  /** Changes and ACL moves, in commit order (live feeds, the directory and the account listen). */
  readonly events: Emitter<SpaceEvents>
  /** The space's logger (SpaceOptions.log); its modules' services log through children of it. */
  readonly log: Logger
  /** The commit feed: each commit's row refresh, hooks and events, in commit order. */
  private readonly feed = new SerialQueue()
  /** Documents of recently queried datasets, kept current below (dataset-cache.ts). */
  private readonly datasets = new DatasetCache()
  /** The space's services (types, bundles, one per module), built when the space opens. */
  readonly services: SpaceServices
  /**
   * Resolves once every object row is in the object index. Services are built before the rows
   * are read; one that reads rows on its own schedule (a timer) waits for this first, since
   * over storage that answers in later tasks (IndexedDB) its timer fires while they load.
   */
  readonly rowsLoaded: Promise<void>
  private rowsAreLoaded = false
  private readonly rowsDone: () => void
  private readonly rowsFailed: (err: unknown) => void

  private constructor(
    readonly replica: SpaceReplica,
    spaceIndexObjectId: string,
    readonly modules: ModuleSet,
    /** Clock and randomness of this space's services (a simulated peer passes its own). */
    readonly env: Env,
    opts: SpaceOptions = {},
  ) {
    this.spaceIndexObjectId = spaceIndexObjectId
    this.log = opts.log ?? silentLogger
    this.events = new Emitter<SpaceEvents>(this.log)
    let done!: () => void
    let failed!: (err: unknown) => void
    this.rowsLoaded = new Promise((r, f) => ((done = r), (failed = f)))
    // A failed load rejects `open` (and `loaded` of a space opened in the background): here it
    // is only kept from going unhandled, and noted at debug.
    this.rowsLoaded.catch((err: unknown) => this.log.debug('loading the object rows failed', { spaceId: replica.spaceId, err: errField(err) }))
    this.rowsDone = () => {
      this.rowsAreLoaded = true
      done()
    }
    this.rowsFailed = failed
    this.services = new SpaceServices(this, modules, opts.scopedValues, opts.accountData)
  }

  /** The replica's deps with the merge pins of the space layer and of the modules. */
  static depsWithPolicy(deps: ReplicaDeps, modules: ModuleSet): ReplicaDeps {
    return { ...deps, policy: modules.policy(spacePolicy) }
  }

  /** Creates a space (owned by `owner`) with its space-index object. `seed` derives it. */
  static async create(deps: ReplicaDeps, owner: KeyPair, opts: { seed?: string; name?: string; description?: string; iconCid?: string } & SpaceOptions = {}): Promise<SpaceEngine> {
    const modules = ModuleSet.of(opts.modules)
    const replica = await SpaceReplica.create(SpaceEngine.depsWithPolicy(deps, modules), owner, { seed: opts.seed })
    const engine = await SpaceEngine.attach(replica, modules, deps.env, opts)
    await engine.rowsLoaded
    const core: JsonObject = { types: ['spaceIndex'] }
    if (opts.name !== undefined) core.name = opts.name
    if (opts.description !== undefined) core.description = opts.description
    if (opts.iconCid !== undefined) core.icon = opts.iconCid
    await engine.write(
      engine.spaceIndexObjectId,
      Object.entries(core).map(([k, v]) => ({ op: 'set', ds: ROW_DS, id: ROW_ID, path: `core.${k}`, value: v })),
    )
    return engine
  }

  static async open(deps: ReplicaDeps, spaceId: string, me: KeyPair, opts: SpaceOptions = {}): Promise<SpaceEngine> {
    const e = await SpaceEngine.openLoading(deps, spaceId, me, opts)
    await e.rowsLoaded
    return e
  }

  /**
   * Opens a space and returns once its replica has loaded (ACL, trees), before the object rows
   * are read: they load in the commit feed, so commits and `settled()` wait for them, and the
   * synchronous readers (`objectDoc`, `objectDocs`, `objectSource`, ...) see only part of them
   * until `rowsLoaded` resolves. The caller gates those readers on it; what may serve earlier
   * (a search, from its own saved index) does so.
   */
  static async openLoading(deps: ReplicaDeps, spaceId: string, me: KeyPair, opts: SpaceOptions = {}): Promise<SpaceEngine> {
    const modules = ModuleSet.of(opts.modules)
    return SpaceEngine.attach(await SpaceReplica.open(SpaceEngine.depsWithPolicy(deps, modules), spaceId, me), modules, deps.env, opts)
  }

  private static async attach(replica: SpaceReplica, modules: ModuleSet, env: Env, opts: SpaceOptions): Promise<SpaceEngine> {
    // The space index is derived: its id is known before the space's content has arrived.
    const indexId = derivedObjectId(replica.spaceId, SPACE_INDEX_SEED)
    if (replica.known && !replica.treeMeta(indexId)) await replica.createObject({ seed: SPACE_INDEX_SEED })
    // Not known yet (sync fills it): its index root is accepted when it arrives.
    else if (!replica.treeMeta(indexId)) await replica.expectDerived(SPACE_INDEX_SEED)
    const e = new SpaceEngine(replica, indexId, modules, env, opts)
    // The row load is the feed's first task: a commit during it is announced after it, and its
    // refresh re-reads what the load may have read before the commit.
    const trees = replica.treeIds()
    e.feed.run(() => e.loadRows(trees)).then(e.rowsDone, e.rowsFailed)
    // Commits are announced in order: each waits for the previous one's row refresh.
    replica.addCommitListener((info) => {
      e.feed.run(() => e.onCommit(info)).catch((err: unknown) => e.log.warn('refreshing rows after a commit failed', { spaceId: e.spaceId, err: errField(err) }))
    })
    return e
  }

  /**
   * What this open space is estimated to hold in the heap, for the account's memory budget
   * (AccountEngine): a fixed part, each object's row in the object index and its tree meta, the
   * replica's record cache, the datasets cached for queries and the module services' own
   * (a loaded search index). The per-item figures are measured heap (docs/performance.md).
   */
  memoryEstimate(): number {
    return (
      SPACE_BASE_BYTES +
      Math.max(this.rows.size, this.replica.treeCount) * OBJECT_BYTES +
      this.replica.memory().cachedRecordBytes +
      this.datasets.size * DOC_BYTES +
      this.services.memoryBytes()
    )
  }

  /** True once every object row is in the object index (`rowsLoaded`). */
  get rowsReady(): boolean {
    return this.rowsAreLoaded
  }

  /**
   * Every row, read ROW_READ_CHUNK at a time: a read per object made opening a 10k-object
   * space on IndexedDB take seconds (bench/browser.ts, coldOpenMs). The next chunk is read
   * while this one enters the index; between chunks other work runs (a search of a space still
   * loading, requests of other spaces).
   */
  private async loadRows(trees: readonly string[]) {
    const replica = this.replica
    const read = (i: number) => (i < trees.length ? replica.getRecordsOf(trees.slice(i, i + ROW_READ_CHUNK), ROW_DS, ROW_ID) : undefined)
    let next = read(0)
    for (let i = 0; next; i += ROW_READ_CHUNK) {
      const rows = await next
      next = read(i + ROW_READ_CHUNK)
      for (let j = 0; j < rows.length; j++) await this.refreshRow(trees[i + j], { rec: rows[j] })
      if (next) await this.env.yield?.()
    }
  }

  get spaceId() {
    return this.replica.spaceId
  }

  // ------------------------------------------------------------------ writes

  /**
   * Writes merge ops to an object as one change. Resolves once the change is readable
   * everywhere: stored, in the object index, seen by the modules' commit hooks and announced
   * to live feeds (a caller never needs `settled()` after its own write). Not for use inside a
   * commit hook or change listener awaiting it (it would wait for itself).
   */
  async write(objectId: string, ops: Op[], traceIds?: string[]): Promise<WriteResult> {
    return this.readable(await this.replica.write(objectId, ops, traceIds))
  }

  /** Creates an object's tree (`seed` derives its id); resolves once readable, like `write`. */
  async createTree(opts: { seed?: string } = {}): Promise<string> {
    // A derived root carries no author, so the replica would take it from a reader: refused here,
    // before anything is applied, like every other write of a reader or guest.
    if (!this.replica.acl.current().canWrite(this.replica.me)) throw writeRefusal(this.replica.acl.current(), this.replica.me)
    return this.readable(await this.replica.createObject(opts))
  }

  /** `value` once every commit so far (the caller's included) went through the commit feed. */
  private async readable<T>(value: T): Promise<T> {
    await this.settled()
    return value
  }

  // ------------------------------------------------------------------ space index

  /** Name, description and icon, owned by the space-index object. */
  indexFields(): { name: string; description: string; iconCid: string } {
    const core = (this.rows.get(this.spaceIndexObjectId)?.core ?? {}) as JsonObject
    return { name: str(core.name), description: str(core.description), iconCid: str(core.icon) }
  }

  /** Absent keeps, empty string clears (spec PATCH {S}). */
  async setIndexFields(fields: { name?: string; description?: string; iconCid?: string }): Promise<void> {
    const ops: Op[] = []
    const map: Record<string, string | undefined> = { name: fields.name, description: fields.description, icon: fields.iconCid }
    for (const [k, v] of Object.entries(map)) {
      if (v === undefined) continue
      ops.push(v === '' ? { op: 'unset', ds: ROW_DS, id: ROW_ID, path: `core.${k}` } : { op: 'set', ds: ROW_DS, id: ROW_ID, path: `core.${k}`, value: v })
    }
    if (ops.length === 0) throw new SvcError('request.missing_field', 'give at least one of name, description, iconCid')
    await this.write(this.spaceIndexObjectId, ops)
  }

  // ------------------------------------------------------------------ objects

  /** Known type ids: the built-ins and every type object of the space. */
  typeExists(typeId: string): boolean {
    if (BUILTIN_TYPE_IDS.has(typeId)) return true
    const row = this.rows.get(typeId)
    return !!row && asStringArray((row.core as JsonObject | undefined)?.types).includes('type')
  }

  /**
   * Creates an object carrying `types` with `initialProperties` grouped by type key (`core`
   * for the universal group), under the rules of spec "Objects" (types/object-create.ts):
   * reserved carriers refused, values checked like a typed set, account- and local-scope
   * values kept out of the row. What `POST {S}/objects` does, so a page calling this directly
   * meets the same rules.
   */
  createObject(opts: ObjectCreateBody = {}): Promise<string> {
    return this.services.types.createObject(opts)
  }

  /**
   * Creates an object per entry, each under the rules of `createObject`, all or none (the first
   * entry that fails answers its error with `details.index`); the rows are written a page at a
   * time (`createObjectRows`). What `POST {S}/objects/batch` does. Returns the ids in order.
   */
  createObjects(bodies: readonly ObjectCreateBody[]): Promise<string[]> {
    return this.services.types.createObjects(bodies)
  }

  /**
   * Creates an object whose row holds exactly `initialProperties`, with no property rules
   * (only: known types, groups of `core` or a carried type). For rows the engine itself defines,
   * such as a type object's definition under `type`, which no property describes.
   * Nothing else is appended server-side.
   */
  async createObjectRow(opts: ObjectRowBody = {}): Promise<string> {
    const ops = this.rowOps(opts)
    // As createObjectRows does for each of its objects: the root and the row's change, signed
    // and applied in one turn of the serial queue, one commit and one trip through the commit
    // feed (a root, then a write, took two of each: about a third of a create's CPU).
    if (!this.replica.acl.current().canWrite(this.replica.me)) throw writeRefusal(this.replica.acl.current(), this.replica.me)
    const [objectId] = await this.replica.createObjects([ops])
    return this.readable(objectId)
  }

  /**
   * Creates an object per entry of `rows`, each under the rules of `createObjectRow`, all or
   * none: every entry is checked before anything is written (an error names the entry in
   * `details.index`). Written OBJECT_CREATE_PAGE objects per turn of the replica's serial queue,
   * each object its root and one change setting its row (SpaceReplica.createObjects); resolves
   * once every one is readable, like `write`. Returns the ids in input order.
   */
  async createObjectRows(rows: readonly ObjectRowBody[]): Promise<string[]> {
    const ops = rows.map((row, index) => atIndex(index, () => this.rowOps(row)))
    // A reader's or guest's create is refused before anything is signed, as `createTree` does.
    if (!this.replica.acl.current().canWrite(this.replica.me)) throw writeRefusal(this.replica.acl.current(), this.replica.me)
    const ids: string[] = []
    for (let i = 0; i < ops.length; i += OBJECT_CREATE_PAGE) ids.push(...(await this.replica.createObjects(ops.slice(i, i + OBJECT_CREATE_PAGE))))
    return this.readable(ids)
  }

  /** The ops that write a new object's row, once its types and groups are checked (createObjectRow). */
  private rowOps(opts: ObjectRowBody): Op[] {
    const types = opts.types ?? []
    for (const t of types) if (!this.typeExists(t)) throw new SvcError('type.not_found', 'unknown type', { typeId: t })
    for (const key of Object.keys(opts.initialProperties ?? {})) {
      if (key !== 'core' && !types.includes(key))
        throw new SvcError('request.invalid_field', 'initialProperties groups must be core or a carried type', { field: `initialProperties.${key}` })
    }
    const ops: Op[] = [{ op: 'set', ds: ROW_DS, id: ROW_ID, path: 'core.types', value: [...new Set(types)] }]
    for (const [group, values] of Object.entries(opts.initialProperties ?? {})) {
      for (const [prop, value] of Object.entries(values)) {
        if (group === 'core' && prop === 'types') continue
        ops.push({ op: 'set', ds: ROW_DS, id: ROW_ID, path: `${group}.${prop}`, value })
      }
    }
    return ops
  }

  /** Tombstones the object; its tree stays only as the tombstone. */
  async deleteObject(objectId: string): Promise<WriteResult> {
    this.requireObject(objectId, 'sdk.not_found')
    if (this.replica.treeMeta(objectId)?.derived) throw new SvcError('sdk.not_found', 'derived objects cannot be deleted', { objectId })
    return this.write(objectId, [{ op: 'deleteObject' }])
  }

  objectDoc(objectId: string): Doc | undefined {
    return this.rows.get(objectId) as Doc | undefined
  }

  /** Every live object row (the objects collection). */
  objectDocs(): Iterable<Doc> {
    return this.rows as Iterable<unknown> as Iterable<Doc>
  }

  /** The object rows as an indexed QuerySource (live, kept current by the commit feed). */
  objectSource(): QuerySource {
    return this.rows
  }

  requireObject(objectId: string, code: ErrorCode = 'object.not_found'): Doc {
    const row = this.rows.get(objectId) as Doc | undefined
    if (!row) throw new SvcError(code, 'object not found', { objectId })
    return row
  }

  /** Records of one dataset of one object, as query documents (tombstones left out). */
  async datasetDocs(objectId: string, dataset: string): Promise<Doc[]> {
    this.requireObject(objectId)
    const recs = await this.replica.listRecords(objectId, dataset)
    return this.services.overlayRecords(objectId, dataset, recs.filter((r) => !r.deleted && r.value !== undefined).map(recordDoc))
  }

  /**
   * The same documents as `datasetDocs`, as a query source held between queries: the first
   * query of a dataset reads it in full; later ones reuse what the commit feed keeps current.
   * Filled in the feed's lane, so no commit can fall between the read and the first update.
   * Held documents are never mutated: callers only read them.
   */
  async datasetSource(objectId: string, dataset: string): Promise<QuerySource> {
    this.requireObject(objectId)
    const held = this.datasets.get(objectId, dataset)
    if (held) return held
    return this.feed.run(async () => this.datasets.get(objectId, dataset) ?? this.datasets.put(objectId, dataset, await this.datasetDocs(objectId, dataset)))
  }

  /**
   * The source a query of a dataset with this filter runs on: the held documents when the
   * dataset is held; when the filter names its ids outright (idsNamedBy), only those records,
   * read by key and not held (a lookup of one record right after a restart does not read a
   * dataset of 100,000); else datasetSource.
   */
  async datasetSourceFor(objectId: string, dataset: string, filter: unknown): Promise<QuerySource> {
    this.requireObject(objectId)
    const held = this.datasets.get(objectId, dataset)
    if (held) return held
    const ids = idsNamedBy(filter)
    if (!ids) return this.datasetSource(objectId, dataset)
    const docs: Doc[] = []
    for (const id of ids) {
      const d = await this.recordDoc(objectId, dataset, id)
      if (d) docs.push(d)
    }
    return new InMemoryIndex(['id'], docs)
  }

  /** Brings held datasets up to date with records that moved (written, or overlays moved). */
  private async refreshHeld(records: SpaceChange['records']) {
    for (const [objectId, perDs] of records) {
      for (const [dataset, perRecord] of perDs) {
        if (!this.datasets.holds(objectId, dataset)) continue
        for (const id of perRecord.keys()) this.datasets.update(objectId, dataset, id, await this.recordDoc(objectId, dataset, id))
      }
    }
  }

  async recordDoc(objectId: string, dataset: string, recordId: string): Promise<Doc | undefined> {
    const r = await this.replica.getRecord(objectId, dataset, recordId)
    if (!r || r.deleted || r.value === undefined) return undefined
    return (await this.services.overlayRecords(objectId, dataset, [recordDoc(r)]))[0]
  }

  // ------------------------------------------------------------------ data plane

  /**
   * Per-record ops as one change; ops a handler drops come back in `rejections`. The field rules
   * of declared datasets are not applied here (module services write their own collections
   * through this): `POST {S}/modify` is `services.types.modify`, which applies them.
   */
  async modify(body: ModifyBody): Promise<WriteResult> {
    this.requireObject(body.objectId)
    if (body.dataset === ROW_DS || body.dataset === ROW_ALIAS) throw new SvcError('dataset.unknown', 'the object row is written through the properties routes')
    return this.readable(
      await modifyRecords(
        this.replica,
        body.objectId,
        body.dataset,
        body.records.map((r) => ({ id: r.id, ops: r.ops })),
        body.traceIds,
      ),
    )
  }

  /** Tombstones records, without the `deleteBy` rule of declared datasets (`services.types.deleteRecords` applies it). */
  async deleteRecords(body: { objectId: string; dataset: string; recordIds: string[] }): Promise<WriteResult> {
    this.requireObject(body.objectId)
    const res = await this.write(
      body.objectId,
      body.recordIds.map((id) => ({ op: 'delete' as const, ds: body.dataset, id })),
    )
    res.recordIds = [...body.recordIds]
    return res
  }

  /** Sets values under `{typeKey}.{propId}` of an object's row. */
  async setRowValues(objectId: string, typeKey: string, values: Record<string, Json>): Promise<WriteResult> {
    this.requireObject(objectId)
    const ops: Op[] = Object.entries(values).map(([prop, value]) =>
      value === null ? { op: 'unset', ds: ROW_DS, id: ROW_ID, path: `${typeKey}.${prop}` } : { op: 'set', ds: ROW_DS, id: ROW_ID, path: `${typeKey}.${prop}`, value },
    )
    if (ops.length === 0) throw new SvcError('request.missing_field', 'give at least one property value')
    return this.write(objectId, ops)
  }

  // ------------------------------------------------------------------ change feed

  /**
   * Resolves once every commit so far has reached the object index and the listeners. Writes
   * through the engine already wait for it; readers need it only after an ingest (sync).
   */
  settled(): Promise<void> {
    return this.feed.run(() => undefined)
  }

  /**
   * Closes the modules' services of this space (those with a `close`: the search index saves
   * what it holds) once every commit so far has reached their hooks. The replica and its
   * storage stay open: the account closes those after its spaces.
   */
  async close(): Promise<void> {
    await this.settled().catch((err: unknown) => this.log.debug('waiting for pending commits before closing failed', { spaceId: this.spaceId, err: errField(err) }))
    await this.services.close()
  }

  /** Re-reads an object's row into the index (`read`: its row record, already read). */
  private async refreshRow(objectId: string, read?: { rec: MaterializedRecord | undefined }) {
    const meta = this.replica.treeMeta(objectId)
    const rec = meta && !meta.deleted ? (read ? read.rec : await this.replica.getRecord(objectId, ROW_DS, ROW_ID)) : undefined
    if (rec && !rec.deleted && rec.value !== undefined) this.rows.upsert(await this.services.overlayRow(objectId, objectRowDoc(objectId, this.spaceId, rec)))
    else this.rows.remove(objectId)
  }

  /**
   * A module's overlay moved without a commit (the account read messages here or on another
   * of its devices): the rows are refreshed and the move is announced to live feeds like a
   * change, in commit order. Resolves once announced. Not for use inside a commit hook
   * awaiting it (it waits for the commit feed); a hook may call it without awaiting.
   */
  announceOverlay(moves: OverlayMoves): Promise<void> {
    return this.feed.run(async () => {
      const change: SpaceChange = {
        versionId: this.replica.versionId(),
        objects: new Set(),
        records: moves.records ?? (new Map() as SpaceChange['records']),
        reloaded: new Set(),
        rowOps: new Map(),
      }
      for (const [id, ops] of moves.rows ?? []) {
        if (!this.rows.get(id)) continue
        await this.refreshRow(id)
        change.objects.add(id)
        change.rowOps.set(id, ops)
      }
      if (change.objects.size === 0 && change.records.size === 0) return
      await this.refreshHeld(change.records)
      this.events.emit('change', change)
    })
  }

  private async onCommit(info: CommitInfo) {
    const change: SpaceChange = { versionId: info.versionId, objects: new Set(), records: new Map(), reloaded: new Set(info.rebuiltTrees), rowOps: new Map(), local: info.local }
    let acl = false
    for (const t of info.treeIds) {
      if (t === this.spaceId) {
        acl = true
        continue
      }
      const meta = this.replica.treeMeta(t)
      if (meta?.deleted || info.rebuiltTrees.includes(t)) change.objects.add(t)
    }
    for (const r of info.records) {
      if (r.ds === ROW_DS && r.id === ROW_ID) {
        change.objects.add(r.treeId)
        change.rowOps.set(r.treeId, [...(change.rowOps.get(r.treeId) ?? []), ...r.ops])
        continue
      }
      let perObj = change.records.get(r.treeId)
      if (!perObj) {
        perObj = new Map()
        change.records.set(r.treeId, perObj)
      }
      let perDs = perObj.get(r.ds)
      if (!perDs) {
        perDs = new Map()
        perObj.set(r.ds, perDs)
      }
      perDs.set(r.id, r.ops)
    }
    for (const o of change.objects) await this.refreshRow(o)
    // Module hooks first: what they derive is current when the change is announced.
    if (this.services.hasHooks) await this.services.committed(change)
    // After the hooks, so documents carry what they derived (a new message's unread flag).
    for (const o of change.objects) if (!this.rows.get(o)) this.datasets.dropObject(o)
    for (const o of change.reloaded) this.datasets.dropObject(o)
    await this.refreshHeld(change.records)
    this.events.emit('change', change)
    if (acl) this.events.emit('members', { versionId: info.versionId })
  }
}

/** What `createObjectRow` writes: the types an object carries and its row's values by group. */
export interface ObjectRowBody {
  types?: string[]
  initialProperties?: Record<string, Record<string, Json>>
}

function atIndex<T>(index: number, fn: () => T): T {
  try {
    return fn()
  } catch (err) {
    throw withIndex(err, index)
  }
}

/** Object row paths with an equality index (see SpaceEngine.rows). */
/** Object rows read per storage call when a space opens. */
const ROW_READ_CHUNK = 1_000

export const OBJECT_INDEX_PATHS = ['id', 'core.types', 'author', 'modifiedBy'] as const

/**
 * On-demand indexes of the object rows: a path gets one at its second equality lookup once the
 * space holds 1,000 rows (below that a scan costs well under a millisecond); at most 8 such
 * paths, so an index's memory (one Map slot per row and value) stays bounded.
 */
export const OBJECT_AUTO_INDEX = { minDocs: 1_000, afterLookups: 2, maxPaths: 8 } as const

const str = (v: Json | undefined): string => (typeof v === 'string' ? v : '')
export { isJsonObject }

/** Heap an open space holds besides its objects (services, ACL, keyring, feeds), measured. */
export const SPACE_BASE_BYTES = 64 * 1024
/** Heap an object holds while its space is open: its row in the object index and its tree meta, measured on small objects. */
export const OBJECT_BYTES = 2_600
/** Heap a document of a cached dataset holds. */
const DOC_BYTES = 1_000
