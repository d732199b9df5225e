/**
 * Hostile-peer benchmark (issue 11): a real daemon (`svc serve`, a child process) flooded over
 * loopback by a stranger (bench/hostile-flood.ts, another process) at full speed for 10 s:
 * zero frames, junk frames, well-formed messages before authenticating, an authenticated
 * stranger syncing random spaces, each attempt from a fresh libp2p key. Measured in the same
 * run, without the flood and during it:
 * - `GET /v1/health` p99 (target <= 50 ms during the flood);
 * - the daemon's RSS growth during the flood (target <= 128 MB);
 * - an honest peer (another device of the daemon's account, in this process) pushing a
 *   10,000-change backlog to the daemon (target: during / without <= 2).
 */
import { spawn } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { monitorEventLoopDelay } from 'node:perf_hooks'
import { multiaddr } from '@multiformats/multiaddr'
import { nodeCryptoProvider } from '../node/crypto/node-provider.ts'
import { realTimer } from '../node/daemon/p2p-service.ts'
import { createSvcNode } from '../node/p2p/libp2p-node.ts'
import { Libp2pTransport } from '../sync/p2p/libp2p-transport.ts'
import { encodeCanonical } from '../sync/core/encoding.ts'
import { systemEnv } from '../sync/core/env.ts'
import { seal } from '../sync/crypto/box.ts'
import { accountKeyFromMnemonic, keyPairFromSeed, newMnemonic, type KeyPair } from '../sync/crypto/keys.ts'
import { signChange, type Change } from '../sync/dag/change.ts'
import { SyncSession } from '../sync/protocol/session.ts'
import { SyncDriver } from '../sync/protocol/sync-driver.ts'
import { SpaceReplica } from '../sync/replica/space-replica.ts'
import { MemoryStorageAdapter } from '../sync/storage/memory.ts'

const progress = (m: string) => process.stderr.write(`[bench hostile] ${m}\n`)
const REPO = fileURLToPath(new URL('../', import.meta.url))
const FLOOD_MS = Number(process.env.BENCH_FLOOD_MS ?? 10_000)
const BACKLOG = Number(process.env.BENCH_HOSTILE_BACKLOG ?? 10_000)
const OBJECTS = 100
const crypto = nodeCryptoProvider({ verify: 'threadpool' })
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

