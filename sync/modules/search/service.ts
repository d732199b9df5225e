import { SerialQueue } from '../../core/serial-queue.ts'
import { errField, type Logger } from '../../core/log.ts'
import type { Json } from '../../crdt/ops.ts'
import type { ModuleContext } from '../../space/module.ts'
import type { Doc } from '../../space/rows.ts'
import type { SpaceChange } from '../../space/space-engine.ts'
import { catalogFromSig, readCatalog, recordText, rowKeysOf, rowOps, rowTexts, type Catalog } from './catalog.ts'
import { docKey } from './doc-key.ts'
import { FtsIndex, type IndexOp } from './fts-index.ts'
import { FtsStore, type FtsMeta } from './fts-store.ts'
import { SEARCH_LIMITS, SEARCH_SETTINGS } from './limits.ts'
import { IndexWork } from './processes.ts'
import { documentText, objectTexts } from './space-text.ts'
import { VectorIndexer, type EmbedderFactory } from './vector-indexer.ts'

export type IndexState = 'starting' | 'building' | 'ready' | 'disabled'

/**
 * The search index of one space. Commits only mark what moved (the hook must stay cheap: it
 * runs inside the commit feed); a drain, scheduled right after and serialized in `lane`,
 * re-reads what moved, updates minisearch and saves the step's operations as one delta
 * (fts-store.ts). A search first drains what is pending, so it sees every commit before it.
 *
 * The index is in memory only while something uses it (a search, a `$text` filter, the
 * vectors): minisearch costs about a kilobyte per document, and a daemon holds many spaces
 * most of which nobody searches. On start the saved index is kept on disk when it reflects
 * the replica's current version and the current catalog, and loaded at the first use;
 * otherwise it is rebuilt in the background (`index.fts.<spaceId>`), and searches wait for the
 * build. While it is not in memory a drain only saves its operations as deltas, and once
 * nothing has used it for `residentIdleMs` it leaves memory again.
 */
export class SearchIndex {
  state: IndexState = 'starting'
  /** The index in memory, or undefined while it stays on disk (see the class comment). */
  private mem?: FtsIndex
  catalog?: Catalog
  private meta?: FtsMeta
  private readonly store: FtsStore
  private readonly lane = new SerialQueue()
  private readonly dirtyRows = new Set<string>()
  private readonly dirtyRecords = new Map<string, Set<string>>()
  private readonly reload = new Set<string>()
  /**
   * Operations applied but not saved yet: a `$text` catch-up's, and a burst's until the drain
   * catches up (only then does the saved version move, so saving earlier would buy nothing).
   * Past the compaction bound they are dropped and `saveAsBase` set: a base is written instead.
   */
  private unsaved: IndexOp[] = []
  private saveAsBase = false
  private lastCommitAt = 0
  /**
   * The replica's version as of the last commit the hook saw (every commit up to it is in the
   * index or in the dirty sets): the version a save records. Stops moving once closed.
   */
  private lastVersion: string
  /**
   * The replica's version when this index began to follow its commits (the constructor runs
   * before the space listens to its replica, with no await between): every commit after it
   * reaches `committed`. A saved index of this version is current, whatever committed since.
   */
  private readonly openedVersion: string
  private scheduled = false
  private compactionScheduled = false
  /** Commits seen so far: a compaction waits for a pause with none (compactWhenIdle). */
  private commits = 0
  /** Uses of the in-memory index so far: it leaves memory after a pause with none (evictWhenIdle). */
  private uses = 0
  /** Something asked for the index in memory (a search, `$text`) since it last left it. */
  private wanted = false
  private evictionScheduled = false
  /** The load `warm` started, until it ends. */
  private warming?: Promise<void>
  /** Set by close: timers and hooks do nothing more, a running build stops. */
  private closed = false
  private closing?: Promise<void>
  /** The start's turn came (close waits for a start under way, not for its timer). */
  private startBegun = false
  private readonly started: Promise<void>
  readonly work: IndexWork
  readonly vectors: VectorIndexer
  /** Counters for tests and the bench: full builds run, loads from disk, and evictions from memory. */
  readonly stats = { builds: 0, loads: 0, evictions: 0 }
  private readonly log: Logger

