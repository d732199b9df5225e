import { errField, type Logger } from '../../core/log.ts'
import type { Json } from '../../crdt/ops.ts'
import type { ModuleContext } from '../../space/module.ts'
import { emptyBatch } from '../../storage/adapter.ts'
import { EmbedderUnavailable, HttpEmbedder, type Embedder } from './embedder.ts'
import { isDropObject, type IndexOp } from './fts-index.ts'
import { SEARCH_LIMITS, SEARCH_SETTINGS } from './limits.ts'
import type { IndexWork } from './processes.ts'
import { VectorStore } from './vectors.ts'

/** `disabled`: no embedder configured; `unavailable`: configured but not answering. */
export type VectorStatus = 'disabled' | 'unavailable' | 'ready'

/** The embedder a space's settings configure, or none. */
export type EmbedderFactory = (settings: Readonly<Record<string, Json>>) => Embedder | undefined

/** Default: the space's `searchEmbedUrl` and `searchEmbedModel` settings name an HTTP embedder. */
export const settingsEmbedder: EmbedderFactory = (s) => {
  const url = s[SEARCH_SETTINGS.embedUrl]
  const model = s[SEARCH_SETTINGS.embedModel]
  if (typeof url !== 'string' || typeof model !== 'string' || !/^https?:\/\//.test(url)) return undefined
  return new HttpEmbedder(url, model)
}

/** After a failure, the embedder is tried again no sooner than this. */
const RETRY_MS = 30_000

/** What the vector side needs of the full-text index. */
export interface IndexedKeys {
  /** The full-text index when in memory (the service loads it for the vectors: `warm`). */
  readonly loaded: { keysOf(objectId: string): ReadonlySet<string>; objectIds(): IterableIterator<string> } | undefined
  warm(): void
  readonly state: string
  readonly work: IndexWork
  textOf(key: string): Promise<string>
}

/**
 * Vectors of the indexed documents: a backfill embeds every document without a vector
 * (`index.embed.<spaceId>`), then each document that moves; deletes drop their vector.
 */
export class VectorIndexer {
  embedder?: Embedder
  store?: VectorStore
  status: VectorStatus = 'disabled'
  private readonly queue = new Set<string>()
  private running = false
  /** The backfill's run while one is going (close waits for it). */
  private current?: Promise<void>
  private closed = false
  private failedAt = -Infinity
  private sig = ''

  constructor(
    private readonly ctx: ModuleContext,
    private readonly fts: IndexedKeys,
    private readonly embedders: EmbedderFactory,
    private readonly log: Logger,
  ) {}

  configure(settings: Readonly<Record<string, Json>>) {
    const e = this.embedders(settings)
    const sig = e ? `${(e as { url?: string }).url ?? ''}\u0000${e.model}` : ''
    if (sig === this.sig) return
    this.sig = sig
    this.embedder = e
    this.queue.clear()
    this.store = e ? new VectorStore(this.ctx.storage, this.ctx.space.spaceId, e.model) : undefined
    this.status = e ? 'ready' : 'disabled'
    this.failedAt = -Infinity
    // The vectors need the full-text index in memory; it starts them once loaded.
    if (this.fts.state === 'ready') {
      if (this.fts.loaded) this.start().catch((err: unknown) => this.startFailed(err))
      else this.fts.warm()
    }
  }

  /** Loads saved vectors and queues every document without one. */
  async start() {
    const store = this.store
    if (!store) return
    await store.load()
    if (store !== this.store) return
    const index = this.fts.loaded
    if (!index) return
    for (const o of index.objectIds()) for (const k of index.keysOf(o)) if (!store.has(k)) this.queue.add(k)
    this.kick()
  }

  /** Documents the full-text side just changed. */
  moved(ops: readonly IndexOp[]) {
    const store = this.store
    if (!store) return
    const batch = emptyBatch()
    for (const op of ops) {
      if (isDropObject(op)) store.removeObject(op.o, batch)
      else if (op.t) this.queue.add(op.k)
      else {
        this.queue.delete(op.k)
        store.remove(op.k, batch)
      }
    }
    if (batch.dels.length)
      void this.ctx.storage
        .commit(batch)
        .catch((err: unknown) => this.log.warn('removing vectors of changed documents failed', { spaceId: this.ctx.space.spaceId, err: errField(err) }))
    this.kick()
  }

  /** The query's vector; throws EmbedderUnavailable (and marks the status) when it cannot. */
  async embedQuery(text: string): Promise<Float32Array> {
    const e = this.embedder
    if (!e) throw new EmbedderUnavailable('no embedder')
    try {
      const [v] = await e.embed([text])
      if (this.status === 'unavailable') {
        this.status = 'ready'
        this.kick()
      }
      return v
    } catch (err) {
      this.fail()
      throw err
    }
  }

  /** Tries an embedder that failed again once RETRY_MS passed (searches call it). */
  retry() {
    if (this.status === 'unavailable' && this.ctx.space.env.now() - this.failedAt >= RETRY_MS) {
      this.status = 'ready'
      this.kick()
    }
  }

  private fail() {
    if (this.embedder) this.status = 'unavailable'
    this.failedAt = this.ctx.space.env.now()
  }

  /** Loading saved vectors failed (storage closing, or unreadable): searches answer without them. */
  startFailed(err: unknown): void {
    this.log.debug('loading saved vectors failed', { spaceId: this.ctx.space.spaceId, err: errField(err) })
  }

  /** Runs the backfill in the background; a storage failure (storage closing) ends it, noted at debug. */
  private kick() {
    if (this.closed) return
    const was = this.running
    const run = this.run().catch((err: unknown) => this.log.debug('the vector backfill stopped', { spaceId: this.ctx.space.spaceId, err: errField(err) }))
    if (!was && this.running) this.current = run
  }

  /** Stops the backfill (the space closes) after the batch it is on; what it saved stays. */
  async close(): Promise<void> {
    this.closed = true
    this.queue.clear()
    await this.current
  }

  private async run() {
    if (this.running || this.status !== 'ready') return
    const store = this.store
    const e = this.embedder
    if (!store || !e || this.queue.size === 0) return
    this.running = true
    const total = this.queue.size
    const progress = this.fts.work.start('index.embed', total)
    let done = 0
    try {
      while (!this.closed && this.queue.size > 0 && store === this.store && this.status === 'ready' && !store.full) {
        const keys = [...this.queue].slice(0, SEARCH_LIMITS.embedBatch)
        for (const k of keys) this.queue.delete(k)
        const texts: string[] = []
        const live: string[] = []
        for (const k of keys) {
          const t = await this.fts.textOf(k)
          if (t) {
            texts.push(t)
            live.push(k)
          }
        }
        let vs: Float32Array[]
        try {
          vs = await e.embed(texts)
        } catch (err) {
          for (const k of keys) this.queue.add(k)
          if (err instanceof EmbedderUnavailable) this.fail()
          break
        }
        const batch = emptyBatch()
        live.forEach((k, i) => store.put(k, vs[i], batch))
        await this.ctx.storage.commit(batch)
        done += keys.length
        progress(done, Math.max(total, done + this.queue.size))
      }
    } finally {
      this.fts.work.end('index.embed')
      this.running = false
    }
  }

  /** Resolves once the backfill has nothing left it can do now (tests). */
  async idle(): Promise<void> {
    while (this.running || (this.queue.size > 0 && this.status === 'ready' && this.store && !this.store.full)) {
      if (!this.running) this.kick()
      await new Promise<void>((r) => this.ctx.space.env.setTimer(5, r))
    }
  }
}
