import { describe, expect, it } from 'vitest'
import { DEFAULT_MODULES } from '../../sync/modules/index.ts'
import { SEARCH_LIMITS, SEARCH_STORES } from '../../sync/modules/search/limits.ts'
import { FtsStore } from '../../sync/modules/search/fts-store.ts'
import { searchModule } from '../../sync/modules/search/module.ts'
import { IndexWork } from '../../sync/modules/search/processes.ts'
import { reciprocalRankFusion } from '../../sync/modules/search/rrf.ts'
import { runSearch } from '../../sync/modules/search/search.ts'
import { snippet } from '../../sync/modules/search/text.ts'
import { SpaceEngine } from '../../sync/space/space-engine.ts'
import { LiveWindow } from '../../sync/query/live.ts'
import { MemoryStorageAdapter } from '../../sync/storage/memory.ts'
import { deps, keyFor } from '../helpers.ts'
import { twoMembers } from '../space/helpers.ts'

const idx = (e: SpaceEngine) => e.services.of(searchModule)
const ids = async (e: SpaceEngine, query: string) => (await runSearch(idx(e), { query, mode: 'fts', limit: 200 })).hits.map((h) => h.objectId)
const named = (name: string, description = '') => ({ initialProperties: { core: { name, description } } })

describe('peers: edits and deletes that arrive by sync show in results', () => {
  it("B's index follows A's creates, renames and deletes after each sync, and the other way", async () => {
    const { a, b, sync } = await twoMembers()
    const o1 = await a.createObject(named('Aurora borealis'))
    const o2 = await a.createObject(named('Zodiacal light'))
    await sync()
    expect(await ids(b, 'aurora')).toEqual([o1])
    await a.services.types.setValues(o1, 'core', { name: 'Noctilucent clouds' })
    await a.deleteObject(o2)
    await sync()
    expect(await ids(b, 'aurora')).toEqual([])
    expect(await ids(b, 'noctilucent')).toEqual([o1])
    expect(await ids(b, 'zodiacal')).toEqual([])
    const o3 = await b.createObject(named('Gegenschein'))
    await sync()
    expect(await ids(a, 'gegenschein')).toEqual([o3])
  })
})