  constructor(
    private readonly ctx: ModuleContext,
    embedders: EmbedderFactory,
  ) {
    this.log = ctx.log.child('search')
    this.store = new FtsStore(ctx.storage, ctx.space.spaceId)
    this.lastVersion = this.openedVersion = ctx.space.replica.versionId()
    this.work = new IndexWork(ctx.space.spaceId, () => ctx.space.env.now())
    this.vectors = new VectorIndexer(ctx, this, embedders, this.log)
    // After the space is built (the constructor runs while it is); its object rows may still be
    // loading then (see start).
    this.started = this.later().then(() => {
      // Closed before its first turn: nothing was loaded, so nothing is left to save.
      if (this.closed) return
      this.startBegun = true
      return this.lane.run(() => this.start())
    })
    this.started.catch((err: unknown) => this.failed('starting the search index failed', err))
    // Stopped at close: the account outlives a space closed under its memory budget, and its
    // emitter must not keep that space's engine alive.
    this.offSettings = ctx.account.onChange((touched) => {
      if (touched === 'reloaded' || touched.get('settings')?.includes(ctx.space.spaceId))
        void this.lane.run(() => this.readSettings(true)).catch((err: unknown) => this.failed('applying moved search settings failed', err))
    })
  }

  private readonly offSettings: () => void

  /** A background step failed: the index answers from what it has, and the user should know. */
  private failed(msg: string, err: unknown, level: 'debug' | 'warn' = 'warn'): void {
    this.log[level](msg, { spaceId: this.ctx.space.spaceId, err: errField(err) })
  }

  /** A turn of the space's clock (the simulator's event queue, the daemon's timers). */
  private later(ms = 0, background = false): Promise<void> {
    return new Promise((r) => {
      const cancel = this.ctx.space.env.setTimer(
        ms,
        () => {
          this.timers.delete(fire)
          r()
        },
        background,
      )
      // At close a waiting timer fires now (its step sees `closed` and does nothing): a space
      // closed under the memory budget is not kept alive by a timer minutes away.
      const fire = () => {
        cancel()
        r()
      }
      this.timers.add(fire)
    })
  }

  /** Timers waiting (`later`), fired at close. */
  private readonly timers = new Set<() => void>()

  get spaceId() {
    return this.ctx.space.spaceId
  }

  /** The commit hook: remember what moved, drain soon. */
  committed(change: SpaceChange) {
    // Closed: not followed, so the version a last save records must not claim it.
    if (this.closed) return
    this.lastVersion = change.versionId
    this.lastCommitAt = this.ctx.space.env.now()
    this.commits++
    if (this.state === 'disabled') return
    for (const o of change.objects) this.dirtyRows.add(o)
    for (const o of change.reloaded) this.reload.add(o)
    for (const [o, perDs] of change.records) {
      let set = this.dirtyRecords.get(o)
      for (const [ds, perRec] of perDs) {
        if (this.catalog && !this.catalog.collections.has(ds)) continue
        if (!set) this.dirtyRecords.set(o, (set = new Set()))
        for (const id of perRec.keys()) set.add(`${ds}\u0000${id}`)
      }
    }
    this.schedule()
  }

  /**
   * The loaded index's estimated heap (SEARCH_DOC_BYTES a document, measured on small objects):
   * the space's share of the account's memory budget counts it (SpaceServices.memoryBytes).
   */
  memoryBytes(): number {
    return (this.mem?.size ?? 0) * SEARCH_DOC_BYTES
  }

  /** The index in memory now, if it is. */
  get loaded(): FtsIndex | undefined {
    return this.mem
  }

  /** The index in memory for a `$text` filter (which answers synchronously), counted as a use. */
  forText(): FtsIndex | undefined {
    if (this.mem) this.used()
    return this.mem
  }

  /**
   * The index in memory with every commit so far in it, loaded first when it was on disk
   * (a search). Undefined when indexing is off.
   */
  async searchable(): Promise<FtsIndex | undefined> {
    this.wanted = true
    await this.started
    await this.lane.run(() => this.ensureLoaded())
    await this.settled()
    if (this.mem) this.used()
    return this.mem
  }

  /** Loads the index into memory in the background (a `$text` filter that found it on disk). */
  warm() {
    this.wanted = true
    // Once while a load waits: a live window's filter asks for every row it tests.
    if (this.warming) return
    this.warming = this.started
      .then(() => this.lane.run(() => this.ensureLoaded()))
      // A search that needs it loads it again and reports the failure itself.
      .catch((err: unknown) => this.failed('warming the search index failed', err, 'debug'))
      .finally(() => (this.warming = undefined))
  }

