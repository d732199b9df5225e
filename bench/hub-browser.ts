/**
 * A page's sync through the hub against a daemon's (issue 36), real processes and real Chromium:
 * a real `svc hub` (SQLite; TCP for daemons, WebSockets on loopback for the page) and a daemon
 * of account A (mDNS off) that adds the hub and writes a backlog into a space: OBJECTS objects
 * through `POST {S}/objects`, 20 requests in flight (each object a tree root and a row write: two
 * signed changes of A's device), until the hub keeps every space of A with nothing pending. A's
 * daemon then stops for good: from then on the hub is the only holder of the backlog.
 *
 * - daemon (the baseline): a second `svc serve` of account A, a fresh data dir, mDNS off,
 *   restored from A's phrase (`POST /v1/auth {mnemonic}`), that only adds the hub. Timed from
 *   `POST /v1/hubs` until `POST {S}/objects/query {includeTotal}` counts all of A's objects.
 * - page: headless Chromium (test/browser/harness.ts), the browser suite's app page, restores A
 *   from the phrase (before the clock starts) and `addHub`s the hub's WebSocket address
 *   (BrowserSync.addHub). Timed from `addHub` until the page's account engine holds as many
 *   objects (`objectDocs`).
 *
 * Both are polled every POLL_MS; once the count is reached, each one's state digest of the space
 * (`SpaceReplica.stateDigest`: the daemon's read from its database beside it, the page's from
 * its engine) is polled until it equals the one read from A's stopped daemon's database, timed
 * from the same start. pageVsDaemon = page ms / daemon ms (no target); pageVsDaemonToDigest
 * likewise to the equal digest (the daemon's digest is read by opening its database in this
 * process, which takes CPU from it meanwhile: the count is the fairer figure). BENCH_HUB_BROWSER_REPS
 * (3) runs of each, alternating which goes first, each on a fresh daemon dir or a fresh browser
 * context; medians. Each run ends (daemon stopped, page closed) before the next starts, so each
 * has the machine (and the hub) to itself.
 */
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import { loadavg, tmpdir } from 'node:os'
import { nodeCryptoProvider } from '../node/crypto/node-provider.ts'
import { ENGINE_DB_FILE } from '../node/daemon/daemon-host.ts'
import { SqliteStorageAdapter } from '../node/storage/sqlite.ts'
import { systemEnv } from '../sync/core/env.ts'
import { SpaceReplica } from '../sync/replica/space-replica.ts'
import { Fleet, S, type Account } from '../test/e2e/accounts.ts'
import { ok, startDaemon, stopDaemon, until, type Daemon } from '../test/e2e/daemons.ts'
import { HubFleet, type HubProc } from '../test/e2e/hub-process.ts'
import { browserFixture } from '../test/browser/harness.ts'

const OBJECTS = Number(process.env.BENCH_HUB_BROWSER_OBJECTS ?? 5_000)
const IN_FLIGHT = 20
/** Runs of each side, alternating which goes first; medians. */
const REPS = Number(process.env.BENCH_HUB_BROWSER_REPS ?? 3)
const POLL_MS = 100
const DIGEST_POLL_MS = 250
const TIMEOUT_MS = 600_000
const progress = (m: string) => process.stderr.write(`[bench hub browser] ${m}\n`)
const median = (xs: number[]) => [...xs].sort((x, y) => x - y)[Math.floor(xs.length / 2)]
const r3 = (x: number) => Math.round(x * 1000) / 1000
const load1 = () => Math.round(loadavg()[0] * 100) / 100

/** Every space `d` holds is kept by the hub, synced, with nothing pending. */
const allKept = (d: Daemon) =>
  until(
    'every space synced with the hub',
    async () => {
      const st = (await ok(d, 'GET', '/v1/sync-status')).spaces as Array<{ pending: number; hubs?: Array<{ state: string; lastSyncAt: unknown }> }>
      return st.length > 0 && st.every((s) => s.pending === 0 && s.hubs?.[0]?.state === 'kept' && s.hubs[0].lastSyncAt !== null)
    },
    TIMEOUT_MS,
    250,
  )

const objectsAt = async (d: Daemon, spaceId: string) => {
  const r = await fetch(`${d.url}${S(spaceId)}/objects/query`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ limit: 1, includeTotal: true }),
  })
  return r.status === 200 ? ((await r.json()) as { total: number }).total : 0
}

