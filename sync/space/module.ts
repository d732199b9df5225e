import { SvcError, type ModuleErrorCodes } from '../core/errors.ts'
import type { Emitter } from '../core/emitter.ts'
import type { Env } from '../core/env.ts'
import type { Logger } from '../core/log.ts'
import type { CryptoProvider } from '../crypto/provider.ts'
import type { StorageAdapter } from '../storage/adapter.ts'
import type { BlockStore } from '../storage/block-store.ts'
import type { Json, JsonObject } from '../crdt/ops.ts'
import type { MergePolicy, WriteRule } from '../crdt/record.ts'
import type { BundlesService } from './bundles/index.ts'
import type { AccountData } from './account-data.ts'
import type { AccountEvents } from './account-engine.ts'
import type { LiveFeed } from './live-feeds.ts'
import type { Doc } from './rows.ts'
import type { ModifyBody, SpaceChange, SpaceEngine } from './space-engine.ts'
import type { TypesService } from './types/index.ts'
import type { WriteResult } from '../replica/types.ts'

/**
 * The module seam (in the spirit of libp2p's `services`): a module is one value that declares
 * everything the space layer needs from it, and the account engine is handed a list of them.
 * Nothing else is registered anywhere: no central switch names a module. The editor
 * (sync/modules/editor/module.ts) is the worked example; docs/architecture.md "Adding a module"
 * walks through it.
 *
 * A module declares:
 * - `name`, unique in the list, and `dependencies`, the modules its services use;
 * - `datasets`: the dataset kinds it serves (the `module` value of a declaration draft, its
 *   canonical key and collection, the schema `GET {S}/datasets` lists);
 * - `pins`: merge pins of its datasets (first write wins on those paths, on every peer);
 * - a dataset's `writeRule`: who may write what in it, judged at merge on every peer;
 * - `service`: the per-space service it builds when a space opens (`space.services.of(module)`);
 *   closed with the space (SpaceEngine.close, when the account closes) when it has a `close`;
 * - `accountService`: the one service per account it builds when the account engine opens
 *   (`account.services.of(module)`), for what belongs to the account rather than to a space
 *   (the event bus); closed with the account when it has a `close`;
 * - `feeds`: live feeds its routes open (the translation of space changes into window input);
 * - `onCommit`: a hook run after every commit of a space, before the commit's change is
 *   announced and before the write that made it resolves;
 * - `overlay`: fields of the account's own (computed, never synced to members) laid on records of
 *   a dataset and on object rows before queries, sorts and live windows see them; the module
 *   announces a moved overlay with `space.announceOverlay`;
 * - `rowGroups`: row namespaces it owns (`<group>.<field>`), which the properties route writes
 *   like a type's values: engine-computed fields refuse client writes, account- and local-scope
 *   ones go to the account's scoped store;
 * - `localWrites`: the writes of device-local dataset fields (`POST {S}/modify` with `scope:
 *   'local'`), kept on this device and laid on records by the module's own overlay; at most one
 *   module of a set serves them (without one, such a write is 501 `sdk.not_implemented`);
 * - `errorCodes`: the error codes it throws beyond the core ones, declared in its own folder by
 *   merging into `ModuleErrorCodes` (sync/modules/editor/errors.ts); its server module gives
 *   each a status, and an app refuses to build when one is missing.
 *
 * Merge pins and dataset kinds decide what every peer computes, so the list is part of the
 * release: peers that hold the same changes must run the same modules.
 */
export interface SvcModule<S = unknown, A = unknown> {
  readonly name: string
  /**
   * Modules whose services this one's use (push reads chat's read state; the editor's cursors
   * ride the event bus), by name: the account engine refuses to open with one missing, so a
   * list that leaves one out fails at boot, not at the first request that needs it. Space
   * engines alone (tests, benches of one module) do not check: only account services and routes
   * reach across modules.
   */
  readonly dependencies?: readonly string[]
  readonly datasets?: readonly ModuleDataset[]
  readonly pins?: Readonly<Record<string, readonly string[]>>
  readonly service?: (ctx: ModuleContext) => S
  readonly accountService?: (ctx: AccountModuleContext) => A
  readonly feeds?: Readonly<Record<string, ModuleFeed<S>>>
  readonly onCommit?: (change: SpaceChange, service: S, ctx: ModuleContext) => void | Promise<void>
  readonly overlay?: ModuleOverlay<S>
  readonly rowGroups?: Readonly<Record<string, ModuleRowGroup<S>>>
  readonly localWrites?: (service: S, body: ModifyBody) => Promise<WriteResult>
  readonly errorCodes?: readonly (keyof ModuleErrorCodes)[]
  /**
   * Fields it lays on the space's row (`GET /v1/spaces`, `GET {S}`), computed from the held space
   * whenever the row is read (push's key mirror: `push`); undefined adds nothing.
   */
  readonly spaceRow?: (space: SpaceEngine) => Partial<SpaceRowFields> | undefined
}

