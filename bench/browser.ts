/**
 * Browser benchmark (issue 17), in real headless Chromium (test/browser/harness.ts):
 *
 * - ingestVsBare: a backlog of BACKLOG changes (objects created by one writer: a tree root and
 *   a row write each) ingested into a space on IndexedDB in the page, batch by batch as head
 *   sync delivers them, against the same page's bare verify+open loop over the same changes
 *   (bench/core.ts's baseline, in the page; target >= 0.7). Both use the page's crypto
 *   (WebCrypto Ed25519 in Chromium).
 *   Also: ingestVsStorageFloor, the same ratio against raw IndexedDB writes of as many puts,
 *   bytes and commits as the ingest made (IndexedDB, one round trip to the browser process per
 *   request, is what bounds ingest in a page: ingest's commits wait as long as the floor).
 * - coldOpenMs: the space, OBJECTS objects, opened from IndexedDB in a freshly loaded page up
 *   to its first object query's result (target <= 1 s), median of COLD_RUNS reloads.
 * - bundle: bytes of dist/browser/svc.js, minified and gzipped.
 */
import { mkdir, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { nodeCryptoProvider } from '../node/crypto/node-provider.ts'
import { systemEnv } from '../sync/core/env.ts'
import { keyPairFromSeed } from '../sync/crypto/keys.ts'
import { decodeChange } from '../sync/dag/change.ts'
import { DEFAULT_MODULES } from '../sync/modules/index.ts'
import { SpaceEngine } from '../sync/space/space-engine.ts'
import { MemoryStorageAdapter } from '../sync/storage/memory.ts'
import { STORES } from '../sync/storage/adapter.ts'
import { BROWSER_TEST_DIST } from '../scripts/build-browser.ts'
import { browserFixture } from '../test/browser/harness.ts'

const OBJECTS = Number(process.env.BENCH_BROWSER_OBJECTS ?? 10_000)
const BACKLOG = Number(process.env.BENCH_BROWSER_BACKLOG ?? 10_000)
const COLD_RUNS = 3
/** Verify workers of the page's ingest (default: as openBrowserAccount starts them; 0: verify on the page's thread). */
const VERIFY_WORKERS = process.env.BENCH_BROWSER_VERIFY_WORKERS === undefined ? undefined : Number(process.env.BENCH_BROWSER_VERIFY_WORKERS)
const OWNER_SEED = new Array(32).fill(9)
const progress = (m: string) => process.stderr.write(`[bench browser] ${m}\n`)
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]
const r3 = (x: number) => Math.round(x * 1000) / 1000

/** A space of OBJECTS objects made in Node; its changes in an order head sync could deliver. */
async function fixture() {
  const storage = new MemoryStorageAdapter()
  const engine = await SpaceEngine.create({ storage, crypto: nodeCryptoProvider({ verify: 'sync' }), env: systemEnv }, keyPairFromSeed(new Uint8Array(OWNER_SEED)), {
    name: 'bench',
    modules: DEFAULT_MODULES,
  })
  const objects: string[] = []
  for (let i = 0; i < OBJECTS; i++) {
    objects.push(await engine.createObject({ initialProperties: { core: { name: `obj ${i}` } } }))
    if (i % 2000 === 1999) progress(`created ${i + 1} objects`)
  }
  const spaceId = engine.spaceId
  const treeChanges = async (treeId: string) =>
    (await storage.scan(STORES.changes, { prefix: `${spaceId}/${treeId}/` }))
      .map(([k, raw]) => ({ id: k.slice(k.lastIndexOf('/') + 1), raw, lamport: decodeChange(raw).lamport }))
      .sort((a, b) => a.lamport - b.lamport)
  const inObjects = new Set(objects)
  const setup = (await engine.replica.allChanges()).filter((c) => !inObjects.has(c.treeId))
  // The ACL first (allChanges puts it first), then every other tree root before its writes.
  const ordered = [
    ...setup.filter((c) => c.treeId === spaceId),
    ...(await Promise.all([...new Set(setup.filter((c) => c.treeId !== spaceId).map((c) => c.treeId))].map(treeChanges))).flat(),
  ]
  const body: Array<{ id: string; raw: Uint8Array }> = []
  for (const o of objects) body.push(...(await treeChanges(o)))
  const replica = engine.replica
  const readKey = replica.keyring.get(replica.acl.current().readKeyId!)!
  return { spaceId, setup: ordered, body, readKey }
}

