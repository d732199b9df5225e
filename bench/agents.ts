/**
 * Agents (issue 20, docs/agents.md):
 * - `emptyRunP50Ms`: an empty program's run overhead in the QuickJS sandbox (fresh runtime and
 *   context, prelude, run, tear down), p50 of `BENCH_AGENTS_RUNS` runs; target <= 5 ms.
 *   Baseline in the same run: the same program compiled and called in the daemon's realm.
 * - `computeSlowdown`: a compute-bound program (recursive fib) inside the sandbox against the
 *   same code in the daemon's realm (JIT): the ratio of their medians.
 * - `eventLatencyP50Ms`: a chat message written to the space until the event trigger's program
 *   starts, p50 of `BENCH_AGENTS_EVENTS` messages; target <= 100 ms. Baseline: the same write
 *   until the account's change feed announces it (what the trigger listens to).
 * - `healthP99DuringRunawayMs` (issue 33): a real daemon in this process (DaemonHost over SQLite
 *   in a temp data root, the HTTP app listening on loopback, an account booted, agents on, mDNS
 *   and P2P off) runs runaway programs through its agents host with the default budgets (an
 *   endless loop, a backtracking regex, an allocation loop that spends its time in the
 *   allocator, one that allocates typed arrays) while a client asks `GET /v1/health` every 10 ms
 *   over a real socket: p99 of those probes; target <= 50 ms. Baseline: the same probes with no
 *   program running. `runawayStopMs` is how long each runaway ran before it was stopped.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { Agent, request as httpRequest } from 'node:http'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { performance } from 'node:perf_hooks'
import { AccountLifecycle } from '../node/daemon/account-lifecycle.ts'
import { DaemonHost } from '../node/daemon/daemon-host.ts'
import { buildApp } from '../server/app.ts'
import { systemEnv } from '../sync/core/env.ts'
import { CHANGE_DERIVED_ID } from '../sync/crdt/ops.ts'
import { defaultCryptoProvider } from '../sync/crypto/provider.ts'
import { DEFAULT_MODULES } from '../sync/modules/index.ts'
import { createTrigger, ensureAnchor } from '../sync/modules/agents/store.ts'
import { AccountEngine } from '../sync/space/account-engine.ts'
import { setupUsecase } from '../sync/space/catalog/setup.ts'
import { instant } from '../sync/space/rows.ts'
import { MemoryStorageAdapter } from '../sync/storage/memory.ts'
import { keyPairFromSeed } from '../sync/crypto/keys.ts'
import { AgentsHost } from '../node/agents/host.ts'
import { runSandboxed, warmSandbox } from '../node/agents/sandbox.ts'

const RUNS = Number(process.env.BENCH_AGENTS_RUNS ?? 200)
const EVENTS = Number(process.env.BENCH_AGENTS_EVENTS ?? 50)
const progress = (msg: string) => process.stderr.write(`[bench agents] ${msg}\n`)
const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))]
const r3 = (x: number) => Math.round(x * 1000) / 1000
const budgets = { fuel: 10_000_000, memoryBytes: 32 * 1024 * 1024, timeoutMs: 600_000 }

const FIB = 'function fib(n) { return n < 2 ? n : fib(n - 1) + fib(n - 2) }\nfunction main(a) { return fib(a.n) }'

async function sandboxRun(source: string, args: Record<string, number> = {}) {
  const t = performance.now()
  const res = await runSandboxed({ source, args, capabilities: {}, budgets, env: systemEnv, runId: 'bench' })
  if (res.status !== 'ok') throw new Error(`bench program failed: ${res.error}`)
  return performance.now() - t
}

function realmRun(source: string, args: Record<string, number> = {}) {
  const t = performance.now()
  // The daemon's own realm: the baseline a sandbox is compared with.
  // eslint-disable-next-line @typescript-eslint/no-implied-eval -- the baseline runs the program's text in this realm on purpose
  const main = new Function(`${source}\nreturn main`)() as (a: unknown) => unknown
  main(args)
  return performance.now() - t
}

async function eventLatency() {
  const account = await AccountEngine.open({
    storage: new MemoryStorageAdapter(),
    crypto: await defaultCryptoProvider(),
    env: systemEnv,
    accountKey: keyPairFromSeed(new Uint8Array(32).fill(9)),
    modules: DEFAULT_MODULES,
  })
  const info = await account.createSpace({ name: 'bench' })
  const space = account.space(info.id)
  const chatId = (await setupUsecase(space.services.bundles, 'general-chat')).bundles[0].bundle.rootId
  await ensureAnchor(space)
  const host = new AgentsHost(account, systemEnv, 'bench-peer', { timers: false })
  await host.start()
  await createTrigger(space, 'e', {
    name: 'e',
    kind: 'event',
    spec: { dataset: 'chat_messages', objectId: chatId },
    program: 'agent:noop@v1',
    args: {},
    owner: 'bench-peer',
    enabled: true,
    logRuns: false,
    limits: {},
  })
  await host.tick()
  let started: (t: number) => void = () => undefined
  const fire = host.runner.fire
  ;(host.scheduler as unknown as { runner: typeof fire }).runner = (s, d, a, id) => {
    started(performance.now())
    return fire(s, d, a, id)
  }
  let announced: (t: number) => void = () => undefined
  const off = account.events.on('change', () => announced(performance.now()))
  const toStart: number[] = []
  const toFeed: number[] = []
  for (let i = 0; i < EVENTS; i++) {
    const t0 = performance.now()
    const start = new Promise<number>((r) => (started = r))
    const feed = new Promise<number>((r) => (announced = r))
    const now = instant(Date.now())
    await space.write(chatId, [
      { op: 'set', ds: 'chat_messages', id: CHANGE_DERIVED_ID, path: '', value: { creator: space.replica.me, createdAt: now, modifiedAt: now, text: `m${i}` } },
    ])
    toStart.push((await start) - t0)
    toFeed.push((await feed) - t0)
    await host.scheduler.idle()
  }
  off()
  await host.stop()
  await account.close()
  return { toStart, toFeed }
}

const RUNAWAYS: Record<string, string> = {
  endlessLoop: 'function main() { for (;;) {} }',
  backtrackingRegex: 'function main() { return /^(a+)+$/.test("a".repeat(40) + "b") }',
  allocatorLoop: 'function main() { const a = []; for (;;) a.push("x".repeat(20000) + a.length) }',
  typedArrayLoop: 'function main() { const a = []; for (;;) a.push(new Float64Array(100000)) }',
}

async function healthDuringRunaway() {
  const root = mkdtempSync(join(tmpdir(), 'svc-bench-agents-'))
  const engine = new DaemonHost({ dataRoot: root, noMdns: true, p2p: false, agents: { timers: false, election: false } })
  const session = new AccountLifecycle({ dataRoot: root, mode: 'standalone', engine, env: systemEnv })
  const app = buildApp({ session, engine })
  const agent = new Agent({ keepAlive: true, maxSockets: 1 })
  try {
    const auth = await app.inject({ method: 'POST', url: '/v1/auth', payload: {} })
    if (auth.statusCode !== 201) throw new Error(`auth: ${auth.body}`)
    const base = await app.listen({ host: '127.0.0.1', port: 0 })
    const host = engine.agents()
    if (!host) throw new Error('the daemon runs no agents')
    const health = () =>
      new Promise<number>((resolve, reject) => {
        const t = performance.now()
        httpRequest(`${base}/v1/health`, { agent }, (res) => {
          res.resume()
          res.on('end', () => (res.statusCode === 200 ? resolve(performance.now() - t) : reject(new Error(`health: ${res.statusCode}`))))
        })
          .on('error', reject)
          .end()
      })
    const probeWhile = async (work: Promise<unknown>) => {
      let running = true
      const out: number[] = []
      void work.finally(() => (running = false))
      // Timed from when each probe is due: a blocked loop delays the probe's timer as it would a client's request.
      while (running) {
        const due = performance.now() + 10
        await new Promise((r) => setTimeout(r, 10))
        await health()
        out.push(performance.now() - due)
      }
      return out
    }
    await warmSandbox()
    const idle = await probeWhile(new Promise((r) => setTimeout(r, 2000)))
    const during: number[] = []
    const stopMs: Record<string, number> = {}
    const outcome: Record<string, string> = {}
    for (const [name, source] of Object.entries(RUNAWAYS)) {
      progress(`runaway ${name}`)
      const t = performance.now()
      const run = host.run({ source })
      during.push(...(await probeWhile(run)))
      const res = await run
      stopMs[name] = r3(performance.now() - t)
      outcome[name] = res.error ?? res.status
    }
    return { idle, during, stopMs, outcome }
  } finally {
    agent.destroy()
    await app.close()
    rmSync(root, { recursive: true, force: true })
  }
}

export async function benchAgents(): Promise<Record<string, unknown>> {
  await warmSandbox()
  progress(`empty program, ${RUNS} runs`)
  const empty: number[] = []
  const emptyRealm: number[] = []
  for (let i = 0; i < RUNS; i++) {
    empty.push(await sandboxRun('function main() {}'))
    emptyRealm.push(realmRun('function main() {}'))
  }
  progress('compute-bound: fib(22), 9 rounds each')
  const sb: number[] = []
  const realm: number[] = []
  for (let i = 0; i < 9; i++) {
    sb.push(await sandboxRun(FIB, { n: 22 }))
    realm.push(realmRun(FIB, { n: 22 }))
  }
  progress(`event trigger latency, ${EVENTS} messages`)
  const ev = await eventLatency()
  progress('health during runaway programs')
  const hr = await healthDuringRunaway()
  const healthP99DuringRunawayMs = r3(pct(hr.during, 99))
  const emptyRunP50Ms = r3(pct(empty, 50))
  const eventLatencyP50Ms = r3(pct(ev.toStart, 50))
  return {
    emptyRunP50Ms,
    emptyRunP99Ms: r3(pct(empty, 99)),
    emptyRunRealmP50Ms: r3(pct(emptyRealm, 50)),
    emptyRunTargetMs: 5,
    emptyRunOk: emptyRunP50Ms <= 5,
    computeSandboxMs: r3(pct(sb, 50)),
    computeRealmMs: r3(pct(realm, 50)),
    computeSlowdown: r3(pct(sb, 50) / pct(realm, 50)),
    eventLatencyP50Ms,
    eventLatencyP99Ms: r3(pct(ev.toStart, 99)),
    changeFeedP50Ms: r3(pct(ev.toFeed, 50)),
    eventLatencyVsFeed: r3(pct(ev.toStart, 50) / pct(ev.toFeed, 50)),
    eventLatencyTargetMs: 100,
    eventLatencyOk: eventLatencyP50Ms <= 100,
    healthP99DuringRunawayMs,
    healthMaxDuringRunawayMs: r3(Math.max(...hr.during)),
    healthProbesDuringRunaway: hr.during.length,
    healthP99IdleMs: r3(pct(hr.idle, 99)),
    healthDuringRunawayTargetMs: 50,
    healthDuringRunawayOk: healthP99DuringRunawayMs <= 50,
    runawayStopMs: hr.stopMs,
    runawayOutcome: hr.outcome,
  }
}