  /** Resolves once every commit so far is in the index (and the index is built). */
  async settled(): Promise<void> {
    await this.started
    while (this.pending() || this.unsaved.length || this.saveAsBase) await this.lane.run(() => this.drainStep())
    await this.lane.run(() => undefined)
  }

  private pending(): boolean {
    return this.dirtyRows.size > 0 || this.dirtyRecords.size > 0 || this.reload.size > 0
  }

  private dirtyCount(): number {
    return this.dirtyRows.size + this.dirtyRecords.size + this.reload.size
  }

  /**
   * Drains once commits pause for `drainQuietMs`: indexing yields to a burst (a sync backlog)
   * and catches up right after it. A search or `$text` never waits for the pause (they drain
   * or catch up first); `maxDeferred` objects pending drain anyway, so memory stays bounded.
   */
  private schedule() {
    if (this.scheduled) return
    this.scheduled = true
    void this.later(SEARCH_LIMITS.drainQuietMs)
      .then(async () => {
        this.scheduled = false
        if (this.closed) return
        if (this.ctx.space.env.now() - this.lastCommitAt < SEARCH_LIMITS.drainQuietMs && this.dirtyCount() < SEARCH_LIMITS.maxDeferred) {
          this.schedule()
          return
        }
        await this.started
        while (this.pending()) await this.lane.run(() => this.drainStep())
      })
      .catch((err: unknown) => this.failed('indexing recent changes failed', err))
  }

  // ------------------------------------------------------------------ lifecycle

  /**
   * Keeps the saved index when it is current: saved at the version the replica had when this
   * index began to follow its commits (`openedVersion`: what committed since, say the daemon's
   * boot write of the device's lastSeen, is in the dirty sets and drained as any commit is) and
   * under the catalog the space declares. Versions are per space and never reused
   * (SpaceReplica.versionId), so an equal version means the very state the index was saved
   * from; a meta saved before that held (no `versions: 'space'`) is never current. The catalog
   * comes from the object rows (types, properties); while they still load
   * (SpaceEngine.openLoading), the saved index's own catalog stands in: at its version the rows
   * it was read from are the rows then, so searches are answered before the rows are in. Once
   * they are, the catalog is read again and a difference (a module's declarations changed with
   * the code) rebuilds, as a drain does.
   */
  private async start() {
    if (await this.readSettings(false)) return
    const meta = await this.store.meta()
    const space = this.ctx.space
    const saved = meta && meta.versions === 'space' && meta.versionSeq === this.openedVersion ? meta : undefined
    const early = !space.rowsReady && saved ? catalogFromSig(saved.catalog) : undefined
    if (!early && !space.rowsReady) await space.rowsLoaded
    this.catalog = early ?? (await readCatalog(this.ctx))
    if (saved && saved.catalog === this.catalog.sig) {
      // Current: it stays on disk until something uses it.
      this.meta = saved
      this.state = 'ready'
      if (early)
        void space.rowsLoaded
          .then(() => this.lane.run(() => this.recheckCatalog()))
          .catch((err: unknown) => this.failed('rechecking the saved search index against the catalog failed', err))
      if (this.vectors.embedder) await this.ensureLoaded()
      return
    }
    await this.rebuild(meta)
  }

  /** In the lane: brings the saved index into memory (or rebuilds it when it cannot be read). */
  private async ensureLoaded() {
    if (this.state !== 'ready' || this.mem) return
    const meta = this.meta
    const progress = this.work.start('index.fts', meta ? meta.baseDocs + meta.opsSinceBase : 0)
    let loaded: FtsIndex | undefined
    try {
      loaded = meta && (await this.store.load(meta, progress))
    } finally {
      this.work.end('index.fts')
    }
    if (!loaded) return this.rebuild(meta)
    this.mem = loaded
    this.stats.loads++
    this.used()
    this.vectors.start().catch((err: unknown) => this.vectors.startFailed(err))
    if (meta!.opsSinceBase >= SEARCH_LIMITS.compactIdleOps) this.compactWhenIdle()
  }

  private used() {
    this.uses++
    this.evictWhenIdle()
  }

