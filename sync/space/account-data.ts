import type { Json, Op } from '../crdt/ops.ts'
import type { SpaceChange, SpaceEngine } from './space-engine.ts'

/**
 * The account's private data as a module reaches it: datasets of the tech space's account
 * object, which syncs across the account's own devices only (never to another member). A
 * module keeps there what is the account's but not the space's, such as chat read marks
 * (sync/modules/chat/read-state). Each module names its own datasets (a prefix of its own);
 * the space layer gives the port, never reads them.
 */
export interface AccountData {
  /** The account's identity (the signer of its changes). */
  readonly identity: string
  /** Live records of one dataset (tombstones left out). */
  list(dataset: string): Promise<Array<{ id: string; value: Json }>>
  /** One change of these ops; resolves once stored and announced to `onChange` listeners. */
  write(ops: Op[]): Promise<void>
  /**
   * Records written here or arriving from another device: per dataset, the record ids
   * touched; `reloaded` when every dataset must be read again (the object was re-derived).
   */
  onChange(fn: (touched: ReadonlyMap<string, readonly string[]> | 'reloaded') => void): () => void
}

/** The daemon's port: the account object of the tech space. */
export class TechAccountData implements AccountData {
  constructor(
    private readonly tech: SpaceEngine,
    private readonly objectId: string,
    readonly identity: string,
  ) {}

  async list(dataset: string) {
    const recs = await this.tech.replica.listRecords(this.objectId, dataset)
    return recs.filter((r) => !r.deleted && r.value !== undefined).map((r) => ({ id: r.id, value: r.value as Json }))
  }

  async write(ops: Op[]): Promise<void> {
    if (ops.length) await this.tech.write(this.objectId, ops)
  }

  onChange(fn: (touched: ReadonlyMap<string, readonly string[]> | 'reloaded') => void): () => void {
    return this.tech.events.on('change', (c: SpaceChange) => {
      if (c.reloaded.has(this.objectId)) {
        fn('reloaded')
        return
      }
      const perDs = c.records.get(this.objectId)
      if (!perDs) return
      const touched = new Map<string, string[]>()
      for (const [ds, recs] of perDs) touched.set(ds, [...recs.keys()])
      fn(touched)
    })
  }
}

/**
 * A port kept in memory, for a space opened without an account (unit tests, the simulator's
 * bare engines): the module works the same, and nothing leaves this process.
 */
export class MemoryAccountData implements AccountData {
  private readonly data = new Map<string, Map<string, Json>>()
  private readonly listeners = new Set<(touched: ReadonlyMap<string, readonly string[]>) => void>()

  constructor(readonly identity: string) {}

  async list(dataset: string) {
    return [...(this.data.get(dataset) ?? [])].map(([id, value]) => ({ id, value: structuredClone(value) }))
  }

  async write(ops: Op[]): Promise<void> {
    const touched = new Map<string, string[]>()
    for (const op of ops) {
      if (op.op !== 'set') throw new Error('MemoryAccountData: only set ops')
      let ds = this.data.get(op.ds)
      if (!ds) {
        ds = new Map()
        this.data.set(op.ds, ds)
      }
      ds.set(op.id, setPath(ds.get(op.id), op.path, op.value))
      touched.set(op.ds, [...(touched.get(op.ds) ?? []), op.id])
    }
    for (const fn of this.listeners) fn(touched)
  }

  onChange(fn: (touched: ReadonlyMap<string, readonly string[]>) => void): () => void {
    this.listeners.add(fn)
    return () => void this.listeners.delete(fn)
  }
}

function setPath(doc: Json | undefined, path: string, value: Json): Json {
  if (path === '') return structuredClone(value)
  const [head, ...rest] = path.split('.')
  const obj = doc && typeof doc === 'object' && !Array.isArray(doc) ? { ...(doc as Record<string, Json>) } : {}
  obj[head] = setPath(obj[head], rest.join('.'), value)
  return obj
}
