/**
 * The browser benchmark's page (bench/browser.ts drives it): a backlog of changes ingested into
 * a space on IndexedDB with the page's crypto, the same page's bare verify+open loop over the
 * same changes, and a cold open of the space from IndexedDB to its first query result.
 *
 * The fixture comes as one binary file (bench/browser.ts writes it): a JSON header (space id,
 * owner seed, read key, how many items are setup and backlog) and every change, length-prefixed.
 */
import { BROWSER_INGEST_AHEAD, browserCryptoProvider, browserEnv, IndexedDbStorageAdapter, runQuery, verifyInWorkers } from '../../../sync/browser/index.ts'
import { SpaceEngine } from '../../../sync/space/space-engine.ts'
import { DEFAULT_MODULES } from '../../../sync/modules/index.ts'
import { keyPairFromSeed, publicKeyOf } from '../../../sync/crypto/keys.ts'
import { decodeChange, signedBytesOf } from '../../../sync/dag/change.ts'
import { open } from '../../../sync/crypto/box.ts'

interface Header {
  spaceId: string
  ownerSeed: number[]
  readKey: number[]
  setup: number
  backlog: number
  /** Verify workers (undefined: the default openBrowserAccount uses). */
  verifyWorkers?: number
}

const DB = 'svc-bench'
const BATCH = 1000
const INFLIGHT = 4

async function load(url: string): Promise<{ h: Header; items: Array<{ id: string; raw: Uint8Array }> }> {
  const buf = new Uint8Array(await (await fetch(url)).arrayBuffer())
  const dv = new DataView(buf.buffer)
  const hlen = dv.getUint32(0)
  const h = JSON.parse(new TextDecoder().decode(buf.subarray(4, 4 + hlen))) as Header
  const items: Array<{ id: string; raw: Uint8Array }> = []
  let at = 4 + hlen
  while (at < buf.length) {
    const idLen = dv.getUint16(at)
    const id = new TextDecoder().decode(buf.subarray(at + 2, at + 2 + idLen))
    at += 2 + idLen
    const len = dv.getUint32(at)
    items.push({ id, raw: buf.slice(at + 4, at + 4 + len) })
    at += 4 + len
  }
  return { h, items }
}

/** Wall time spent waiting on storage by operation, and the commits' puts (where ingest's time goes). */
const waits: Record<string, number> = {}
function timed(a: IndexedDbStorageAdapter): IndexedDbStorageAdapter {
  const wrap = (k: 'get' | 'getMany' | 'scan' | 'commit') => {
    const f = (a[k] as (...args: unknown[]) => Promise<unknown>).bind(a)
    ;(a as unknown as Record<string, unknown>)[k] = async (...args: unknown[]) => {
      const t0 = performance.now()
      try {
        return await f(...args)
      } finally {
        waits[k] = (waits[k] ?? 0) + performance.now() - t0
      }
    }
  }
  for (const k of ['get', 'getMany', 'scan', 'commit'] as const) wrap(k)
  const commit = a.commit.bind(a)
  a.commit = (b) => {
    waits.commits = (waits.commits ?? 0) + 1
    waits.puts = (waits.puts ?? 0) + b.puts.length
    waits.putBytes = (waits.putBytes ?? 0) + b.puts.reduce((n, p) => n + p.value.length, 0)
    return commit(b)
  }
  return a
}

async function openEngine(h: Header) {
  const storage = timed(new IndexedDbStorageAdapter({ dbName: DB }))
  // The page's crypto as openBrowserAccount makes it: signatures verify in workers.
  const crypto = verifyInWorkers(await browserCryptoProvider(), { workers: h.verifyWorkers })
  const engine = await SpaceEngine.open({ storage, crypto, env: browserEnv }, h.spaceId, keyPairFromSeed(new Uint8Array(h.ownerSeed)), { modules: DEFAULT_MODULES })
  return { storage, crypto, engine }
}

