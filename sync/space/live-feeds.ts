import type { FrameOp } from '../query/projection.ts'
import type { QuerySource } from '../query/source.ts'
import type { ChangeSet, LiveWindow } from '../query/index.ts'
import type { AccountEngine } from './account-engine.ts'
import type { Doc } from './rows.ts'
import type { SpaceChange, SpaceEngine } from './space-engine.ts'
import { TECH_DS } from './schema.ts'

/**
 * Live feeds: each adapts one collection of a space to a LiveWindow, translating the space's
 * changes into window input. The HTTP layer (server/routes/live.ts) only streams what a feed
 * gives; modules declare their own feeds (SvcModule `feeds`) with this same shape.
 *
 * The change listener is registered before the snapshot is read, so no write falls between the
 * two (a write seen by both is applied twice, which the window absorbs: an unchanged record
 * makes no frame).
 */
export interface LiveFeed {
  listen(onChange: (c: SpaceChange) => void): () => void
  /** The collection now (also the snapshot). Errors here answer as JSON before the stream opens. */
  load(): Promise<Iterable<Doc> | QuerySource>
  /** The window input of one change, or null when the change does not touch this collection. */
  translate(c: SpaceChange, window: LiveWindow): Promise<FeedInput | null>
  /** Current documents, so the window re-selects instead of drifting (only for in-memory collections). */
  refill?: () => Iterable<Doc> | QuerySource
  /**
   * Set when `refill` is the whole collection, current whenever a change is announced, and a
   * change translates synchronously: subscriptions with the same query then share one window
   * and one serialized frame per write (server/routes/live-share.ts). `scope` is the collection.
   */
  share?: { scope: object; translate: SharedTranslate }
}

/** What one change does to a window; `end: 'sdk_closed'` ends the stream (its subject is gone). */
export interface FeedInput {
  set: ChangeSet
  ops?: Map<string, FrameOp[]>
  end?: 'sdk_closed'
}

/** `translate` without the wait: the window input of a change, or null when it does not touch the collection. */
export type SharedTranslate = (c: SpaceChange) => FeedInput | null

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
    listen: (fn) => space.events.on('change', fn),
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
    listen: (fn) => space.events.on('change', fn),
    load: () => space.datasetSource(objectId, dataset),
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
    listen: (fn) => account.tech.events.on('change', fn),
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

/**
 * `/v1/devices/query/subscribe`: the account's devices (records of the tech space's `devices`
 * dataset, each with its derived `pruned` flag, as `GET /v1/devices` lists them).
 */
export function devicesFeed(account: AccountEngine): LiveFeed {
  return {
    listen: (fn) => account.tech.events.on('change', fn),
    load: () => account.devices.docs(),
    async translate(c) {
      const touched = c.records.get(account.techObject)?.get(TECH_DS.devices)
      if (!touched) return null
      const now = new Map((await account.devices.docs()).map((d) => [d.id, d]))
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