  /**
   * Drops the in-memory index once `residentIdleMs` pass without a use (counted, like the
   * compaction's pause), when everything it applied is saved. The vectors keep it in memory:
   * their backfill and filters read it.
   */
  private evictWhenIdle() {
    if (this.evictionScheduled) return
    this.evictionScheduled = true
    const seen = this.uses
    void this.later(SEARCH_LIMITS.residentIdleMs, true)
      .then(async () => {
        this.evictionScheduled = false
        if (!this.mem || this.closed) return
        if (this.uses !== seen || this.vectors.embedder) {
          this.evictWhenIdle()
          return
        }
        await this.lane.run(async () => {
          if (!this.mem || this.uses !== seen || this.vectors.embedder) return
          // Applied but unsaved operations (a `$text` catch-up's) are saved first.
          if (this.pending() || this.unsaved.length || this.saveAsBase) await this.drainStep()
          if (this.pending() || this.unsaved.length || this.saveAsBase) {
            this.evictWhenIdle()
            return
          }
          this.mem = undefined
          this.wanted = false
          this.stats.evictions++
        })
      })
      .catch((err: unknown) => this.failed('saving the idle search index before evicting it failed', err))
  }

  /** Reads `indexDisabled`; on a move, clears or rebuilds. True when indexing is off. */
  private async readSettings(moved: boolean): Promise<boolean> {
    const rows = await this.ctx.account.list('settings')
    const own = rows.find((r) => r.id === this.ctx.space.spaceId)?.value as Record<string, Json> | undefined
    const off = own?.[SEARCH_SETTINGS.disabled] === true
    this.vectors.configure(own ?? {})
    if (off && this.state !== 'disabled') {
      this.state = 'disabled'
      this.mem = undefined
      this.forgetPending()
      await this.store.clear(this.meta ?? (await this.store.meta()))
      this.meta = undefined
    } else if (!off && this.state === 'disabled' && moved) {
      this.catalog = await readCatalog(this.ctx)
      await this.rebuild(undefined)
    }
    return off
  }

  /** Indexes every object anew, yielding between batches; saves it as a new base. */
  private async rebuild(prev: FtsMeta | undefined) {
    this.state = 'building'
    this.stats.builds++
    const replica = this.ctx.space.replica
    // The last commit the hook saw, not the replica's latest: one stored but not announced yet
    // may be missing from what the build reads; it is drained once its hook runs.
    const version = this.lastVersion
    // What commits during the build is drained after it (a re-read is idempotent).
    const trees = replica.treeIds().filter((t) => t !== this.spaceId)
    const progress = this.work.start('index.fts', trees.length)
    try {
      const catalog = (this.catalog = await readCatalog(this.ctx))
      const index = FtsIndex.empty()
      let done = 0
      for (const t of trees) {
        // Not saved: the next start builds again.
        if (this.closed) return
        for (const op of await this.objectOps(t, index, catalog, true)) index.apply(op)
        if (++done % SEARCH_LIMITS.drainBatch === 0) {
          progress(done)
          // Other work (requests, sync) runs between batches; the simulator runs events one at a time.
          await this.ctx.space.env.yield?.()
        }
      }
      this.meta = await this.store.save(prev, index, [], version, catalog.sig, true)
      this.state = 'ready'
      // Kept in memory only when something waits for it (a search, the vectors).
      if (this.wanted || this.vectors.embedder) {
        this.mem = index
        this.used()
      } else this.mem = undefined
    } finally {
      this.work.end('index.fts')
    }
    this.vectors.start().catch((err: unknown) => this.vectors.startFailed(err))
  }

  // ------------------------------------------------------------------ drain

  /** What is indexed changed (a property's meta.index, a dataset's search): index anew. */
  private async reindexUnder(catalog: Catalog) {
    this.catalog = catalog
    this.forgetPending()
    await this.rebuild(this.meta)
  }

  /** Drops what waits to be indexed or saved (indexing turned off, or a rebuild follows). */
  private forgetPending() {
    this.dirtyRows.clear()
    this.dirtyRecords.clear()
    this.reload.clear()
    this.unsaved = []
    this.saveAsBase = false
  }

  /** After a start under the saved index's catalog: the one the loaded rows declare. */
  private async recheckCatalog() {
    if (this.state !== 'ready') return
    const catalog = await readCatalog(this.ctx)
    if (catalog.sig !== this.catalog?.sig) await this.reindexUnder(catalog)
  }