function encodeFixture(f: Awaited<ReturnType<typeof fixture>>, backlog: number): Uint8Array {
  const header = new TextEncoder().encode(
    JSON.stringify({ spaceId: f.spaceId, ownerSeed: OWNER_SEED, readKey: [...f.readKey], setup: f.setup.length, backlog, verifyWorkers: VERIFY_WORKERS }),
  )
  const items = [...f.setup, ...f.body]
  const ids = items.map((c) => new TextEncoder().encode(c.id))
  const size = 4 + header.length + items.reduce((n, c, i) => n + 2 + ids[i].length + 4 + c.raw.length, 0)
  const out = new Uint8Array(size)
  const dv = new DataView(out.buffer)
  dv.setUint32(0, header.length)
  out.set(header, 4)
  let at = 4 + header.length
  items.forEach((c, i) => {
    dv.setUint16(at, ids[i].length)
    out.set(ids[i], at + 2)
    at += 2 + ids[i].length
    dv.setUint32(at, c.raw.length)
    out.set(c.raw, at + 4)
    at += 4 + c.raw.length
  })
  return out
}

export async function benchBrowser(): Promise<Record<string, unknown>> {
  progress(`building a space of ${OBJECTS} objects`)
  const f = await fixture()
  const backlog = Math.min(BACKLOG, f.body.length)
  const fx = await browserFixture()
  try {
    await mkdir(BROWSER_TEST_DIST, { recursive: true })
    await writeFile(join(BROWSER_TEST_DIST, 'bench-fixture.bin'), encodeFixture(f, backlog))
    const { page, errors } = await fx.page('bench.html')
    page.on('pageerror', (e) => progress(`page error: ${e}`))
    await page.waitForFunction(() => (window as any).bench !== undefined, undefined, { timeout: 60_000 })
    progress(`ingesting ${f.setup.length + f.body.length} changes in the page (${backlog} timed)`)
    const ingest = await page.evaluate(() => (window as any).bench.ingest('./bench-fixture.bin'))
    // The storage floor: as many IndexedDB puts, of the same mean size, in as many commits as
    // the timed ingest made, with nothing else to do.
    const w = ingest.storageWaitMs
    progress('raw IndexedDB writes of the same puts')
    const floor = await page.evaluate(([n, b, per]) => (window as any).bench.rawIdb(n, b, per), [w.puts, Math.round(w.putBytes / w.puts), Math.ceil(w.puts / w.commits)] as const)
    progress('bare verify+open loop in the page')
    const bare = await page.evaluate(() => (window as any).bench.bare('./bench-fixture.bin'))
    const cold: Array<{ ms: number; found: number; objects: number }> = []
    for (let i = 0; i < COLD_RUNS; i++) {
      progress(`cold open ${i + 1}/${COLD_RUNS}`)
      await page.reload()
      await page.waitForFunction(() => (window as any).bench !== undefined, undefined, { timeout: 60_000 })
      cold.push(await page.evaluate(([s, seed, name]) => (window as any).bench.coldOpen(s, seed, name), [f.spaceId, OWNER_SEED, `obj ${Math.floor(OBJECTS * 0.42)}`] as const))
    }
    if (cold.some((c) => c.found !== 1 || c.objects < OBJECTS)) throw new Error(`cold open read the wrong space: ${JSON.stringify(cold)} ${errors.join('\n')}`)
    return {
      workload: {
        objects: OBJECTS,
        changes: f.setup.length + f.body.length,
        backlogChanges: backlog,
        batch: 1000,
        storage: 'indexeddb (Chromium)',
        verifier: ingest.verifier,
        browser: fx.browser.version(),
      },
      ingestVsBare: r3(bare.bareMs / ingest.ingestMs),
      ingestPerSec: Math.round(backlog / (ingest.ingestMs / 1000)),
      barePerSec: Math.round(backlog / (bare.bareMs / 1000)),
      ingestMs: Math.round(ingest.ingestMs),
      ingestStorage: { commitWaitMs: w.commit, commits: w.commits, puts: w.puts, bytes: w.putBytes },
      ingestVsStorageFloor: r3(floor.ms / ingest.ingestMs),
      storageFloorMs: Math.round(floor.ms),
      bareMs: Math.round(bare.bareMs),
      coldOpenMs: Math.round(median(cold.map((c) => c.ms))),
      coldOpenSamplesMs: cold.map((c) => Math.round(c.ms)),
      coldOpenObjects: cold[0].objects,
      bundle: fx.bundle,
    }
  } finally {
    await fx.close()
  }
}