/** Row fields modules may add (chat.md "Push keys and payload": `push`). */
export interface SpaceRowFields {
  push: { spaceKey: string; encKey: string; encKeyId: string }
}

/** A module of any service type (lists hold modules of different service types). */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type AnyModule = SvcModule<any, any>

/** A dataset kind a module serves. */
export interface ModuleDataset {
  /** The `module` value of a dataset declaration draft. */
  kind: string
  /** Key and collection of the shared (canonical) dataset of this kind. */
  canonicalKey: string
  canonicalCollection: string
  /** Only the canonical collection exists (no per-type `<typeId>_<key>` datasets). */
  sharedOnly: boolean
  /** JSON Schema of a record (listed by `GET {S}/datasets`). */
  schema: JsonObject
  /** False: version history leaves this kind's canonical collection out. */
  history?: boolean
  /**
   * A type declaring a dataset of this kind may be carried only by the object the system
   * installs for it (bundles and object creation refuse it: 400 `type.reserved_carrier`).
   */
  reservedCarrier?: boolean
  /**
   * Who may write what in the canonical collection, judged when an op is folded into a record
   * (in stamp order, on every peer, whatever order changes arrive in): an op it refuses is
   * dropped like a pinned conflict. Pure; its contract is `WriteRuleInput`'s
   * (sync/crdt/record.ts), the fold is sync/crdt/ruled-record.ts. Chat's is authorship.
   */
  writeRule?: WriteRule
  /**
   * Records of this kind are searchable: the text of `fields` is indexed under `scope` (a slug)
   * by the search module (sync/modules/search/catalog.ts), in every collection of the kind.
   */
  search?: { scope: string; fields: readonly string[] }
}

/** What a module's service, feeds and hooks are built from: the space and its core services. */
export interface ModuleContext {
  readonly space: SpaceEngine
  readonly types: TypesService
  readonly bundles: BundlesService
  /** The account's private datasets (its tech space; in memory for a space opened without an account). */
  readonly account: AccountData
  /** The device's storage the space lives in, for a module's own stores (names of its own; the search index). */
  readonly storage: StorageAdapter
  /** The space's logger; a module's service logs through a child named after it (`log.child('search')`). */
  readonly log: Logger
}

/**
 * What a module's account service is built from: the account, not any one space. The account
 * engine is this context; it builds the services before it follows any space, so a service
 * hears every `spacesOpened`.
 */
export interface AccountModuleContext {
  readonly accountId: string
  /** The account's clock and randomness (a simulated peer passes its own). */
  readonly env: Env
  /** The account's typed events: changes and members of every held space, spaces opened, sync status, processes. */
  readonly events: Emitter<AccountEvents>
  /** A held space the account may use now; 404 `space.not_found`, or the sharing gate's code for a pending one. */
  space(spaceId: string): SpaceEngine
  /** A held space (the tech space included, pending ones too), or undefined. */
  held(spaceId: string): SpaceEngine | undefined
  /** The account's storage, for device-local state a module keeps beside the replicas (files' blocks). */
  readonly storage: StorageAdapter
  /** The account's crypto provider (files hash and seal blocks with its native primitives). */
  readonly crypto: CryptoProvider
  /** Content-addressed blocks kept per space in the account's storage (files' encrypted blocks). */
  readonly blocks: BlockStore
  /** The account's logger; a module's account service logs through a child named after it (`log.child('files')`). */
  readonly log: Logger
}

/**
 * Account-local fields a module lays on documents, the way account- and local-scope values
 * reach rows, but before selection: filters, sorts and live windows see them. Each gets the
 * document as the space computed it (a copy it may change and return) and must be cheap for
 * documents it does not touch. The space applies record overlays wherever a dataset's records
 * become documents (queries, live windows) and row overlays whenever it refreshes a row.
 */