/** The space as a daemon stored it (its database opened beside it, or after it stopped): digest and change count. */
async function stored(d: Daemon, a: Account, spaceId: string): Promise<{ digest: string; changes: number }> {
  const storage = new SqliteStorageAdapter(join(d.dir, 'accounts', a.identity, ENGINE_DB_FILE))
  try {
    const replica = await SpaceReplica.open({ storage, crypto: nodeCryptoProvider({ verify: 'sync' }), env: systemEnv }, spaceId, a.key)
    return { digest: await replica.stateDigest(), changes: (await replica.allChanges()).length }
  } finally {
    await storage.close()
  }
}

/** `n`, noting the time since `t0` the first time it is above 0. */
function firstSeen(n: number, t0: number, note: (ms: number) => void): number {
  if (n > 0) note(performance.now() - t0)
  return n
}

/** Polls `digest` until it is `ref`; ms since `t0` when it was. */
async function sameDigest(digest: () => Promise<string>, ref: string, t0: number): Promise<number> {
  let last = ''
  await until("the state digest of the space is A's", async () => (last = await digest()) === ref, 60_000, DIGEST_POLL_MS).catch((e: unknown) => {
    throw new Error(`${(e as Error).message}: ${last} against ${ref}`)
  })
  return performance.now() - t0
}

async function backlog(a: Account, hub: HubProc): Promise<{ spaceId: string; objects: number; writeMs: number; toHubMs: number }> {
  await ok(a.d, 'POST', '/v1/hubs', { multiaddr: hub.addr })
  const spaceId = (await ok(a.d, 'POST', '/v1/spaces', { name: 'Backlog' })).id as string
  progress(`A writes ${OBJECTS} objects`)
  const t0 = performance.now()
  for (let i = 0; i < OBJECTS; i += IN_FLIGHT) {
    await Promise.all(
      Array.from({ length: Math.min(IN_FLIGHT, OBJECTS - i) }, (_, j) => ok(a.d, 'POST', `${S(spaceId)}/objects`, { initialProperties: { core: { name: `obj ${i + j}` } } })),
    )
    if ((i + IN_FLIGHT) % 1000 === 0) progress(`  ${i + IN_FLIGHT}`)
  }
  const writeMs = performance.now() - t0
  await allKept(a.d)
  return { spaceId, objects: await objectsAt(a.d, spaceId), writeMs, toHubMs: performance.now() - t0 }
}

