import { SvcError } from '../core/errors.ts'
import { closeServices } from './close-services.ts'
import { errField, type Logger } from '../core/log.ts'
import { MemoryAccountData, type AccountData } from './account-data.ts'
import type { Doc } from './rows.ts'
import type { StorageAdapter } from '../storage/adapter.ts'
import { BundlesService } from './bundles/index.ts'
import { History } from './history.ts'
import { spacePolicy } from './schema.ts'
import type { ModuleContext, ModuleRowField, ModuleSet, SvcModule } from './module.ts'
import type { LiveFeed } from './live-feeds.ts'
import type { ModifyBody, SpaceChange, SpaceEngine } from './space-engine.ts'
import type { WriteResult } from '../replica/types.ts'
import { TypesService, type ScopedValueStore } from './types/index.ts'

/**
 * The services of one space, built once when the space opens (SpaceEngine.attach): the types
 * service (holding the account's scoped value store and the definitions lock), the bundles
 * service sharing it, and one service per module. Wiring is declared here, in one place,
 * instead of each service finding the others through a static lookup.
 */
export class SpaceServices implements ModuleContext {
  readonly types: TypesService
  readonly bundles: BundlesService
  private historyCache?: History
  /** By module name (unique in the set), so a module value spread into another (a server module adding routes) finds the same service. */
  private readonly byModule = new Map<string, unknown>()
  private readonly hooks: Array<(c: SpaceChange) => void | Promise<void>> = []
  private readonly recordOverlays: Array<(objectId: string, dataset: string, docs: Doc[]) => Doc[] | Promise<Doc[]>> = []
  private readonly rowOverlays: Array<(objectId: string, doc: Doc) => Doc | Promise<Doc>> = []
  readonly account: AccountData
  /** The replica's storage adapter (ModuleContext.storage). */
  get storage(): StorageAdapter {
    return this.space.replica.storage
  }
  /** The space's logger (ModuleContext.log). */
  get log(): Logger {
    return this.space.log
  }
  private readonly rowGroups = new Map<string, BoundRowGroup>()
  /** The module serving device-local dataset fields (`/modify` with `scope: 'local'`), if any. */
  readonly localWrites?: (body: ModifyBody) => Promise<WriteResult>
  private closed = false

  constructor(
    readonly space: SpaceEngine,
    readonly modules: ModuleSet,
    scopedValues?: ScopedValueStore,
    account?: AccountData,
  ) {
    this.account = account ?? new MemoryAccountData(space.replica.me)
    this.types = new TypesService(space, { scopedValues })
    this.bundles = new BundlesService(this.types)
    for (const m of modules.list) {
      // eslint-disable-next-line @typescript-eslint/no-unsafe-assignment -- a module's service is typed per module; this map holds them by name and services.of(module) gives the type back
      const service = m.service?.(this)
      this.byModule.set(m.name, service)
      const hook = m.onCommit
      if (hook) this.hooks.push((c) => hook(c, service, this))
      const { records, row } = m.overlay ?? {}
      if (records) this.recordOverlays.push((o, ds, d) => records(service, o, ds, d))
      if (row) this.rowOverlays.push((o, d) => row(service, o, d))
      for (const [name, g] of Object.entries(m.rowGroups ?? {})) {
        if (this.rowGroups.has(name)) throw new SvcError('internal', `row group ${name} is declared by two modules`)
        this.rowGroups.set(name, { fields: g.fields, accepts: (id, r) => g.accepts(service, id, r) })
      }
      const local = m.localWrites
      if (local) {
        if (this.localWrites) throw new SvcError('internal', `device-local fields are served by two modules (${m.name} is the second)`)
        this.localWrites = (body) => local(service, body)
      }
    }
  }

  /** Records of a dataset as documents, with the modules' overlays laid on. */
  async overlayRecords(objectId: string, dataset: string, docs: Doc[]): Promise<Doc[]> {
    for (const o of this.recordOverlays) docs = await o(objectId, dataset, docs)
    return docs
  }

  /** The row group a module owns under this name, if any. */
  rowGroup(name: string): BoundRowGroup | undefined {
    return this.rowGroups.get(name)
  }

  /** An object row with the modules' overlays laid on. */
  async overlayRow(objectId: string, doc: Doc): Promise<Doc> {
    for (const o of this.rowOverlays) doc = await o(objectId, doc)
    return doc
  }

  /** Version history of the space's objects (built on first use: it caches decoded changes). */
  get history(): History {
    return (this.historyCache ??= new History(this.space.replica, this.modules.policy(spacePolicy), (ds) => this.modules.keepsHistory(ds), this.space.log))
  }

  /** The service a module built for this space; typed by the module value itself. */
  of<S>(module: SvcModule<S>): S {
    if (!this.byModule.has(module.name)) throw new SvcError('internal', `module ${module.name} is not installed`)
    return this.byModule.get(module.name) as S
  }

  /** A module's live feed over this space (`params` are the route's). */
  feed<S>(module: SvcModule<S>, name: string, params: Readonly<Record<string, string>> = {}): LiveFeed {
    const make = module.feeds?.[name]
    if (!make) throw new SvcError('internal', `module ${module.name} has no feed ${name}`)
    return make(this.of(module), params)
  }

  /** Runs the modules' commit hooks, in module order (the space engine awaits them). */
  async committed(c: SpaceChange): Promise<void> {
    for (const h of this.hooks) {
      try {
        await h(c)
      } catch (err) {
        // The commit is stored whatever a hook does: one failing hook starves no other.
        this.space.log.error('module commit hook failed', { spaceId: this.space.spaceId, err: errField(err) })
      }
    }
  }

  get hasHooks(): boolean {
    return this.hooks.length > 0
  }

  /**
   * Bytes the module services hold in memory by their own estimate (a service with a
   * `memoryBytes()`, such as search with its index loaded): part of the space's share of the
   * account's memory budget (SpaceEngine.memoryEstimate).
   */
  memoryBytes(): number {
    let n = 0
    for (const s of this.byModule.values()) {
      const f = (s as { memoryBytes?: unknown } | undefined)?.memoryBytes
      if (typeof f === 'function') n += (f as () => number).call(s)
    }
    return n
  }

  /**
   * Closes every module service that has a `close` (the space closes: the account stops), in
   * reverse module order, as the account's services close (account-services.ts).
   */
  async close(): Promise<void> {
    if (this.closed) return
    this.closed = true
    await closeServices(this.byModule.values(), 'space', this.space.log)
  }
}

/** A module's row group with its service bound. */
export interface BoundRowGroup {
  fields: Readonly<Record<string, ModuleRowField>>
  accepts: (objectId: string, row: Doc) => boolean | Promise<boolean>
}
