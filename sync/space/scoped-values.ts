import { KeyedSerialQueue } from '../core/serial-queue.ts'
import type { Json, Op } from '../crdt/ops.ts'
import { esc, unesc } from '../replica/storage-keys.ts'
import type { StorageAdapter, WriteBatch } from '../storage/adapter.ts'
import { TECH_DS } from './schema.ts'
import type { SpaceChange, SpaceEngine } from './space-engine.ts'
import { isObj } from './types/model.ts'
import type { ScopedGroups, ScopedKey, ScopedValueStore } from './types/values.ts'

/** Device storage of local-scope values (adapters accept any store name). */
export const LOCAL_VALUES_STORE = 'localValues'

/**
 * The tech-space dataset of one space's account-scope values. One dataset per space, so a
 * space's values are one range of keys and reading them never decodes another space's.
 */
export const accountValuesDataset = (spaceId: string) => `${TECH_DS.accountValues}/${spaceId}`

/**
 * The account's store of account- and local-scope property values (values.ts says where each
 * scope lives and how it is read). One per AccountEngine.
 *
 * - Account scope: record `objectId` of the tech space's `accountValues/<spaceId>` dataset,
 *   shaped like a row, `{typeKey: {propId: value}}`. A value is a `set` at
 *   `typeKey.propId`, so two devices writing different properties of one object both win
 *   (last writer per path). null is an `unset` of that path, never a record delete: record
 *   tombstones are sticky and would drop every later value of the object. The tech space
 *   syncs across the account's own devices only.
 * - Local scope: key `<space>/<object>/<typeKey>/<propId>` of this device's LOCAL_VALUES_STORE
 *   (JSON bytes); a put or delete, durable once `set` resolves, never synced.
 *
 * Reads come from a per-space cache of both scopes, loaded on first use (one range scan each),
 * written through by `set`, and refreshed record by record when the tech space changes (another
 * device's values arriving). Every operation on one space runs in that space's lane, in order.
 */
export class AccountScopedValues implements ScopedValueStore {
  private readonly cache = new Map<string, SpaceValues>()
  private readonly lanes = new KeyedSerialQueue()
  private readonly off: () => void
  private static readonly encoder = new TextEncoder()
  private static readonly decoder = new TextDecoder()

  constructor(
    private readonly tech: SpaceEngine,
    private readonly techObjectId: string,
    private readonly storage: StorageAdapter,
  ) {
    this.off = tech.events.on('change', (c) => this.followTech(c))
  }

  set(key: ScopedKey, value: Json | null): Promise<void> {
    return this.setMany([[key, value]])
  }

  /** Per space: account values in one tech-space change, local ones in one storage batch. */
  async setMany(entries: ReadonlyArray<readonly [ScopedKey, Json | null]>): Promise<void> {
    const bySpace = new Map<string, Array<readonly [ScopedKey, Json | null]>>()
    for (const e of entries) {
      checkSegments(e[0])
      let list = bySpace.get(e[0].spaceId)
      if (!list) bySpace.set(e[0].spaceId, (list = []))
      list.push(e)
    }
    for (const [spaceId, list] of bySpace) {
      await this.inLane(spaceId, async () => {
        const ops: Op[] = []
        const batch: WriteBatch = { puts: [], dels: [] }
        for (const [k, value] of list) {
          if (k.scope === 'account') {
            const path = `${k.typeKey}.${k.propId}`
            const ds = accountValuesDataset(spaceId)
            ops.push(value === null ? { op: 'unset', ds, id: k.objectId, path } : { op: 'set', ds, id: k.objectId, path, value })
          } else if (value === null) batch.dels.push({ store: LOCAL_VALUES_STORE, key: localKey(k) })
          else batch.puts.push({ store: LOCAL_VALUES_STORE, key: localKey(k), value: AccountScopedValues.encoder.encode(JSON.stringify(value)) })
        }
        if (ops.length) await this.tech.write(this.techObjectId, ops)
        if (batch.puts.length || batch.dels.length) await this.storage.commit(batch)
        const cached = this.cache.get(spaceId)
        if (cached) for (const [k, value] of list) cached.put(k.scope, k.objectId, k.typeKey, k.propId, value === null ? undefined : structuredClone(value))
      })
    }
  }

  async get(key: ScopedKey): Promise<Json | undefined> {
    const v = await this.inLane(key.spaceId, async () => (await this.load(key.spaceId)).of(key.scope, key.objectId)?.[key.typeKey]?.[key.propId])
    return v === undefined ? undefined : copy(v)
  }

  async list(spaceId: string, objectId: string): Promise<Array<ScopedKey & { value: Json }>> {
    return this.inLane(spaceId, async () => {
      const values = await this.load(spaceId)
      const out: Array<ScopedKey & { value: Json }> = []
      for (const scope of ['account', 'local'] as const) {
        for (const [typeKey, props] of Object.entries(values.of(scope, objectId) ?? {})) {
          for (const [propId, value] of Object.entries(props)) out.push({ scope, spaceId, objectId, typeKey, propId, value: copy(value) })
        }
      }
      return out
    })
  }