  /** One batch of what moved: re-read, index, save one delta. */
  private async drainStep() {
    if (this.state === 'disabled') return
    // Drains read the catalog and rows from the object index: not before it is whole.
    if (!this.ctx.space.rowsReady) await this.ctx.space.rowsLoaded
    // A start or build that failed (storage error): try again; failing again fails the caller.
    if (this.state !== 'ready') return this.rebuild(this.meta)
    const catalog = await readCatalog(this.ctx)
    if (catalog.sig !== this.catalog?.sig) return this.reindexUnder(catalog)
    // Applied as soon as computed: a `$text` catch-up between two awaits never sees its
    // newer text overwritten by an older one computed before it. On disk only, every
    // operation is kept: what it changes is known once a load replays it.
    const mem = this.mem
    const applied: IndexOp[] = []
    const ops = {
      push: (...list: IndexOp[]) => {
        for (const op of list) if (!mem || mem.apply(op)) applied.push(op)
      },
    }
    let n = 0
    for (const o of this.reload) {
      if (n++ >= SEARCH_LIMITS.drainBatch) break
      this.reload.delete(o)
      this.dirtyRows.delete(o)
      this.dirtyRecords.delete(o)
      ops.push(...(await this.objectOps(o, mem, catalog, false)))
    }
    for (const o of this.dirtyRows) {
      if (n++ >= SEARCH_LIMITS.drainBatch) break
      this.dirtyRows.delete(o)
      const row = this.ctx.space.objectDoc(o)
      if (!row) {
        // Deleted (or tombstoned): every document of the object goes.
        this.dirtyRecords.delete(o)
        if (mem) for (const k of mem.keysOf(o)) ops.push({ k })
        else ops.push({ o })
      } else ops.push(...rowOps(o, mem ? mem.keysOf(o) : rowKeysOf(o, catalog), rowTexts(row, catalog)))
    }
    for (const [o, recs] of this.dirtyRecords) {
      if (n++ >= SEARCH_LIMITS.drainBatch) break
      this.dirtyRecords.delete(o)
      if (!this.ctx.space.objectDoc(o)) continue
      for (const r of recs) {
        const [ds, id] = r.split('\u0000')
        const spec = catalog.collections.get(ds)
        if (!spec) continue
        const rec = await this.ctx.space.replica.getRecord(o, ds, id)
        const k = docKey({ objectId: o, scope: spec.scope, collection: ds, recordId: id })
        ops.push({ k, t: rec && !rec.deleted ? recordText(rec.value as Doc, spec) : '' })
      }
    }
    this.vectors.moved(applied)
    if (!mem) {
      // Nothing in memory to hold them: saved at once, each step its delta. The saved version
      // moves only once nothing is left to drain (a crash before that rebuilds).
      this.meta = await this.store.save(this.meta, undefined, applied, this.pending() ? this.meta!.versionSeq : this.lastVersion, catalog.sig)
      if (this.meta.opsSinceBase > SEARCH_LIMITS.maxOpsOnDisk) this.compactWhenIdle()
      return
    }
    this.keepUnsaved(applied)
    // Saved only once nothing is left to drain: the saved version is then the replica's.
    if (this.pending()) return
    const base = this.saveAsBase
    const ops2 = base ? [] : this.unsaved
    this.unsaved = []
    this.saveAsBase = false
    this.meta = await this.store.save(this.meta, mem, ops2, this.lastVersion, catalog.sig, base)
    if (this.meta.opsSinceBase >= SEARCH_LIMITS.compactIdleOps) this.compactWhenIdle()
  }

  /**
   * Compacts the deltas into a base once a whole SEARCH_LIMITS.compactIdleMs passes without a
   * commit (counted, not timed, so any clock the env gives works).
   */
  private compactWhenIdle() {
    if (this.compactionScheduled) return
    this.compactionScheduled = true
    const seen = this.commits
    // In memory, compacting costs only the write; on disk it costs a load first, so only past
    // maxOpsOnDisk (which bounds what a first search replays).
    const due = () => this.state === 'ready' && !!this.meta && this.meta.opsSinceBase >= (this.mem ? SEARCH_LIMITS.compactIdleOps : SEARCH_LIMITS.maxOpsOnDisk + 1)
    void this.later(SEARCH_LIMITS.compactIdleMs)
      .then(async () => {
        this.compactionScheduled = false
        if (!due() || this.closed) return
        if (this.commits !== seen || this.pending()) {
          this.compactWhenIdle()
          return
        }
        await this.lane.run(async () => {
          // Checked again in the lane: a drain or a save may have run meanwhile.
          if (!due() || this.pending()) return
          // Loaded for this, it leaves memory again once unused for residentIdleMs.
          if (!this.mem) await this.ensureLoaded()
          if (!this.mem || this.pending()) return
          await this.compactNow()
        })
      })
      .catch((err: unknown) => this.failed('compacting the search index failed', err))
  }

