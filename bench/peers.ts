/**
 * Side by side (issue 40): the same six workloads on svc, Jazz, automerge-repo and Yjs, each at
 * its own recommended setup with persistence on disk, two peers in two processes over loopback
 * (docs/performance.md "Side by side" says how each system is set up and which shape its records
 * take). Every figure is measured in this run, and each svc figure comes with its ratio to the
 * best peer (above 1: svc is ahead).
 *
 * `npm run bench -- --json --only peers [--peers-workloads 1,3] [--peers-systems svc,yjs]`.
 * Sizes: BENCH_PEERS_RECORDS (10,000), BENCH_PEERS_EDITS (1,000), BENCH_PEERS_CHARS (5,000 per
 * peer), BENCH_PEERS_COLD (100,000; BENCH_PEERS_COLD_JAZZ overrides it for Jazz).
 */
import { loadavg } from 'node:os'
import { ipcSystem } from './peers/ipc-system.ts'
import { svcSystem } from './peers/svc.ts'
import type { Sizes, SystemRun } from './peers/types.ts'

const progress = (m: string) => process.stderr.write(`[bench peers] ${m}\n`)
const SYSTEMS = ['svc', 'jazz', 'automerge', 'yjs'] as const
type System = (typeof SYSTEMS)[number]

function listArg(flag: string): string[] | undefined {
  const i = process.argv.indexOf(flag)
  return i >= 0 ? process.argv[i + 1]?.split(',') : undefined
}

const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b)
  return s.length ? s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] : NaN
}
const r2 = (x: number) => Math.round(x * 100) / 100

/** Which way each figure is better, for svc's ratio to the best peer. */
const FIGURES: Record<string, 'higher' | 'lower'> = {
  localWritesPerSec: 'higher',
  firstSyncMs: 'lower',
  liveEditP50Ms: 'lower',
  liveEditP99Ms: 'lower',
  textConvergedMs: 'lower',
  textBytesA: 'lower',
  textBytesB: 'lower',
  coldOpenMs: 'lower',
  coldSpawnToAnswerMs: 'lower',
  coldRssMB: 'lower',
  addToMemberReadsMs: 'lower',
  removeToSealedMs: 'lower',
}

type Ratio = { best: string; bestValue: number; svc: number; svcVsBest: number; jazz?: number; svcVsJazz?: number }

/**
 * svc's ratio to the best other system on every figure both have, and to Jazz (the peer with
 * the same guarantees: signed, encrypted, groups with key rotation): above 1, svc is ahead.
 */
function ratios(results: Partial<Record<System, Record<string, unknown>>>) {
  const out: Record<string, Ratio> = {}
  const svc = results.svc
  if (!svc) return out
  const vs = (dir: 'higher' | 'lower', mine: number, other: number) => r2(dir === 'higher' ? mine / other : other / mine)
  for (const [fig, dir] of Object.entries(FIGURES)) {
    const mine = svc[fig]
    if (typeof mine !== 'number') continue
    let best: [string, number] | undefined
    for (const s of SYSTEMS) {
      const v = results[s]?.[fig]
      if (s === 'svc' || typeof v !== 'number') continue
      if (!best || (dir === 'higher' ? v > best[1] : v < best[1])) best = [s, v]
    }
    if (!best) continue
    const jazz = results.jazz?.[fig]
    out[fig] = { best: best[0], bestValue: best[1], svc: mine, svcVsBest: vs(dir, mine, best[1]), ...(typeof jazz === 'number' ? { jazz, svcVsJazz: vs(dir, mine, jazz) } : {}) }
  }
  return out
}

async function runSystem(sys: System, sizes: Sizes, want: Set<number>): Promise<Record<string, unknown>> {
  const run: SystemRun = sys === 'svc' ? svcSystem(progress) : ipcSystem(sys, progress)
  const out: Record<string, unknown> = {}
  const step = async (what: string, fn: () => Promise<Record<string, unknown> | undefined>) => {
    try {
      Object.assign(out, (await fn()) ?? {})
    } catch (err) {
      progress(`${sys}: ${what} failed: ${(err as Error).message}`)
      out[`${what}Error`] = (err as Error).message.slice(0, 500)
    } finally {
      await run.close()
    }
  }
  try {
    if (want.has(1) || want.has(2) || want.has(3))
      await step('writesSyncEdit', async () => {
        const r = await run.writesSyncEdit(sizes, want)
        const samples = r.liveEditSamples as number[] | undefined
        delete r.liveEditSamples
        if (!want.has(1)) delete r.localWritesPerSec
        if (samples) Object.assign(r, { liveEditP50Ms: r2(pct(samples, 50)), liveEditP99Ms: r2(pct(samples, 99)), liveEdits: samples.length })
        return r
      })
    if (want.has(4)) await step('concurrentText', () => run.concurrentText(sizes))
    if (want.has(5)) {
      const n = sys === 'jazz' ? Number(process.env.BENCH_PEERS_COLD_JAZZ ?? sizes.coldRecords) : sizes.coldRecords
      await step('coldOpen', () => run.coldOpen(n))
    }
    if (want.has(6) && (sys === 'svc' || sys === 'jazz')) await step('shareRevoke', () => run.shareRevoke())
  } finally {
    await run.close()
  }
  return out
}

export async function benchPeers(): Promise<Record<string, unknown>> {
  const want = new Set((listArg('--peers-workloads') ?? ['1', '2', '3', '4', '5', '6']).map(Number))
  const systems = (listArg('--peers-systems') ?? [...SYSTEMS]) as System[]
  const sizes: Sizes = {
    records: Number(process.env.BENCH_PEERS_RECORDS ?? 10_000),
    edits: Number(process.env.BENCH_PEERS_EDITS ?? 1000),
    warmup: 20,
    chars: Number(process.env.BENCH_PEERS_CHARS ?? 5000),
    coldRecords: Number(process.env.BENCH_PEERS_COLD ?? 100_000),
  }
  const loadBefore = loadavg().map((x) => r2(x))
  const results: Partial<Record<System, Record<string, unknown>>> = {}
  for (const sys of systems) {
    progress(`${sys}...`)
    results[sys] = await runSystem(sys, sizes, want)
    progress(`${sys}: ${JSON.stringify(results[sys])}`)
  }
  return { workloads: [...want].sort(), sizes, loadAvgBefore: loadBefore, loadAvgAfter: loadavg().map((x) => r2(x)), ...results, svcVsBestPeer: ratios(results) }
}
