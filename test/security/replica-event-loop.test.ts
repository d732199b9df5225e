import { beforeAll, describe, expect, it } from 'vitest'
import { nodeCryptoProvider } from '../../node/crypto/node-provider.ts'
import type { Env } from '../../sync/core/env.ts'
import { decodeChange } from '../../sync/dag/change.ts'
import { SpaceReplica, type ReplicaDeps } from '../../sync/replica/space-replica.ts'
import type { IngestItem } from '../../sync/replica/types.ts'
import { MemoryStorageAdapter } from '../../sync/storage/memory.ts'
import { keyFor, seededEnv } from '../helpers.ts'

const OBJECTS = 10
const PER_OBJECT = 150
// Verifies inline: no thread-pool callback gives the event loop a turn by accident, so any
// turn it gets during an ingest is one the replica gave.
const crypto = nodeCryptoProvider({ verify: 'sync' })
const macrotask = () => new Promise<void>((r) => setImmediate(r))

function replicaDeps(seed: number, yields: boolean): ReplicaDeps {
  const env: Env = { ...seededEnv(seed), ...(yields ? { yield: macrotask } : {}) }
  return { storage: new MemoryStorageAdapter(), crypto, env, limits: { applySliceChanges: 64, checkSliceItems: 64 } }
}

/** Counts macrotasks that run while `work` is under way, checking `probe` in each. */
async function duringWork<T>(work: () => Promise<T>, probe: () => Promise<void> | void): Promise<{ result: T; turns: number }> {
  let turns = 0
  let running = true
  const probes: Promise<void>[] = []
  const tick = () => {
    if (!running) return
    turns++
    probes.push(Promise.resolve(probe()))
    setImmediate(tick)
  }
  setImmediate(tick)
  const result = await work()
  running = false
  await Promise.all(probes)
  return { result, turns }
}

describe('an honest backlog holds the event loop for a whole sync step while it applies', () => {
  let source: SpaceReplica
  let items: IngestItem[]
  beforeAll(async () => {
    source = await SpaceReplica.create(replicaDeps(1, false), keyFor(1))
    for (let o = 0; o < OBJECTS; o++) {
      const obj = await source.createObject()
      for (let i = 0; i < PER_OBJECT; i++) await source.write(obj, [{ op: 'set', ds: 'd', id: `r${i % 7}`, path: 'v', value: i }])
    }
    items = (await source.allChanges()).map(({ id, raw }) => ({ id, raw }))
  }, 60_000)

  it('a macrotask scheduled as a large ingest starts runs many times before the ingest finishes', async () => {
    const r = await SpaceReplica.open(replicaDeps(2, true), source.spaceId, keyFor(1))
    const { result, turns } = await duringWork(
      () => r.ingest(items),
      () => undefined,
    )
    expect(result.accepted.length).toBe(items.length)
    // Decoding and applying 1,500 changes in slices of 64: dozens of turns; unsliced, none.
    expect(turns).toBeGreaterThanOrEqual(20)
  })

  it('the apply stage alone (changes already checked) gives the event loop turns too', async () => {
    const r = await SpaceReplica.open(replicaDeps(3, true), source.spaceId, keyFor(1))
    const changes = items.map((it) => ({ change: decodeChange(it.raw) }))
    const { result, turns } = await duringWork(
      () => r.applyVerified(changes),
      () => undefined,
    )
    expect(result.accepted.length).toBe(items.length)
    expect(turns).toBeGreaterThanOrEqual(10)
  })

  it('whatever runs in between sees only committed changes, whole slices at a time', async () => {
    const storage = new MemoryStorageAdapter()
    const r = await SpaceReplica.open({ ...replicaDeps(4, true), storage }, source.spaceId, keyFor(1))
    const committed = new Set<string>()
    let commits = 0
    r.addCommitListener((info) => {
      commits++
      for (const id of info.changeIds) committed.add(id)
    })
    const seenHeads = new Set<string>()
    const probe = async () => {
      // Every head a reader can see is committed, and stored.
      const trees = r.treeIds()
      for (const t of trees) {
        for (const h of r.heads(t)) {
          expect(committed.has(h)).toBe(true)
          seenHeads.add(h)
        }
        expect((await r.rawChanges(t, r.heads(t))).length).toBe(r.heads(t).length)
      }
    }
    const { result, turns } = await duringWork(() => r.ingest(items), probe)
    expect(result.accepted.length).toBe(items.length)
    expect(turns).toBeGreaterThanOrEqual(20)
    expect(commits).toBeGreaterThan(1)
    expect(committed.size).toBe(items.length)
    // The probe saw intermediate states, not only the end.
    expect(seenHeads.size).toBeGreaterThan(OBJECTS)
  })

  it('sliced and unsliced ingests of one backlog reach the same state, byte for byte', async () => {
    const sliced = await SpaceReplica.open(replicaDeps(5, true), source.spaceId, keyFor(1))
    const whole = await SpaceReplica.open(replicaDeps(5, false), source.spaceId, keyFor(1))
    // Out of causal order, so the retry pass and the commits between slices interleave.
    const shuffled = [...items].reverse()
    const a = await sliced.ingest(shuffled)
    const b = await whole.ingest(shuffled)
    expect(a.accepted.length).toBe(items.length)
    expect([...a.accepted].sort()).toEqual([...b.accepted].sort())
    expect(await sliced.stateDigest()).toBe(await whole.stateDigest())
    expect(await sliced.stateDigest()).toBe(await source.stateDigest())
  })
})