describe('restart: the saved index is loaded, not rebuilt', () => {
  async function openAgain(storage: MemoryStorageAdapter, spaceId: string) {
    const e = await SpaceEngine.open(await deps(1, storage), spaceId, keyFor(1), { modules: DEFAULT_MODULES })
    await idx(e).settled()
    return e
  }

  it('loads base and deltas on reopen (no build); a missing index is rebuilt in the background', async () => {
    const storage = new MemoryStorageAdapter()
    const a = await SpaceEngine.create(await deps(1, storage), keyFor(1), { modules: DEFAULT_MODULES })
    await idx(a).settled()
    const made: string[] = []
    for (let i = 0; i < 60; i++) made.push(await a.createObject(named(`Comet ${i}`, i % 2 ? 'periodic tail' : 'sungrazer')))
    await idx(a).settled()
    expect(idx(a).stats.builds).toBe(1)

    const b = await openAgain(storage, a.spaceId)
    // Current on disk: it stays there until the first search loads it.
    expect(idx(b).stats).toEqual({ builds: 0, loads: 0, evictions: 0 })
    expect(idx(b).loaded).toBeUndefined()
    expect((await ids(b, 'sungrazer')).length).toBe(30)
    expect(idx(b).stats).toEqual({ builds: 0, loads: 1, evictions: 0 })
    // More writes after the restart land in deltas; a second restart replays them.
    await b.deleteObject(made[1])
    await b.createObject(named('Halley'))
    await idx(b).settled()
    const c = await openAgain(storage, a.spaceId)
    expect((await ids(c, 'periodic')).length).toBe(29)
    expect(idx(c).stats).toEqual({ builds: 0, loads: 1, evictions: 0 })
    expect((await ids(c, 'halley')).length).toBe(1)

    // The index's rows gone (a wiped cache): the next open builds it again, with the same answers.
    const rows = await storage.scan(SEARCH_STORES.fts, { prefix: a.spaceId + '/' })
    await storage.commit({ puts: [], dels: rows.map(([key]) => ({ store: SEARCH_STORES.fts, key })) })
    const d = await openAgain(storage, a.spaceId)
    expect(idx(d).stats).toEqual({ builds: 1, loads: 0, evictions: 0 })
    expect((await ids(d, 'periodic')).length).toBe(29)
  })

  it('compacts the deltas into a base once commits pause, so a restart replays none', async () => {
    const limits = SEARCH_LIMITS as { compactIdleOps: number; compactIdleMs: number }
    const saved = { ...limits }
    limits.compactIdleOps = 20
    limits.compactIdleMs = 200
    try {
      const storage = new MemoryStorageAdapter()
      const a = await SpaceEngine.create(await deps(1, storage), keyFor(1), { modules: DEFAULT_MODULES })
      // Compaction rewrites the index from memory: a searched space's.
      await idx(a).searchable()
      for (let i = 0; i < 30; i++) await a.createObject(named(`Nebula ${i}`, 'emission'))
      await idx(a).settled()
      const store = new FtsStore(storage, a.spaceId)
      const before = (await store.meta())!
      expect(before.deltas).toBeGreaterThan(0)
      // A pause with no commit: the next turn of the timer writes a base.
      const deadline = Date.now() + 5_000
      while ((await store.meta())!.deltas > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50))
      const after = (await store.meta())!
      expect(after).toMatchObject({ deltas: 0, opsSinceBase: 0, gen: before.gen + 1 })
      expect(after.baseDocs).toBeGreaterThanOrEqual(30)
      const b = await openAgain(storage, a.spaceId)
      expect((await ids(b, 'emission')).length).toBe(30)
      expect(idx(b).stats).toEqual({ builds: 0, loads: 1, evictions: 0 })
    } finally {
      Object.assign(limits, saved)
    }
  })

  it('an index left on disk saves what moves as deltas (deletes included), and a load shows all of it', async () => {
    const storage = new MemoryStorageAdapter()
    const a = await SpaceEngine.create(await deps(1, storage), keyFor(1), { modules: DEFAULT_MODULES })
    const made: string[] = []
    for (let i = 0; i < 10; i++) made.push(await a.createObject(named(`Quasar ${i}`, 'radio loud')))
    await idx(a).settled()
    const b = await openAgain(storage, a.spaceId)
    expect(idx(b).loaded).toBeUndefined()
    await b.deleteObject(made[0])
    await b.services.types.setValues(made[1], 'core', { name: 'Blazar', description: '' })
    const fresh = await b.createObject(named('Seyfert galaxy'))
    await idx(b).settled()
    // Still on disk: the drain wrote its operations without loading anything.
    expect(idx(b).loaded).toBeUndefined()
    const meta = (await new FtsStore(storage, a.spaceId).meta())!
    expect(meta.versionSeq).toBe(b.replica.versionId())
    expect(meta.deltas).toBeGreaterThan(0)
    // Each answer is what a replica that had the index in memory all along gives.
    const expectAnswers = async (e: SpaceEngine) => {
      expect((await ids(e, 'radio')).sort()).toEqual(made.slice(2).sort())
      expect(await ids(e, 'quasar')).not.toContain(made[0])
      expect(await ids(e, 'blazar')).toEqual([made[1]])
      expect(await ids(e, 'seyfert')).toEqual([fresh])
    }
    await expectAnswers(b)
    expect(idx(b).stats).toEqual({ builds: 0, loads: 1, evictions: 0 })
    const c = await openAgain(storage, a.spaceId)
    await expectAnswers(c)
    expect(idx(c).stats.builds).toBe(0)
  })

  it('on disk, deltas past maxOpsOnDisk are compacted once commits pause (a first search then replays little)', async () => {
    const limits = SEARCH_LIMITS as { maxOpsOnDisk: number; compactIdleMs: number }
    const saved = { ...limits }
    limits.maxOpsOnDisk = 5
    limits.compactIdleMs = 100
    try {
      const storage = new MemoryStorageAdapter()
      const a = await SpaceEngine.create(await deps(1, storage), keyFor(1), { modules: DEFAULT_MODULES })
      for (let i = 0; i < 10; i++) await a.createObject(named(`Pulsar ${i}`, 'millisecond'))
      await idx(a).settled()
      const store = new FtsStore(storage, a.spaceId)
      const before = (await store.meta())!
      expect(before.opsSinceBase).toBeGreaterThan(5)
      const deadline = Date.now() + 5_000
      while ((await store.meta())!.deltas > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 25))
      expect(await store.meta()).toMatchObject({ deltas: 0, opsSinceBase: 0, gen: before.gen + 1 })
      expect(idx(a).stats.loads).toBe(1)
      expect((await ids(a, 'millisecond')).length).toBe(10)
    } finally {
      Object.assign(limits, saved)
    }
  })

  it('leaves memory after a pause with no search, and the next search loads it with what came meanwhile', async () => {
    const limits = SEARCH_LIMITS as { residentIdleMs: number }
    const saved = limits.residentIdleMs
    limits.residentIdleMs = 150
    try {
      const a = await SpaceEngine.create(await deps(1, new MemoryStorageAdapter()), keyFor(1), { modules: DEFAULT_MODULES })
      const o = await a.createObject(named('Magnetar'))
      expect(await ids(a, 'magnetar')).toEqual([o])
      const deadline = Date.now() + 5_000
      while (idx(a).loaded && Date.now() < deadline) await new Promise((r) => setTimeout(r, 25))
      expect(idx(a).stats.evictions).toBe(1)
      await a.deleteObject(o)
      const p = await a.createObject(named('Magnetic star'))
      expect(await ids(a, 'magne')).toEqual([p])
      expect(idx(a).stats).toMatchObject({ builds: 1, loads: 2, evictions: 1 })
    } finally {
      limits.residentIdleMs = saved
    }
  })

  it('a replica that moved on without the index (changes not drained before a crash) rebuilds', async () => {
    const storage = new MemoryStorageAdapter()
    const a = await SpaceEngine.create(await deps(1, storage), keyFor(1), { modules: DEFAULT_MODULES })
    await a.createObject(named('Pulsar'))
    await idx(a).settled()
    // A write the index never saw: the saved version is behind the replica's.
    await a.replica.createObject({})
    const b = await SpaceEngine.open(await deps(1, storage), a.spaceId, keyFor(1), { modules: DEFAULT_MODULES })
    await idx(b).settled()
    expect(idx(b).stats.builds).toBe(1)
    expect((await ids(b, 'pulsar')).length).toBe(1)
  })
})