function startDaemon(dir: string) {
  const proc = spawn(process.execPath, ['--max-semi-space-size=64', '--import', 'tsx', join(REPO, 'server/cli/main.ts'), 'serve', '--port', '0', '--no-mdns', '--data', dir], {
    cwd: REPO,
    env: { ...process.env, SVC_NO_MDNS: '1', SVC_P2P_LISTEN: '/ip4/127.0.0.1/tcp/0' },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let out = ''
  let err = ''
  proc.stdout.setEncoding('utf8').on('data', (c: string) => (out += c))
  proc.stderr.setEncoding('utf8').on('data', (c: string) => (err += c))
  const url = new Promise<string>((resolve, reject) => {
    proc.stdout.on('data', () => out.includes('\n') && resolve(out.split('\n')[0]))
    proc.on('exit', (code) => reject(new Error(`svc serve exited ${code}: ${err}`)))
  })
  return { proc, url, stderr: () => err }
}

async function call(url: string, method: string, path: string, body?: unknown) {
  const res = await fetch(`${url}${path}`, { method, headers: body ? { 'content-type': 'application/json' } : {}, body: body ? JSON.stringify(body) : undefined })
  if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${await res.text()}`)
  return res.json()
}

function rssOf(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))
  return m ? Number(m[1]) * 1024 : 0
}

/** A space owned by `owner` with `n` signed, sealed changes over OBJECTS objects, held by a memory replica. */
async function backlog(owner: KeyPair, n: number): Promise<SpaceReplica> {
  const deps = { storage: new MemoryStorageAdapter(), crypto, env: systemEnv }
  const r = await SpaceReplica.create(deps, owner)
  const objects: string[] = []
  for (let i = 0; i < OBJECTS; i++) objects.push(await r.createObject())
  const st = r.acl.current()
  const readKeyId = st.readKeyId!
  const readKey = r.keyring.get(readKeyId)!
  const aclHeadId = (r.acl.citation() as { head: string }).head
  const changes: Change[] = []
  const per = Math.ceil(n / OBJECTS)
  for (let o = 0; o < OBJECTS; o++) {
    let prev = objects[o]
    for (let k = 0; k < per && changes.length < n; k++) {
      const payload = seal(systemEnv, readKey, encodeCanonical({ ops: [{ op: 'set', ds: 'd', id: `r${k % 10}`, path: `f${k % 5}`, value: k }] }))
      const c = await signChange(crypto, owner, {
        spaceId: r.spaceId,
        treeId: objects[o],
        prevIds: [prev],
        aclHeadId,
        seq: k + 1,
        lamport: k + 1,
        timestamp: Date.now(),
        readKeyId,
        payload,
      })
      changes.push(c)
      prev = c.id
    }
  }
  for (let i = 0; i < changes.length; i += 2000) await r.applyVerified(changes.slice(i, i + 2000).map((change) => ({ change })))
  return r
}

function p99(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b)
  return s.length ? Math.round(s[Math.min(s.length - 1, Math.ceil(s.length * 0.99) - 1)] * 10) / 10 : NaN
}

/**
 * Times `GET /v1/health` every 20 ms until stopped, from a child process of its own: this
 * process also sends the honest backlog, and its own stalls would count against the daemon.
 */
function probeHealth(url: string) {
  const code = `
    const times = []
    let running = true
    process.stdin.on('data', () => (running = false))
    ;(async () => {
      while (running) {
        const t0 = performance.now()
        await (await fetch(${JSON.stringify(url)} + '/v1/health')).arrayBuffer()
        times.push(performance.now() - t0)
        await new Promise((r) => setTimeout(r, 20))
      }
      process.stdout.write(JSON.stringify(times))
      process.exit(0)
    })()`
  const child = spawn(process.execPath, ['-e', code], { stdio: ['pipe', 'pipe', 'inherit'] })
  let out = ''
  child.stdout.setEncoding('utf8').on('data', (c: string) => (out += c))
  const done = new Promise<void>((r) => child.on('exit', () => r()))
  return async (): Promise<number[]> => {
    child.stdin.end('stop')
    await done
    return JSON.parse(out || '[]') as number[]
  }
}

type Push = (r: SpaceReplica) => Promise<{ ms: number; rounds: number }>

/** Signs in with a fresh mnemonic and finds the daemon's loopback libp2p address. */
async function signIn(url: string) {
  const mnemonic = newMnemonic(systemEnv)
  await call(url, 'POST', '/v1/auth', { mnemonic })
  const account = accountKeyFromMnemonic(mnemonic)
  const p2p = await call(url, 'GET', '/v1/debug/p2p')
  const listen = (p2p.listen as string[]).find((a) => a.includes('/127.0.0.1/'))!
  const addr = listen.includes('/p2p/') ? listen : `${listen}/p2p/${p2p.peerId}`
  return { account, addr, peerId: p2p.peerId as string }
}

/** The honest peer: another device of the same account, connected before any flood. */
async function connectHonestPeer(account: KeyPair, addr: string, daemonPeer: string, backlogs: SpaceReplica[]) {
  const node = await createSvcNode({ deviceKey: keyPairFromSeed(new Uint8Array(32).fill(77)), listen: ['/ip4/127.0.0.1/tcp/0'] })
  const transport = await Libp2pTransport.start(node)
  const replicas = new Map(backlogs.map((r) => [r.spaceId, r]))
  const session = new SyncSession({ host: { space: (id) => replicas.get(id) }, key: account, peerId: transport.peerId, crypto, env: systemEnv })
  const driver = new SyncDriver({ transport, session, timer: realTimer, timeoutMs: 120_000 })
  const up = new Promise<void>((r) => transport.onPeerUp(() => r()))
  await node.dial(multiaddr(addr))
  await up
  /** Sync rounds until in sync (at most 50); the time covers every round. */
  const push: Push = async (r) => {
    const t0 = performance.now()
    let rounds = 0
    for (; rounds < 50; rounds++) {
      const res = await driver.syncSpace(daemonPeer, r.spaceId)
      if (res.outcome === 'in_sync') break
      if (!res.ok) throw new Error(`round failed: ${res.outcome} ${res.error ?? ''}`)
    }
    return { ms: performance.now() - t0, rounds: rounds + 1 }
  }
  return { node, transport, driver, push }
}

/** Health idle, then during the honest backlog, with no flood: the baselines. */
async function quietPhase(url: string, pid: number, push: Push, quiet: SpaceReplica) {
  progress('health without the flood')
  for (let i = 0; i < 10; i++) await (await fetch(`${url}/v1/health`)).arrayBuffer()
  const stopQuietProbe = probeHealth(url)
  await sleep(3_000)
  const quietHealth = await stopQuietProbe()
  progress('honest backlog without the flood')
  const rssBeforeQuietSync = rssOf(pid)
  const stopQuietSyncProbe = probeHealth(url)
  // The probe runs in this process, which also sends the backlog: its own stalls show in the
  // probe's times too, so they are measured apart.
  const ownDelay = monitorEventLoopDelay({ resolution: 5 })
  ownDelay.enable()
  const quietSync = await push(quiet)
  ownDelay.disable()
  const quietSyncHealth = await stopQuietSyncProbe()
  const rssAfterQuietSync = rssOf(pid)
  return { quietHealth, quietSyncHealth, ownDelay, quietSync, rssBeforeQuietSync, rssAfterQuietSync }
}

/** The flood alone first, then the honest peer's backlog during it, then the flood's tail. */
async function floodPhase(url: string, pid: number, addr: string, push: Push, flooded: SpaceReplica) {
  progress(`flooding for ${FLOOD_MS} ms`)
  const rss0 = rssOf(pid)
  let rssPeak = rss0
  const sampler = setInterval(() => (rssPeak = Math.max(rssPeak, rssOf(pid))), 50)
  const flood = spawn(process.execPath, ['--import', 'tsx', join(REPO, 'bench/hostile-flood.ts'), addr, String(FLOOD_MS)], { cwd: REPO, stdio: ['ignore', 'pipe', 'inherit'] })
  let floodOut = ''
  flood.stdout.setEncoding('utf8').on('data', (c: string) => (floodOut += c))
  let floodEnded = false
  const floodDone = new Promise<void>((r) => flood.on('exit', () => ((floodEnded = true), r())))
  const stopFloodOnlyProbe = probeHealth(url)
  await sleep(FLOOD_MS / 3)
  const floodOnlyHealth = await stopFloodOnlyProbe()
  const stopFloodProbe = probeHealth(url)
  const floodSync = await push(flooded)
  const floodSyncHealth = [...(await stopFloodProbe())]
  const stopFloodTail = probeHealth(url)
  const syncEndedInFlood = !floodEnded
  await floodDone
  const floodHealth = [...floodOnlyHealth, ...floodSyncHealth, ...(await stopFloodTail())]
  clearInterval(sampler)
  return { rss0, rssPeak, floodOut, floodOnlyHealth, floodSyncHealth, floodHealth, floodSync, syncEndedInFlood }
}

function hostileReport(q: Awaited<ReturnType<typeof quietPhase>>, f: Awaited<ReturnType<typeof floodPhase>>, honestStillUp: boolean) {
  const quietP99 = p99(q.quietHealth)
  const floodP99 = p99(f.floodHealth)
  return {
    floodMs: FLOOD_MS,
    backlogChanges: BACKLOG,
    healthP99QuietMs: quietP99,
    healthP99FloodMs: floodP99,
    healthP99FloodOnlyMs: p99(f.floodOnlyHealth),
    healthP99QuietSyncMs: p99(q.quietSyncHealth),
    // This (the sending) process's own event-loop delay during that sync: part of the figure above.
    senderLoopDelayP99QuietSyncMs: Math.round(q.ownDelay.percentile(99) / 1e5) / 10,
    senderLoopDelayMaxQuietSyncMs: Math.round(q.ownDelay.max / 1e5) / 10,
    healthP99FloodSyncMs: p99(f.floodSyncHealth),
    healthMaxFloodMs: Math.round(Math.max(...f.floodHealth)),
    healthProbesFlood: f.floodHealth.length,
    rssBeforeFloodMB: Math.round(f.rss0 / 2 ** 20),
    rssPeakFloodMB: Math.round(f.rssPeak / 2 ** 20),
    rssGrowthFloodMB: Math.round((f.rssPeak - f.rss0) / 2 ** 20),
    // The same ingest without the flood grew the daemon by this much (part of the figure above).
    rssGrowthQuietSyncMB: Math.round((q.rssAfterQuietSync - q.rssBeforeQuietSync) / 2 ** 20),
    backlogQuietMs: Math.round(q.quietSync.ms),
    backlogFloodMs: Math.round(f.floodSync.ms),
    backlogRounds: [q.quietSync.rounds, f.floodSync.rounds],
    backlogFloodVsQuiet: Math.round((f.floodSync.ms / q.quietSync.ms) * 100) / 100,
    backlogEndedDuringFlood: f.syncEndedInFlood,
    honestPeerStayedConnected: honestStillUp,
    flood: f.floodOut.trim() ? JSON.parse(f.floodOut.trim().split('\n').pop()!) : null,
    targets: { healthP99FloodMs: 50, rssGrowthFloodMB: 128, backlogFloodVsQuiet: 2 },
  }
}

export async function benchHostile(): Promise<Record<string, unknown>> {
  const dir = mkdtempSync(join(tmpdir(), 'svc-bench-hostile-'))
  const daemon = startDaemon(dir)
  try {
    const url = await daemon.url
    const { account, addr, peerId } = await signIn(url)
    const pid = daemon.proc.pid!

    progress(`building two backlogs of ${BACKLOG} changes`)
    const quiet = await backlog(account, BACKLOG)
    const flooded = await backlog(account, BACKLOG)
    const { node, transport, driver, push } = await connectHonestPeer(account, addr, peerId, [quiet, flooded])

    const q = await quietPhase(url, pid, push, quiet)
    const f = await floodPhase(url, pid, addr, push, flooded)
    const honestStillUp = transport.peers().includes(peerId)
    await driver.close()
    await node.stop()
    return hostileReport(q, f, honestStillUp)
  } finally {
    daemon.proc.kill('SIGTERM')
    await new Promise((r) => daemon.proc.once('exit', r)).catch(() => undefined)
    rmSync(dir, { recursive: true, force: true })
  }
}