  /** Both scopes of each object (a local value wins over an account one on the same path). */
  rowsOf(spaceId: string, objectIds: Iterable<string>): Promise<Map<string, ScopedGroups>> {
    return this.inLane(spaceId, async () => {
      const values = await this.load(spaceId)
      const out = new Map<string, ScopedGroups>()
      if (values.empty) return out
      for (const id of objectIds) {
        const account = values.of('account', id)
        const local = values.of('local', id)
        if (!account && !local) continue
        const groups: ScopedGroups = {}
        for (const scoped of [account, local]) {
          for (const typeKey in scoped) {
            const props = scoped[typeKey]
            const into = (groups[typeKey] ??= {})
            for (const propId in props) into[propId] = copy(props[propId])
          }
        }
        out.set(id, groups)
      }
      return out
    })
  }

  close(): void {
    this.off()
    this.cache.clear()
  }

  // ------------------------------------------------------------------ cache

  /** Runs `fn` after every earlier operation on this space (a failed one does not block it). */
  private inLane<T>(spaceId: string, fn: () => Promise<T>): Promise<T> {
    return this.lanes.run(spaceId, fn)
  }

  /** The space's values (in its lane): loaded once, then kept current. */
  private async load(spaceId: string): Promise<SpaceValues> {
    const hit = this.cache.get(spaceId)
    if (hit) return hit
    const values = new SpaceValues()
    for (const r of await this.tech.replica.listRecords(this.techObjectId, accountValuesDataset(spaceId))) {
      if (!r.deleted) values.setRecord(r.id, r.value)
    }
    const prefix = `${esc(spaceId)}/`
    for (const [k, v] of await this.storage.scan(LOCAL_VALUES_STORE, { prefix })) {
      const [objectId, typeKey, propId] = k.slice(prefix.length).split('/').map(unesc)
      values.put('local', objectId, typeKey, propId, JSON.parse(AccountScopedValues.decoder.decode(v)) as Json)
    }
    this.cache.set(spaceId, values)
    return values
  }

  /** Account values written on this or another device: re-read the touched records of cached spaces. */
  private followTech(c: SpaceChange) {
    if (c.reloaded.has(this.techObjectId)) {
      for (const spaceId of [...this.cache.keys()]) void this.inLane(spaceId, async () => void this.cache.delete(spaceId))
      return
    }
    const prefix = accountValuesDataset('')
    for (const [ds, records] of c.records.get(this.techObjectId) ?? []) {
      if (!ds.startsWith(prefix)) continue
      const spaceId = ds.slice(prefix.length)
      if (!this.cache.has(spaceId)) continue
      const ids = [...records.keys()]
      this.inLane(spaceId, async () => {
        const values = this.cache.get(spaceId)
        if (!values) return
        for (const id of ids) {
          const r = await this.tech.replica.getRecord(this.techObjectId, ds, id)
          values.setRecord(id, r && !r.deleted ? r.value : undefined)
        }
      }).catch(() => this.cache.delete(spaceId))
    }
  }
}

/** One space's cached values per scope: objectId to `{typeKey: {propId: value}}`. */
class SpaceValues {
  private readonly account = new Map<string, ScopedGroups>()
  private readonly local = new Map<string, ScopedGroups>()

  get empty(): boolean {
    return this.account.size === 0 && this.local.size === 0
  }

  of(scope: 'account' | 'local', objectId: string): ScopedGroups | undefined {
    return (scope === 'account' ? this.account : this.local).get(objectId)
  }

  put(scope: 'account' | 'local', objectId: string, typeKey: string, propId: string, value: Json | undefined) {
    const map = scope === 'account' ? this.account : this.local
    const groups = map.get(objectId)
    if (value !== undefined) {
      if (groups) (groups[typeKey] ??= {})[propId] = value
      else map.set(objectId, { [typeKey]: { [propId]: value } })
      return
    }
    if (!groups?.[typeKey]) return
    delete groups[typeKey][propId]
    if (Object.keys(groups[typeKey]).length === 0) delete groups[typeKey]
    if (Object.keys(groups).length === 0) map.delete(objectId)
  }

  /** An account-values record as merge left it; unset leaves empty groups, which hold nothing. */
  setRecord(objectId: string, value: Json | undefined) {
    const groups: ScopedGroups = {}
    if (isObj(value)) {
      for (const [typeKey, props] of Object.entries(value)) {
        // A copy: the cache is written through, the replica's record must not be.
        if (isObj(props) && Object.keys(props).length) groups[typeKey] = structuredClone(props)
      }
    }
    if (Object.keys(groups).length) this.account.set(objectId, groups)
    else this.account.delete(objectId)
  }
}

/** Callers get copies; most values are scalars, which need none. */
const copy = (v: Json): Json => (typeof v === 'object' && v !== null ? structuredClone(v) : v)

const localKey = (k: ScopedKey) => `${esc(k.spaceId)}/${esc(k.objectId)}/${esc(k.typeKey)}/${esc(k.propId)}`

/** typeKey and propId become one path segment each of the account record. */
function checkSegments(k: ScopedKey) {
  for (const s of [k.typeKey, k.propId]) {
    if (s === '' || s.includes('.') || s === '__proto__') throw new Error(`scoped values: ${JSON.stringify(s)} cannot be a value path segment`)
  }
}
