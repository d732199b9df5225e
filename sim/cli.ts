/**
 * npm run sim -- --seeds N --peers P [--seed S] [--exact-peers] [--jobs J] [--scale X]
 *                [--adversaries A] [--concurrent-admins | --owner-admin] [--hubs H] [--json] [--verbose]
 * npm run sim -- --chat --seeds N [--seed S] [--json] [--verbose]   (chat read state, sim/chat-workload.ts)
 *
 * Runs seeds S, S+1, ..., S+N-1 (S defaults to 1; `--seed S` alone runs that one seed). Each
 * seed draws its peer count uniformly in [3, P] (P is a maximum; `--exact-peers` uses P for
 * every seed). `--adversaries A` adds A hostile peers to each seed (sim/adversary.ts); honest
 * admins then act concurrently too, unless `--owner-admin` (`--concurrent-admins` turns that on
 * without adversaries). `--hubs H` adds H hubs (sim/hub.ts) and a topology in which honest
 * peers mostly reach each other only through them (sim/hub-plan.ts). `--jobs J` shards the seeds over J worker threads (default: 1, or one per core, up
 * to 8, when more than 50 seeds run; results are identical either way). With `--json` the last line printed is
 * one JSON object: {seeds, peers, diverged, lostWrites, leakedReads, voidApplied, memoryOver,
 * failedSeeds, replays (when a seed failed), traceHash, ...}.
 * A failing seed prints its failures, why its members did not converge when they did not
 * (sim/liveness-report.ts), the tail of its trace and the command that replays it (sim/replay.ts).
 * Exit code: 0 when every seed passed, 1 otherwise, 2 on bad arguments.
 */
import { availableParallelism } from 'node:os'
import { Worker, isMainThread, parentPort, workerData } from 'node:worker_threads'
import { sha256 } from '../sync/crypto/hash.ts'
import { toHex, utf8 } from '../sync/core/encoding.ts'
import { nodeSyncCryptoProvider } from './node-crypto.ts'
import { maxFigures, NO_FIGURES } from './memory.ts'
import { describeLivenessFailure } from './liveness-report.ts'
import { replayCommand } from './replay.ts'
import { MAX_HUBS } from './hub-plan.ts'
import { runSeed, type RunOptions, type SeedResult } from './runner.ts'
import { runChatSeed, type ChatSeedResult } from './chat-workload.ts'

interface Args {
  seeds: number
  start: number
  peers: number
  exactPeers: boolean
  json: boolean
  verbose: boolean
  jobs: number
  scale: number
  adversaries: number
  hubs: number
  concurrentAdmins?: boolean
  /** Runs the chat read-state workload instead (sim/chat-workload.ts). */
  chat: boolean
}

function parse(argv: string[]): Args {
  const a: Args = { seeds: 0, start: 1, peers: 8, exactPeers: false, json: false, verbose: false, jobs: 0, scale: 1, adversaries: 0, hubs: 0, chat: false }
  let seedGiven = false
  for (let i = 0; i < argv.length; i++) {
    const k = argv[i]
    const num = () => {
      const v = Number(argv[++i])
      if (!Number.isInteger(v) && k !== '--scale') throw new Error(`${k} needs an integer`)
      if (!Number.isFinite(v)) throw new Error(`${k} needs a number`)
      return v
    }
    if (k === '--seeds') a.seeds = num()
    else if (k === '--seed') {
      a.start = num()
      seedGiven = true
    } else if (k === '--peers') a.peers = num()
    else if (k === '--jobs') a.jobs = num()
    else if (k === '--scale') a.scale = num()
    else if (k === '--adversaries') a.adversaries = num()
    else if (k === '--hubs') a.hubs = num()
    else if (k === '--concurrent-admins') a.concurrentAdmins = true
    else if (k === '--owner-admin') a.concurrentAdmins = false
    else if (k === '--exact-peers') a.exactPeers = true
    else if (k === '--json') a.json = true
    else if (k === '--chat') a.chat = true
    else if (k === '--verbose') a.verbose = true
    else throw new Error(`unknown argument ${k}`)
  }
  if (a.seeds === 0) a.seeds = seedGiven ? 1 : 100
  if (a.seeds < 1 || a.peers < 3) throw new Error('--seeds must be >= 1 and --peers >= 3')
  if (a.adversaries < 0 || a.adversaries > 50) throw new Error('--adversaries must be in 0..50')
  if (a.hubs < 0 || a.hubs > MAX_HUBS) throw new Error(`--hubs must be in 0..${MAX_HUBS}`)
  if (a.jobs === 0) a.jobs = a.seeds > 50 ? Math.min(8, availableParallelism()) : 1
  return a
}