export interface ModuleOverlay<S> {
  /** Records of one dataset of one object (a page or a whole collection at once). */
  records?: (service: S, objectId: string, dataset: string, docs: Doc[]) => Doc[] | Promise<Doc[]>
  row?: (service: S, objectId: string, doc: Doc) => Doc | Promise<Doc>
}

/** A row namespace a module owns on the objects it `accepts` (chat's `chat` group of counters and `notifyMode`). */
export interface ModuleRowGroup<S> {
  fields: Readonly<Record<string, ModuleRowField>>
  accepts: (service: S, objectId: string, row: Doc) => boolean | Promise<boolean>
}

/**
 * `engine`: computed by the module (an overlay lays it on rows); a client's write is 400
 * `property.immutable`. `account`/`local`: the caller's own value in the scoped store, checked
 * by `check` (a reason string refuses it: 400 `property.format_violation`).
 */
export type ModuleRowField = { scope: 'engine' } | { scope: 'account' | 'local'; check: (value: Json) => string | undefined }

/** A live feed of a module: from its service and the route's parameters. */
export type ModuleFeed<S> = (service: S, params: Readonly<Record<string, string>>) => LiveFeed

/** Identity helper: infers `S` from `service` and `A` from `accountService`, so both `services.of(module)` are typed. */
export function defineModule<S = unknown, A = unknown>(m: SvcModule<S, A>): SvcModule<S, A> {
  return m
}

const NONE: readonly string[] = []

/**
 * The modules of an account, checked once: names, dataset kinds and collections are unique,
 * and a module pins only its own datasets (never one the space layer pins).
 */
export class ModuleSet {
  private readonly kinds = new Map<string, ModuleDataset>()
  private readonly pins = new Map<string, readonly string[]>()
  private readonly noHistory = new Set<string>()
  private readonly rules = new Map<string, WriteRule>()

  constructor(readonly list: readonly AnyModule[] = []) {
    const names = new Set<string>()
    const collections = new Set<string>()
    for (const m of list) {
      if (names.has(m.name)) throw new SvcError('internal', `two modules are named ${m.name}`)
      names.add(m.name)
      for (const d of m.datasets ?? []) {
        if (this.kinds.has(d.kind) || collections.has(d.canonicalCollection)) throw new SvcError('internal', `dataset kind ${d.kind} (${d.canonicalCollection}) is declared twice`)
        this.kinds.set(d.kind, d)
        collections.add(d.canonicalCollection)
        if (d.history === false) this.noHistory.add(d.canonicalCollection)
        if (d.writeRule) this.rules.set(d.canonicalCollection, d.writeRule)
      }
      for (const [ds, paths] of Object.entries(m.pins ?? {})) {
        if (this.pins.has(ds)) throw new SvcError('internal', `dataset ${ds} is pinned by two modules`)
        this.pins.set(ds, [...paths])
      }
    }
  }

  static of(modules: ModuleSet | readonly AnyModule[] | undefined): ModuleSet {
    return modules instanceof ModuleSet ? modules : new ModuleSet(modules ?? [])
  }

  /** The dataset kind a declaration's `module` names, or undefined. */
  kind(name: string): ModuleDataset | undefined {
    return this.kinds.get(name)
  }

  /** Every dataset kind, in module order. */
  allKinds(): ModuleDataset[] {
    return [...this.kinds.values()]
  }

  /** Whether version history keeps the changes of this collection. */
  keepsHistory(collection: string): boolean {
    return !this.noHistory.has(collection)
  }

  /**
   * The space layer's pins, then the modules' (which never pin a dataset the base pins), and
   * the modules' write rules (the space layer has none).
   */
  policy(base: MergePolicy): MergePolicy {
    if (this.pins.size === 0 && this.rules.size === 0) return base
    for (const ds of this.pins.keys()) if (base.pinnedPaths(ds).length > 0) throw new SvcError('internal', `dataset ${ds} is pinned by the space layer`)
    if (base.writeRule) throw new SvcError('internal', 'the space layer has no write rules to compose with')
    const pins = this.pins
    const rules = this.rules
    return {
      pinnedPaths(ds: string) {
        const own = base.pinnedPaths(ds)
        return own.length > 0 ? own : (pins.get(ds) ?? NONE)
      },
      writeRule: (ds: string) => rules.get(ds),
    }
  }
}