export async function benchHubBrowser(): Promise<Record<string, unknown>> {
  const fleet = new Fleet()
  const hubs = new HubFleet()
  const dir2 = mkdtempSync(join(tmpdir(), 'svc-bench-hub-browser-'))
  let fx: Awaited<ReturnType<typeof browserFixture>> | undefined
  let d2: Daemon | undefined
  const load = [load1()]
  try {
    progress('a hub and A')
    const a = await fleet.account('alice', { mdns: false })
    const hub = await hubs.start(['--allow', a.identity], { listen: '/ip4/127.0.0.1/tcp/0,/ip4/127.0.0.1/tcp/0/ws' })
    const b = await backlog(a, hub)
    progress(`A wrote ${b.objects} objects in ${Math.round(b.writeMs)} ms; the hub holds them at ${Math.round(b.toHubMs)} ms`)
    await stopDaemon(a.d)
    const ref = await stored(a.d, a, b.spaceId)
    load.push(load1())

    // The baseline: another daemon of A (a fresh data dir each run), only the hub.
    const daemonRun = async (i: number) => {
      progress(`run ${i + 1}: a new daemon of A syncs from the hub`)
      const dir = join(dir2, `daemon-${i}`)
      mkdirSync(dir)
      const d = (d2 = await startDaemon(dir, { mdns: false }))
      await ok(d, 'POST', '/v1/auth', { mnemonic: a.mnemonic })
      const t0 = performance.now()
      await ok(d, 'POST', '/v1/hubs', { multiaddr: hub.addr })
      let firstMs = 0
      await until('the daemon holds every object', async () => firstSeen(await objectsAt(d, b.spaceId), t0, (ms) => (firstMs ||= ms)) >= b.objects, TIMEOUT_MS, POLL_MS)
      const ms = performance.now() - t0
      const digestMs = await sameDigest(async () => (await stored(d, a, b.spaceId)).digest, ref.digest, t0)
      await stopDaemon(d)
      const changes = (await stored(d, a, b.spaceId)).changes
      if (changes !== ref.changes) throw new Error(`the daemon holds ${changes} changes of the space, A ${ref.changes}`)
      load.push(load1())
      return { ms, firstMs, digestMs }
    }

    // The page: a new one each run (a new browser context: empty IndexedDB), restored before the clock, then only the hub.
    progress('building the pages, starting Chromium')
    const f = (fx = await browserFixture())
    const pageRun = async (i: number) => {
      progress(`run ${i + 1}: a new page of A syncs from the hub`)
      const { page, errors } = await f.page('index.html')
      const app = <T>(fn: string, ...args: unknown[]): Promise<T> => page.evaluate(([fn, args]) => (window as any).app[fn](...args), [fn, args] as const) as Promise<T>
      const explain = (e: unknown) => {
        throw new Error(`${(e as Error).message}\npage errors:\n${errors.join('\n')}\nhub stderr:\n${hub.proc.stderr().slice(-3000)}`)
      }
      await app('restore', a.mnemonic)
      const t0 = performance.now()
      await app('addHub', hub.ws).catch(explain)
      let firstMs = 0
      await until(
        'the page holds every object',
        async () => firstSeen(await app<number>('objectCount', b.spaceId), t0, (ms) => (firstMs ||= ms)) >= b.objects,
        TIMEOUT_MS,
        POLL_MS,
      ).catch(explain)
      const ms = performance.now() - t0
      const digestMs = await sameDigest(async () => (await app<string>('digest', b.spaceId)) ?? '', ref.digest, t0).catch(explain)
      load.push(load1())
      await app('close').catch(() => undefined)
      await page.context().close()
      return { ms, firstMs, digestMs }
    }

    // Alternating: daemon first in even runs, the page first in odd ones.
    const dr: Array<Awaited<ReturnType<typeof daemonRun>>> = []
    const pr: Array<Awaited<ReturnType<typeof pageRun>>> = []
    for (let i = 0; i < REPS; i++) {
      if (i % 2 === 0) {
        dr.push(await daemonRun(i))
        pr.push(await pageRun(i))
      } else {
        pr.push(await pageRun(i))
        dr.push(await daemonRun(i))
      }
    }
    const med = (xs: Array<Record<'ms' | 'firstMs' | 'digestMs', number>>, k: 'ms' | 'firstMs' | 'digestMs') => median(xs.map((x) => x[k]))
    const r = Math.round
    const daemonMs = med(dr, 'ms')
    const pageMs = med(pr, 'ms')

    return {
      workload: {
        objects: b.objects,
        changes: ref.changes,
        writer: `A's daemon, POST {S}/objects, ${IN_FLIGHT} in flight`,
        hub: 'svc hub (SQLite), daemons over TCP, the page over WebSockets, loopback',
        browser: f.browser.version(),
        runs: REPS,
      },
      backlogWriteMs: r(b.writeMs),
      backlogAtHubMs: r(b.toHubMs),
      // Medians of the runs; each run's own in the samples.
      daemonMs: r(daemonMs),
      pageMs: r(pageMs),
      pageVsDaemon: r3(pageMs / daemonMs),
      daemonChangesPerSec: r(ref.changes / (daemonMs / 1000)),
      pageChangesPerSec: r(ref.changes / (pageMs / 1000)),
      samplesMs: { daemon: dr.map((x) => r(x.ms)), page: pr.map((x) => r(x.ms)), pageVsDaemon: dr.map((x, i) => r3(pr[i].ms / x.ms)) },
      // Until the first poll that counted an object of the space (the space found and opened).
      firstObjectMs: { daemon: r(med(dr, 'firstMs')), page: r(med(pr, 'firstMs')) },
      // Until the state digest of the space equals A's (polled every DIGEST_POLL_MS after the count).
      digestEqualMs: { daemon: r(med(dr, 'digestMs')), page: r(med(pr, 'digestMs')) },
      pageVsDaemonToDigest: r3(med(pr, 'digestMs') / med(dr, 'digestMs')),
      pollMs: POLL_MS,
      loadAverage1m: load,
    }
  } finally {
    await fx?.close()
    if (d2) await stopDaemon(d2, 'SIGKILL')
    rmSync(dir2, { recursive: true, force: true })
    hubs.close()
    await fleet.close()
  }
}