type Compact = Omit<SeedResult, 'tail'> & { tail: string[] }

/** Runs a seed; an exception (a bug in the engine or the simulator) fails the seed, not the run. */
async function safeRun(seed: number, opts: RunOptions): Promise<Compact> {
  try {
    const r = await runSeed(seed, opts)
    return { ...r, tail: r.failures.length ? r.tail : [] }
  } catch (err) {
    return {
      seed,
      peers: 0,
      faults: [],
      diverged: 1,
      lostWrites: 0,
      leakedReads: 0,
      voidApplied: 0,
      memoryOver: 0,
      honestBackedOff: 0,
      hubLeaked: 0,
      hubDiverged: 0,
      hostileBackedOff: 0,
      memory: NO_FIGURES,
      attacks: {},
      adversaries: 0,
      livenessRounds: 0,
      ackedWrites: 0,
      traceHash: 'error',
      failures: [`threw: ${(err as Error).stack ?? String(err)}`],
      tail: [],
      stats: {
        events: 0,
        virtualMs: 0,
        messages: 0,
        bytes: 0,
        lost: 0,
        duplicated: 0,
        cutDrops: 0,
        crashes: 0,
        rounds: 0,
        roundsOk: 0,
        roundsInSync: 0,
        removed: 0,
        members: 0,
        dropped: {},
        rejected: {},
        outcomes: {},
        judgedVoid: 0,
        judgedRejected: 0,
      },
    }
  }
}

const failedSeed = (r: Compact) => r.diverged + r.lostWrites + r.leakedReads + r.voidApplied + r.memoryOver + r.honestBackedOff + r.hubLeaked + r.hubDiverged > 0

/** Hub figures summed over seeds, and the share of honest deliveries a hub made. */
function sumHubs(rs: Compact[]) {
  const out = { relayed: 0, kept: 0, viaHub: 0, direct: 0, neverLinkedPairs: 0, hubOnlyMembers: 0, hubOnlyFed: 0 }
  for (const r of rs) if (r.hub) for (const k of Object.keys(out) as Array<keyof typeof out>) out[k] += r.hub[k]
  const all = out.viaHub + out.direct
  return { ...out, viaHubShare: all ? Number((out.viaHub / all).toFixed(3)) : 0 }
}

function sumAttacks(rs: Compact[]): Record<string, number> {
  const out: Record<string, number> = {}
  for (const r of rs) for (const [k, v] of Object.entries(r.attacks)) out[k] = (out[k] ?? 0) + (v ?? 0)
  return out
}

/** Sharing work summed over seeds (sim/sharing-workload.ts): joins asked, accepted, ... */
function sumSharing(rs: Compact[]): Record<string, number> {
  const out: Record<string, number> = {}
  for (const r of rs) for (const [k, v] of Object.entries(r.stats.sharing ?? {})) out[k] = (out[k] ?? 0) + v
  return out
}

function maxMemory(rs: Compact[]) {
  return rs.reduce((m, r) => maxFigures(m, r.memory), NO_FIGURES)
}

async function runRange(seeds: number[], opts: RunOptions, onResult: (r: Compact) => void) {
  const crypto = nodeSyncCryptoProvider()
  for (const s of seeds) onResult(await safeRun(s, { ...opts, crypto }))
}

/** Hands out seeds one by one to whichever worker is free (balanced however long seeds take). */
async function runInWorkers(seeds: number[], opts: RunOptions, jobs: number, onResult: (r: Compact) => void) {
  let next = 0
  await Promise.all(
    Array.from(
      { length: Math.min(jobs, seeds.length) },
      () =>
        new Promise<void>((resolve, reject) => {
          const w = new Worker(new URL(import.meta.url), { workerData: { opts }, execArgv: ['--import', 'tsx'] })
          const feed = () => w.postMessage(next < seeds.length ? seeds[next++] : null)
          w.on('online', feed)
          w.on('message', (r: Compact) => {
            onResult(r)
            feed()
          })
          w.on('error', reject)
          w.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`worker exited with ${code}`))))
        }),
    ),
  )
}

if (!isMainThread) {
  // A worker runs the seeds the main thread hands it, one at a time, until told to stop.
  const { opts } = workerData as { opts: RunOptions }
  const crypto = nodeSyncCryptoProvider()
  const port = parentPort!
  port.on('message', (seed: number | null) => {
    if (seed === null) process.exit(0)
    // safeRun turns any failure of the seed into its result, so nothing here rejects.
    void safeRun(seed, { ...opts, crypto }).then((result) => port.postMessage(result))
  })
}

