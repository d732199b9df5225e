import { LiveWindow, type ChangesFrame, type QueryOptions, type QueryResult } from '../query/index.ts'
import { datasetFeed, objectsFeed, type LiveFeed } from '../space/live-feeds.ts'
import type { SpaceChange, SpaceEngine } from '../space/space-engine.ts'

/** A live query held by the page: its snapshot, then `onChanges` for every write that moves it. */
export interface LiveQuery {
  readonly snapshot: QueryResult
  /** Why it ended on its own: `drifted` (re-run the query) or `sdk_closed` (its object was deleted). */
  readonly ended: 'drifted' | 'sdk_closed' | undefined
  close(): void
}

export interface LiveQueryOptions {
  driftBudgetPercent?: number
  onChanges(frames: ChangesFrame[]): void
  onEnd?(reason: 'drifted' | 'sdk_closed'): void
}

/**
 * A windowed live query over one of the space's feeds (sync/space/live-feeds.ts), as the
 * daemon's `.../subscribe` routes serve it, without SSE: the same LiveWindow, the same frames
 * (`{versionId, added, updated, removed}`), for local writes and for changes sync brings alike.
 * The listener is registered before the snapshot is read, so no write falls between them.
 */
export async function liveQuery(feed: LiveFeed, query: QueryOptions, o: LiveQueryOptions): Promise<LiveQuery> {
  const pending: SpaceChange[] = []
  let closed = false
  let ended: LiveQuery['ended']
  let running = false
  let window!: LiveWindow
  const pump = async () => {
    if (running || !window) return
    running = true
    try {
      while (pending.length > 0 && !closed) {
        const frames: ChangesFrame[] = []
        for (const c of pending.splice(0)) {
          const t = await feed.translate(c, window)
          if (!t) continue
          const frame = window.apply(t.set, t.ops)
          if (frame) frames.push(frame)
          const end = window.drifted ? 'drifted' : t.end
          if (end) {
            ended = end
            break
          }
        }
        if (frames.length > 0) o.onChanges(frames)
        if (ended) {
          handle.close()
          o.onEnd?.(ended)
        }
      }
    } finally {
      running = false
    }
  }
  const off = feed.listen((c) => {
    pending.push(c)
    void pump()
  })
  try {
    window = new LiveWindow(await feed.load(), query, { driftBudgetPercent: o.driftBudgetPercent, ...(feed.refill ? { refill: feed.refill } : {}) })
  } catch (err) {
    off()
    throw err
  }
  const handle: LiveQuery = {
    snapshot: window.snapshot,
    get ended() {
      return ended
    },
    close() {
      closed = true
      off()
    },
  }
  void pump()
  return handle
}

/** A live query over the space's objects (`{S}/objects/query/subscribe`). */
export const liveObjects = (space: SpaceEngine, query: QueryOptions, o: LiveQueryOptions) => liveQuery(objectsFeed(space), query, o)

/** A live query over one dataset of an object (`{S}/query/subscribe`). */
export const liveRecords = (space: SpaceEngine, objectId: string, dataset: string, query: QueryOptions, o: LiveQueryOptions) =>
  liveQuery(datasetFeed(space, objectId, dataset), query, o)
