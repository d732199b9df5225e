import type { FastifyInstance, FastifyReply } from 'fastify'
import type { FrameOp } from '../../sync/query/projection.ts'
import type { QuerySource } from '../../sync/query/source.ts'
import { LiveWindow, type ChangeSet, type ChangesFrame, type SubscribeBody } from '../../sync/query/index.ts'
import type { Doc } from '../../sync/space/rows.ts'
import type { SpaceChange, SpaceEngine } from '../../sync/space/space-engine.ts'
import type { AccountEngine } from '../../sync/space/account-engine.ts'
import type { CloseReason } from '../sse.ts'
import { openShared } from './live-share.ts'

/**
 * Windowed query/subscribe streams (spec Events): `ready`, one `snapshot` frame
 * `{records, total?, hasNext?}`, then `changes` frames `[{versionId, added, updated, removed}]`
 * (one entry per write; writes that arrive while a frame is being built share one frame), and
 * a terminal `closed`: `overflow` (the stream's mailbox, `mailboxCapacity`), `drifted` (the
 * window fell short beyond `driftBudgetPercent`), `sdk_closed` (the subscribed object was
 * deleted), `server_shutdown` / `deauthorized` (the hub).
 *
 * A feed adapts one engine collection to a LiveWindow: the change listener is registered
 * before the snapshot is read, so no write falls between the two (a write seen by both is
 * applied twice, which the window absorbs: an unchanged record makes no frame). Feeds with
 * `share` (the object rows) skip the per-stream pump: see live-share.ts.
 */
export interface LiveFeed {
  listen(onChange: (c: SpaceChange) => void): () => void
  /** The collection now (also the snapshot). Errors here answer as JSON before the stream opens. */
  load(): Promise<Iterable<Doc> | QuerySource>
  /** The window input of one change, or null when the change does not touch this collection. */
  translate(c: SpaceChange, window: LiveWindow): Promise<{ set: ChangeSet; ops?: Map<string, FrameOp[]>; end?: CloseReason } | null>
  /** Current documents, so the window re-selects instead of drifting (only for in-memory collections). */
  refill?: () => Iterable<Doc> | QuerySource
  /**
   * Set when `refill` is the whole collection, current whenever a change is announced, and a
   * change translates synchronously: subscriptions with the same query then share one window
   * and one serialized frame per write (live-share.ts). `scope` is the collection.
   */
  share?: { scope: object; translate: SharedTranslate }
}

/** `translate` without the wait: the window input of a change, or null when it does not touch the collection. */
export type SharedTranslate = (c: SpaceChange) => { set: ChangeSet; ops?: Map<string, FrameOp[]>; end?: CloseReason } | null

export async function openLive(app: FastifyInstance, reply: FastifyReply, body: SubscribeBody, feed: LiveFeed): Promise<void> {
  if (feed.share && feed.refill) return openShared(app, reply, body, feed, feed.share, feed.refill)
  const pending: SpaceChange[] = []
  let kick: (() => void) | undefined
  const off = feed.listen((c) => {
    pending.push(c)
    kick?.()
  })
  let window: LiveWindow
  try {
    const docs = await feed.load()
    window = new LiveWindow(docs, body.query, { driftBudgetPercent: body.driftBudgetPercent, ...(feed.refill ? { refill: feed.refill } : {}) })
  } catch (err) {
    off()
    throw err
  }
  const stream = app.sse.open(reply, { mailboxCapacity: body.mailboxCapacity })
  if (stream.closed) return void off()
  stream.onClose(() => off())
  stream.send('snapshot', window.snapshot)

  let running = false
  const pump = async () => {
    if (running) return
    running = true
    try {
      while (pending.length > 0 && !stream.closed) {
        const frames: ChangesFrame[] = []
        let end: CloseReason | undefined
        for (const c of pending.splice(0)) {
          const t = await feed.translate(c, window)
          if (!t) continue
          const frame = window.apply(t.set, t.ops)
          if (frame) frames.push(frame)
          if (window.drifted) end = 'drifted'
          else if (t.end) end = t.end
          if (end) break
        }
        if (frames.length > 0) stream.send('changes', frames)
        if (end) stream.close(end)
      }
    } catch (err) {
      reply.log.error({ err }, 'live query failed')
      stream.close('sdk_closed')
    } finally {
      running = false
    }
  }
  kick = () => void pump()
  if (pending.length > 0) kick()
}

const opsMap = (entries: Iterable<[string, FrameOp[]]>) => new Map(entries)

/**
 * `{S}/objects/query/subscribe`: the space's object rows (held in memory and refreshed before
 * a change is announced, so windows refill and identical queries share one).
 */
export function objectsFeed(space: SpaceEngine): LiveFeed {
  const translate: SharedTranslate = (c) => {
    if (c.objects.size === 0) return null
    const set: ChangeSet = { versionId: c.versionId, upserts: [], deletes: [] }
    const ops: Array<[string, FrameOp[]]> = []
    for (const id of c.objects) {
      const doc = space.objectDoc(id)
      if (doc) set.upserts.push(doc)
      else set.deletes.push(id)
      const rowOps = c.rowOps.get(id)
      if (rowOps) ops.push([id, rowOps])
    }
    return { set, ops: opsMap(ops) }
  }
  return {
    listen: (fn) => space.onChange(fn),
    // The indexed source itself: the window reads it synchronously in its constructor.
    load: async () => space.objectSource(),
    refill: () => space.objectSource(),
    translate: async (c) => translate(c),
    share: { scope: space, translate },
  }
}

/** `{S}/query/subscribe`: one object's records of one dataset. */
export function datasetFeed(space: SpaceEngine, objectId: string, dataset: string): LiveFeed {
  return {
    listen: (fn) => space.onChange(fn),
    load: () => space.datasetDocs(objectId, dataset),
    async translate(c, window) {
      const set: ChangeSet = { versionId: c.versionId, upserts: [], deletes: [] }
      if (c.objects.has(objectId) && !space.objectDoc(objectId)) {
        // The object was deleted: its records go with it, and so does the subscription.
        set.deletes = window.windowIds()
        return { set, end: 'sdk_closed' }
      }
      if (c.reloaded.has(objectId)) {
        set.upserts = await space.datasetDocs(objectId, dataset)
        const present = new Set(set.upserts.map((d) => d.id))
        set.deletes = window.windowIds().filter((id) => !present.has(id))
        return { set }
      }
      const touched = c.records.get(objectId)?.get(dataset)
      if (!touched) return null
      for (const id of touched.keys()) {
        const doc = await space.recordDoc(objectId, dataset, id)
        if (doc) set.upserts.push(doc)
        else set.deletes.push(id)
      }
      return { set, ops: opsMap(touched as Map<string, FrameOp[]>) }
    },
  }
}

/** `/v1/spaces/query/subscribe`: raw rows of the tech space's `spaces` or `profile` dataset. */
export function techFeed(account: AccountEngine, dataset: 'spaces' | 'profile'): LiveFeed {
  return {
    listen: (fn) => account.tech.onChange(fn),
    load: () => account.techDocs(dataset),
    async translate(c) {
      const touched = c.records.get(account.techObject)?.get(dataset)
      if (!touched) return null
      const now = new Map((await account.techDocs(dataset)).map((d) => [d.id, d]))
      const set: ChangeSet = { versionId: c.versionId, upserts: [], deletes: [] }
      for (const id of touched.keys()) {
        const doc = now.get(id)
        if (doc) set.upserts.push(doc)
        else set.deletes.push(id)
      }
      return { set, ops: opsMap(touched as Map<string, FrameOp[]>) }
    },
  }
}