async function main() {
  let args: Args
  try {
    args = parse(process.argv.slice(2))
  } catch (err) {
    console.error(`sim: ${(err as Error).message}`)
    console.error(
      'usage: npm run sim -- --seeds N --peers P [--seed S] [--exact-peers] [--jobs J] [--scale X] [--adversaries A] [--concurrent-admins | --owner-admin] [--hubs H] [--json] [--verbose]',
    )
    process.exit(2)
  }
  if (args.chat) return runChat(args)
  const opts: RunOptions = {
    maxPeers: args.peers,
    exactPeers: args.exactPeers,
    scale: args.scale,
    tail: 40,
    adversaries: args.adversaries,
    ...(args.hubs ? { hubs: args.hubs } : {}),
    ...(args.concurrentAdmins !== undefined ? { concurrentAdmins: args.concurrentAdmins } : {}),
  }
  const seeds = Array.from({ length: args.seeds }, (_, i) => args.start + i)
  const results = new Map<number, Compact>()
  const t0 = performance.now()
  const log = (s: string) => (args.json ? process.stderr : process.stdout).write(s + '\n')
  const onResult = (r: Compact) => {
    results.set(r.seed, r)
    const bad = failedSeed(r)
    if (args.verbose || bad) {
      const hostile = r.adversaries
        ? ` adversaries=${r.adversaries} void=${r.voidApplied} memoryOver=${r.memoryOver} attacks=${Object.entries(r.attacks)
            .map(([k, v]) => `${k}:${v}`)
            .join(',')}${
            r.stats.sharing
              ? ` sharing=${Object.entries(r.stats.sharing)
                  .map(([k, v]) => `${k}:${v}`)
                  .join(',')}`
              : ''
          }`
        : ''
      log(
        `seed ${r.seed}: ${r.peers} peers [${r.faults.join(' ')}] ${bad ? 'FAIL' : 'ok'} rounds=${r.livenessRounds} writes=${r.ackedWrites} msgs=${r.stats.messages} crashes=${r.stats.crashes}${hostile}${r.hub ? ` hub: relayed=${r.hub.relayed} viaHub=${r.hub.viaHub} direct=${r.hub.direct} hubOnlyFed=${r.hub.hubOnlyFed}` : ''} trace=${r.traceHash.slice(0, 16)}`,
      )
    }
    if (bad) {
      for (const f of r.failures) log(`  ${f}`)
      if (r.livenessFailure) for (const l of describeLivenessFailure(r.livenessFailure)) log(`  ${l}`)
      const refused = Object.entries(r.stats.rejected)
        .map(([k, v]) => `${k}=${v}`)
        .join(' ')
      if (refused) log(`  changes honest peers refused: ${refused}`)
      if (r.tail.length) log(`  trace tail:\n    ${r.tail.join('\n    ')}`)
      log(`  replay: ${replayCommand(r.seed, opts)}`)
    }
    if (!args.json && !args.verbose && results.size % 50 === 0) log(`${results.size}/${seeds.length} seeds, ${((performance.now() - t0) / 1000).toFixed(0)} s`)
  }
  if (args.jobs <= 1) await runRange(seeds, opts, onResult)
  else await runInWorkers(seeds, opts, args.jobs, onResult)
  const ordered = seeds.map((s) => results.get(s)!)
  const failed = ordered.filter(failedSeed)
  const secs = (performance.now() - t0) / 1000
  const summary = {
    seeds: ordered.length,
    peers: args.peers,
    diverged: ordered.reduce((n, r) => n + r.diverged, 0),
    lostWrites: ordered.reduce((n, r) => n + r.lostWrites, 0),
    leakedReads: ordered.reduce((n, r) => n + r.leakedReads, 0),
    voidApplied: ordered.reduce((n, r) => n + r.voidApplied, 0),
    memoryOver: ordered.reduce((n, r) => n + r.memoryOver, 0),
    honestBackedOff: ordered.reduce((n, r) => n + r.honestBackedOff, 0),
    ...(args.hubs
      ? { hubLeaked: ordered.reduce((n, r) => n + r.hubLeaked, 0), hubDiverged: ordered.reduce((n, r) => n + r.hubDiverged, 0), hubs: args.hubs, hub: sumHubs(ordered) }
      : {}),
    hostileBackedOff: ordered.reduce((n, r) => n + r.hostileBackedOff, 0),
    adversaries: args.adversaries,
    failedSeeds: failed.map((r) => r.seed),
    ...(failed.length ? { replays: failed.map((r) => replayCommand(r.seed, opts)) } : {}),
    traceHash: toHex(sha256(utf8(ordered.map((r) => r.traceHash).join('\n')))),
    firstSeed: args.start,
    peersPerSeed: args.exactPeers ? 'exact' : `3..${args.peers}`,
    maxLivenessRounds: Math.max(...ordered.map((r) => r.livenessRounds)),
    ackedWrites: ordered.reduce((n, r) => n + r.ackedWrites, 0),
    crashes: ordered.reduce((n, r) => n + r.stats.crashes, 0),
    ...(args.adversaries ? { attacks: sumAttacks(ordered), maxMemory: maxMemory(ordered), sharing: sumSharing(ordered) } : {}),
    seconds: Number(secs.toFixed(1)),
    seedsPerMinute: Number(((ordered.length / secs) * 60).toFixed(1)),
    jobs: args.jobs,
  }
  if (args.json) console.log(JSON.stringify(summary))
  else {
    console.log(
      `${summary.seeds} seeds (${summary.peersPerSeed} peers) in ${summary.seconds} s: diverged=${summary.diverged} lostWrites=${summary.lostWrites} leakedReads=${summary.leakedReads} voidApplied=${summary.voidApplied} memoryOver=${summary.memoryOver}${
        summary.hub ? ` hubLeaked=${summary.hubLeaked} hubDiverged=${summary.hubDiverged} viaHub=${summary.hub.viaHubShare}` : ''
      }`,
    )
    console.log(`trace ${summary.traceHash}${failed.length ? `\nfailed seeds: ${summary.failedSeeds.join(' ')}` : ''}`)
  }
  process.exit(failed.length ? 1 : 0)
}