  /** In the lane, with the index in memory and nothing pending: writes it as a new base. */
  private async compactNow() {
    this.unsaved = []
    this.saveAsBase = true
    await this.drainStep()
  }

  private keepUnsaved(ops: readonly IndexOp[]) {
    if (this.saveAsBase || !this.mem) return
    this.unsaved.push(...ops)
    if (this.unsaved.length > Math.max(SEARCH_LIMITS.compactAfterOps, this.mem.size * SEARCH_LIMITS.compactFraction)) {
      this.unsaved = []
      this.saveAsBase = true
    }
  }

  /**
   * Every document of one object, read from the replica (a build, or a wholesale reload), after
   * removals of what it held unless `fresh` (`index` undefined: the index is on disk).
   */
  private async objectOps(objectId: string, index: FtsIndex | undefined, catalog: Catalog, fresh: boolean): Promise<IndexOp[]> {
    const ops: IndexOp[] = fresh ? [] : index ? [...index.keysOf(objectId)].map((k) => ({ k })) : [{ o: objectId }]
    for (const [k, t] of await objectTexts(this.ctx.space, objectId, catalog)) ops.push({ k, t })
    return ops
  }

  /**
   * Brings the row-level documents of objects that moved up to date at once, without a storage
   * read (rows are in memory): `$text` filters evaluate synchronously. Records wait for the
   * drain. The operations are saved with the next delta.
   */
  catchUpRows() {
    const mem = this.mem
    if (this.state !== 'ready' || !mem || !this.catalog || this.dirtyRows.size === 0) return
    for (const o of this.dirtyRows) {
      const row = this.ctx.space.objectDoc(o)
      const ops = row ? rowOps(o, mem.keysOf(o), rowTexts(row, this.catalog)) : [...mem.keysOf(o)].map((k) => ({ k }))
      if (!row) this.dirtyRecords.delete(o)
      const applied = ops.filter((op) => mem.apply(op))
      this.vectors.moved(applied)
      this.keepUnsaved(applied)
    }
    this.dirtyRows.clear()
    this.schedule()
  }

  /** The current text of an indexed document (snippets, embeddings), or '' when it is gone. */
  async textOf(key: string): Promise<string> {
    return this.catalog ? documentText(this.ctx.space, this.catalog, key) : ''
  }

  /**
   * The space closes (the daemon stops): drains what commits left pending, within
   * `closeBudgetMs` (past it the saved version lags and the next start rebuilds), and writes
   * the deltas into a new base when they hold `compactIdleOps` or more and the index is in
   * memory. A stop right after a sync backlog then leaves what a pause would have: the next
   * start loads a base instead of replaying tens of thousands of operations (docs/search.md
   * "Restart"). After it, commits are not followed and timers do nothing.
   */
  close(): Promise<void> {
    this.closing ??= this.closeNow()
    return this.closing
  }

  private async closeNow() {
    this.closed = true
    this.offSettings()
    for (const fire of [...this.timers]) fire()
    this.timers.clear()
    // A clock that is not running (a simulated peer's, once its workload ended) never fires the
    // start's timer: a start that has not begun is not waited for.
    // Its failure was logged when it happened.
    if (this.startBegun) await this.started.catch((err: unknown) => this.failed('closing after a failed start', err, 'debug'))
    const env = this.ctx.space.env
    const until = env.now() + SEARCH_LIMITS.closeBudgetMs
    await this.lane
      .run(async () => {
        if (this.state !== 'ready') return
        while ((this.pending() || this.unsaved.length || this.saveAsBase) && env.now() < until) await this.drainStep()
        if (this.pending() || !this.mem || !this.meta || this.meta.opsSinceBase < SEARCH_LIMITS.compactIdleOps) return
        await this.compactNow()
      })
      .catch((err: unknown) => this.failed('saving the search index while closing failed', err))
    await this.vectors.close()
    this.mem = undefined
  }

  /** Bytes of the saved index (bench). */
  diskBytes(): Promise<number> {
    return this.store.bytes()
  }
}

/** Heap a loaded index holds per document, for the memory budget: 1.46 KB measured on small objects (docs/performance.md); more while it builds. */
export const SEARCH_DOC_BYTES = 1_500