describe('$text in a live window follows the index', () => {
  it('a window opened with $text tests later rows against the current index', async () => {
    const { a } = await twoMembers()
    const first = await a.createObject(named('Meteor shower'))
    // In memory, as once anything has searched the space.
    await idx(a).searchable()
    const w = new LiveWindow(a.objectSource(), { filter: { $text: { $search: 'meteor' } }, limit: 10 })
    expect(w.snapshot.records.map((r) => r.id)).toEqual([first])
    expect(w.query.filter.textVia).toBe('index')
    const later = await a.createObject(named('Meteorite'))
    expect(w.query.filter.test(a.objectDoc(later)!)).toBe(true)
    // "eteor" is a substring of both, but no word starts with it: the index says no.
    const w2 = new LiveWindow(a.objectSource(), { filter: { $text: { $search: 'eteor' } }, limit: 10 })
    expect(w2.snapshot.records).toEqual([])
    expect(w2.query.filter.test(a.objectDoc(later)!)).toBe(false)
  })

  it('with the index on disk, $text scans once and brings the index into memory for the next query', async () => {
    const storage = new MemoryStorageAdapter()
    const a = await SpaceEngine.create(await deps(1, storage), keyFor(1), { modules: DEFAULT_MODULES })
    const o = await a.createObject(named('Meteor shower'))
    await idx(a).settled()
    const b = await SpaceEngine.open(await deps(1, storage), a.spaceId, keyFor(1), { modules: DEFAULT_MODULES })
    await idx(b).settled()
    const w = new LiveWindow(b.objectSource(), { filter: { $text: { $search: 'meteor' } }, limit: 10 })
    expect(w.query.filter.textVia).toBe('scan')
    expect(w.snapshot.records.map((r) => r.id)).toEqual([o])
    const deadline = Date.now() + 5_000
    while (!idx(b).loaded && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10))
    const w2 = new LiveWindow(b.objectSource(), { filter: { $text: { $search: 'meteor' } }, limit: 10 })
    expect(w2.query.filter.textVia).toBe('index')
    expect(w2.snapshot.records.map((r) => r.id)).toEqual([o])
  })
})

describe('processes: index work announces itself only after 3 s', () => {
  it('lists a build past 3 s with its progress, and nothing once it ends', () => {
    let now = 1_000
    const w = new IndexWork('S1', () => now)
    const progress = w.start('index.fts', 100)
    progress(40)
    now += 2_999
    expect(w.list()).toEqual([])
    now += 1
    expect(w.list()).toEqual([
      { id: 'index.fts.S1', kind: 'index.fts', state: 'running', startedAt: { $date: new Date(1_000).toISOString() }, spaceId: 'S1', progress: { done: 40, total: 100 } },
    ])
    w.end('index.fts')
    expect(w.list()).toEqual([])
  })
})

describe('fusion and snippets', () => {
  it('reciprocal rank fusion ranks a document both lists hold first', () => {
    const fused = reciprocalRankFusion([
      ['a', 'b', 'c'],
      ['c', 'd', 'a'],
    ])
    expect(fused.map((f) => f.key).slice(0, 2)).toEqual(['a', 'c'])
    expect(fused[0].score).toBeCloseTo(1 / 61 + 1 / 63)
  })

  it('a snippet marks matched words (prefix, folded) and never cuts a surrogate pair', () => {
    const s = snippet('Über das Café: 😀 große Kaffeebohnen', ['cafe', 'kaffee'])
    expect(s.ranges.map(([x, y]) => s.text.slice(x, y))).toEqual(['Café', 'Kaffeebohnen'])
    const long = '😀'.repeat(200) + ' needle'
    const t = snippet(long, ['needle'])
    expect(t.text.endsWith('needle')).toBe(true)
    expect(t.text.charCodeAt(0) >= 0xd800 && t.text.charCodeAt(0) <= 0xdbff).toBe(true)
  })
})