/**
 * `--chat`: the chat read-state workload, seed after seed in this thread (peers, faults and
 * adversaries do not apply: sim/chat-workload.ts draws its own accounts and devices).
 */
async function runChat(args: Args) {
  const crypto = nodeSyncCryptoProvider()
  const t0 = performance.now()
  const log = (s: string) => (args.json ? process.stderr : process.stdout).write(s + '\n')
  const results: ChatSeedResult[] = []
  for (let seed = args.start; seed < args.start + args.seeds; seed++) {
    let r: ChatSeedResult
    try {
      r = await runChatSeed(seed, crypto)
    } catch (err) {
      r = {
        seed,
        accounts: 0,
        devices: 0,
        steps: 0,
        checks: 0,
        mismatches: 0,
        violations: 0,
        diverged: 1,
        failures: [`threw: ${(err as Error).stack ?? String(err)}`],
        traceHash: 'error',
      }
    }
    results.push(r)
    const bad = r.failures.length > 0
    if (args.verbose || bad)
      log(`seed ${seed}: ${r.accounts} accounts ${r.devices} devices ${r.steps} steps ${r.checks} checks ${bad ? 'FAIL' : 'ok'} trace=${r.traceHash.slice(0, 16)}`)
    if (bad) {
      for (const f of r.failures) log(`  ${f}`)
      log(`  replay: npm run sim -- --chat --seed ${seed} --verbose`)
    }
  }
  const secs = (performance.now() - t0) / 1000
  const summary = {
    mode: 'chat',
    seeds: results.length,
    firstSeed: args.start,
    mismatches: results.reduce((n, r) => n + r.mismatches, 0),
    violations: results.reduce((n, r) => n + r.violations, 0),
    diverged: results.reduce((n, r) => n + r.diverged, 0),
    failedSeeds: results.filter((r) => r.failures.length).map((r) => r.seed),
    checks: results.reduce((n, r) => n + r.checks, 0),
    steps: results.reduce((n, r) => n + r.steps, 0),
    devices: results.reduce((n, r) => n + r.devices, 0),
    traceHash: toHex(sha256(utf8(results.map((r) => r.traceHash).join('\n')))),
    seconds: Number(secs.toFixed(1)),
  }
  if (args.json) console.log(JSON.stringify(summary))
  else
    console.log(
      `${summary.seeds} chat seeds in ${summary.seconds} s: mismatches=${summary.mismatches} violations=${summary.violations} diverged=${summary.diverged} checks=${summary.checks}\ntrace ${summary.traceHash}`,
    )
  process.exit(summary.failedSeeds.length ? 1 : 0)
}

if (isMainThread) await main()
