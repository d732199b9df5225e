import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { SqliteStorageAdapter } from '../../node/storage/sqlite.ts'
import { decodeCanonical, encodeCanonical } from '../../sync/core/encoding.ts'
import { SpaceReplica } from '../../sync/replica/space-replica.ts'
import { LEGACY_VERSION_SEQ_KEY, versionSeqKey } from '../../sync/replica/storage-keys.ts'
import { modifyRecords } from '../../sync/space/modify.ts'
import { STORES, type StorageAdapter, type WriteBatch } from '../../sync/storage/adapter.ts'
import { MemoryStorageAdapter } from '../../sync/storage/memory.ts'
import { deps, keyFor } from '../helpers.ts'

/** One write of one record: one change, one version. */
const put = (r: SpaceReplica, obj: string, value: number) => modifyRecords(r, obj, 'd', [{ id: `r${value % 4}`, ops: [{ type: '$set', path: 'n', value }] }])
const version = async (p: Promise<{ versionId: string }>) => Number((await p).versionId)

/** The meta rows of the account's store, as the replicas left them. */
async function metaRows(storage: StorageAdapter): Promise<Record<string, number>> {
  const out: Record<string, number> = {}
  for (const [k, v] of await storage.scan(STORES.meta)) if (k.startsWith('versionSeq')) out[k] = decodeCanonical<number>(v)
  return out
}

describe("each space's versionId is its own and never goes back (issue 42)", () => {
  it('spaces A and B in one SQLite store: after B writes and a restart, A writes above everything it handed out', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'svc-version-seq-'))
    const path = join(dir, 'engine.db')
    try {
      let storage = new SqliteStorageAdapter(path)
      const a = await SpaceReplica.create(await deps(1, storage), keyFor(1))
      const b = await SpaceReplica.create(await deps(5, storage), keyFor(1))
      expect(a.spaceId).not.toBe(b.spaceId)
      const objA = await a.createObject()
      const objB = await b.createObject()
      const seenA: number[] = []
      for (let i = 0; i < 20; i++) seenA.push(await version(put(a, objA, i)))
      const lastB = await version(put(b, objB, 0))
      // Strictly increasing within the session, each space on its own count.
      expect(seenA).toEqual([...seenA].sort((x, y) => x - y))
      expect(new Set(seenA).size).toBe(seenA.length)
      expect(lastB).toBeLessThan(seenA.at(-1)!)
      await storage.close()

      storage = new SqliteStorageAdapter(path)
      const a2 = await SpaceReplica.open(await deps(2, storage), a.spaceId, keyFor(1))
      const b2 = await SpaceReplica.open(await deps(2, storage), b.spaceId, keyFor(1))
      // Reopened at the version each handed out last, not at the one of whichever space wrote last.
      expect(Number(a2.versionId())).toBe(seenA.at(-1))
      expect(Number(b2.versionId())).toBe(lastB)
      expect(await version(put(a2, objA, 100))).toBeGreaterThan(seenA.at(-1)!)
      expect(await version(put(b2, objB, 100))).toBeGreaterThan(lastB)
      // One key per space, none shared.
      expect(Object.keys(await metaRows(storage)).sort()).toEqual([versionSeqKey(a.spaceId), versionSeqKey(b.spaceId)].sort())
      await storage.close()
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })

  it('a store written before issue 42 (one shared counter) opens; each space starts past what it handed out', async () => {
    const storage = new MemoryStorageAdapter()
    const a = await SpaceReplica.create(await deps(1, storage), keyFor(1))
    const b = await SpaceReplica.create(await deps(5, storage), keyFor(1))
    expect(a.spaceId).not.toBe(b.spaceId)
    const objA = await a.createObject()
    const objB = await b.createObject()
    let lastA = 0
    for (let i = 0; i < 12; i++) lastA = await version(put(a, objA, i))
    const lastB = await version(put(b, objB, 0))
    expect(lastB).toBeLessThan(lastA)
    // The layout of earlier builds: no key per space, one counter holding what B wrote last.
    await storage.commit({
      puts: [{ store: STORES.meta, key: LEGACY_VERSION_SEQ_KEY, value: encodeCanonical(lastB) }],
      dels: [
        { store: STORES.meta, key: versionSeqKey(a.spaceId) },
        { store: STORES.meta, key: versionSeqKey(b.spaceId) },
      ],
    })

    const a2 = await SpaceReplica.open(await deps(2, storage), a.spaceId, keyFor(1))
    const b2 = await SpaceReplica.open(await deps(2, storage), b.spaceId, keyFor(1))
    // A's last write's records carry its version: A starts there, not at B's shared value.
    expect(Number(a2.versionId())).toBe(lastA)
    expect(Number(b2.versionId())).toBe(lastB)
    // Carried over once, under each space's own key; the shared one is left as it was.
    expect(await metaRows(storage)).toEqual({ [LEGACY_VERSION_SEQ_KEY]: lastB, [versionSeqKey(a.spaceId)]: lastA, [versionSeqKey(b.spaceId)]: lastB })
    expect(await version(put(a2, objA, 100))).toBeGreaterThan(lastA)
    // A space that came after (nothing of it stored) starts at 0 and gets no key until it commits.
    const c = await SpaceReplica.open(await deps(3, storage), 'UnknownSpace', keyFor(1))
    expect(c.versionId()).toBe('0')
    expect(Object.keys(await metaRows(storage))).not.toContain(versionSeqKey('UnknownSpace'))
  })

  it('a batch that failed to commit leaves no number behind: the next commit takes a new one, before and after a restart', async () => {
    class Failing extends MemoryStorageAdapter {
      fail = false
      override async commit(batch: WriteBatch) {
        if (this.fail) throw new Error('disk full')
        return super.commit(batch)
      }
    }
    const storage = new Failing()
    const a = await SpaceReplica.create(await deps(1, storage), keyFor(1))
    const obj = await a.createObject()
    const v1 = await version(put(a, obj, 1))
    storage.fail = true
    await expect(put(a, obj, 2)).rejects.toThrow('disk full')
    storage.fail = false
    // What a reader sees is the last version stored, not the number the failed batch took.
    expect(Number(a.versionId())).toBe(v1)
    const v2 = await version(put(a, obj, 3))
    expect(v2).toBeGreaterThan(v1 + 1)
    const again = await SpaceReplica.open(await deps(2, storage), a.spaceId, keyFor(1))
    expect(Number(again.versionId())).toBe(v2)
  })
})