const bench = {
  /**
   * Raw IndexedDB: `n` records of `bytes` each, keyed [store, key], in readwrite transactions
   * of `per` (relaxed durability), one after another: what the ingest's puts cost written one
   * record per key, as the first adapter did. The adapter today writes one record per commit.
   */
  async rawIdb(n: number, bytes: number, per: number) {
    const name = 'svc-bench-raw'
    await new Promise<void>((resolve) => {
      const req = indexedDB.deleteDatabase(name)
      req.onsuccess = req.onerror = req.onblocked = () => resolve()
    })
    const db = await new Promise<IDBDatabase>((resolve, reject) => {
      const req = indexedDB.open(name, 1)
      req.onupgradeneeded = () => req.result.createObjectStore('kv')
      req.onsuccess = () => resolve(req.result)
      req.onerror = () => reject(req.error)
    })
    const value = new Uint8Array(bytes).fill(7)
    const t0 = performance.now()
    for (let i = 0; i < n; i += per) {
      const tx = db.transaction('kv', 'readwrite', { durability: 'relaxed' })
      const os = tx.objectStore('kv')
      for (let j = i; j < Math.min(n, i + per); j++) os.put(value, ['changes', `k${String(j).padStart(8, '0')}`])
      await new Promise<void>((resolve, reject) => {
        tx.oncomplete = () => resolve()
        tx.onabort = () => reject(tx.error)
      })
    }
    const ms = performance.now() - t0
    db.close()
    return { ms }
  },
  /** Ingests setup, then the timed backlog, then the rest (untimed), batch by batch as head sync delivers. */
  async ingest(url: string) {
    await new Promise<void>((resolve) => {
      const req = indexedDB.deleteDatabase(DB)
      req.onsuccess = req.onerror = req.onblocked = () => resolve()
    })
    const { h, items } = await load(url)
    const { storage, crypto, engine } = await openEngine(h)
    // Up to BROWSER_INGEST_AHEAD batches are checked (signatures verified) while earlier ones
    // apply and commit, as the page's sync session runs them (sync/browser/sync.ts).
    const feed = async (part: typeof items) => {
      const inflight: Array<Promise<{ rejected: unknown[] }>> = []
      const settle = async () => {
        const rep = await inflight.shift()!
        if (rep.rejected.length) throw new Error(`rejected: ${JSON.stringify(rep.rejected[0])}`)
      }
      for (let i = 0; i < part.length; i += BATCH) {
        inflight.push(engine.replica.ingest(part.slice(i, i + BATCH)))
        if (inflight.length > BROWSER_INGEST_AHEAD) await settle()
      }
      while (inflight.length) await settle()
      await engine.settled()
    }
    await feed(items.slice(0, h.setup))
    for (const k in waits) delete waits[k]
    const t0 = performance.now()
    await feed(items.slice(h.setup, h.setup + h.backlog))
    const ingestMs = performance.now() - t0
    const storageWaitMs = Object.fromEntries(Object.entries(waits).map(([k, v]) => [k, Math.round(v)]))
    await feed(items.slice(h.setup + h.backlog))
    const objects = [...engine.objectDocs()].length
    await storage.close()
    const workers = crypto.workersReady()
    const by = crypto.verifiedBy()
    crypto.close()
    return { ingestMs, storageWaitMs, changes: h.backlog, objects, verifier: `${crypto.name} (${workers} ready; ${by.workers} in workers, ${by.page} on the page)` }
  },

  /**
   * The bare loop every received change needs at least, on the page's provider: open its
   * payload and verify its signature, BATCH per step, INFLIGHT steps in flight (bench/core.ts
   * `bareOpenVerifyMs`, in the page).
   */
  async bare(url: string) {
    const { h, items } = await load(url)
    const crypto = await browserCryptoProvider()
    const readKey = new Uint8Array(h.readKey)
    const pubs = new Map<string, Uint8Array>()
    const pubOf = (a: string) => pubs.get(a) ?? (pubs.set(a, publicKeyOf(a)), pubs.get(a)!)
    const prepared = items.slice(h.setup, h.setup + h.backlog).map(({ raw }) => {
      const c = decodeChange(raw)
      return { pub: c.author === '' ? undefined : pubOf(c.author), msg: signedBytesOf(c), sig: c.signature, payload: c.payload, root: c.treeId === '' }
    })
    // What ingest cannot skip for these changes: every signature (derived roots carry none)
    // and every payload but a tree root's (a root's payload is not sealed).
    const signed = prepared.filter((p) => p.pub !== undefined)
    const t0 = performance.now()
    let ok = 0
    const inflight: Array<Promise<boolean[]>> = []
    const settle = async () => (ok += (await inflight.shift()!).filter(Boolean).length)
    for (let i = 0; i < prepared.length; i += BATCH) {
      const part = prepared.slice(i, i + BATCH)
      for (const p of part) if (!p.root) open(readKey, p.payload, undefined, crypto.aead)
      inflight.push(Promise.all(part.filter((p) => p.pub !== undefined).map((p) => crypto.verify(p.pub!, p.msg, p.sig))))
      if (inflight.length >= INFLIGHT) await settle()
    }
    while (inflight.length) await settle()
    if (ok !== signed.length) throw new Error(`bare loop: ${signed.length - ok} signatures failed`)
    return { bareMs: performance.now() - t0, verified: signed.length, opened: prepared.filter((p) => !p.root).length }
  },

  /** In a freshly loaded page: open the space from IndexedDB and answer a first object query. */
  async coldOpen(spaceId: string, ownerSeed: number[], name: string) {
    const t0 = performance.now()
    const { storage, crypto, engine } = await openEngine({ spaceId, ownerSeed } as Header)
    const first = runQuery(engine.objectSource(), { filter: { 'core.name': { $eq: name } }, limit: 10 })
    const ms = performance.now() - t0
    const objects = [...engine.objectDocs()].length
    await storage.close()
    crypto.close()
    return { ms, found: first.records.length, objects }
  },
}
;(window as unknown as { bench: typeof bench }).bench = bench
