/**
 * CLI start-up benchmark (issue 39, item 1): what a user waits for at each `svc` call, against
 * a bare `node -e 0` measured in the same run on the same machine.
 *
 * - `svc --version` and `svc health` through the package's launcher (server/cli/svc.mjs, the
 *   compiled build), median wall time of RUNS calls each, as a ratio to `node -e 0` (target
 *   <= 3). The same through the first other `node` on the PATH, when there is one (the launcher
 *   then starts the bundled Node: two starts), against that Node's own `node -e 0`.
 * - daemon start to health: spawn `svc serve` on an empty data directory, until `GET
 *   /v1/health` answers 200 (target <= 1500 ms), median of STARTS.
 * - the README quick start: its runnable blocks in one bash session against a fresh daemon,
 *   as the doc test runs them; total wall time and the number of `svc` calls in them.
 * - for contrast, one `svc --version` from the TypeScript sources (tsx, SVC_FROM_SOURCE=1).
 *
 * It builds dist/cli first (`npm run build`'s CLI step), so it measures the code as it is.
 */
import { spawn, spawnSync } from 'node:child_process'
import { existsSync, mkdtempSync, readFileSync, realpathSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { delimiter, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { buildCli } from '../scripts/build.ts'
import { runnableBlocks } from '../test/docs/doc-blocks.ts'

const REPO = fileURLToPath(new URL('../', import.meta.url))
const LAUNCHER = join(REPO, 'server/cli/svc.mjs')
const RUNS = Number(process.env.BENCH_CLI_RUNS ?? 15)
const STARTS = Number(process.env.BENCH_CLI_STARTS ?? 5)
const progress = (m: string) => process.stderr.write(`[bench cli] ${m}\n`)

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b)
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2
}
const round = (x: number, d = 1) => Math.round(x * 10 ** d) / 10 ** d

/** Wall time of one process, start to exit, in ms. */
function wall(cmd: string, args: string[], env: NodeJS.ProcessEnv = process.env): number {
  const t0 = performance.now()
  const r = spawnSync(cmd, args, { cwd: REPO, env, stdio: ['ignore', 'ignore', 'pipe'], timeout: 60_000 })
  const ms = performance.now() - t0
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')} exited ${r.status}: ${String(r.stderr)}`)
  return ms
}

/** Median wall times of several commands, interleaved so that load changes hit each alike. */
function medians(cmds: Record<string, [string, string[]]>, env?: NodeJS.ProcessEnv): Record<string, number> {
  const times: Record<string, number[]> = Object.fromEntries(Object.keys(cmds).map((k) => [k, []]))
  for (const [c, a] of Object.values(cmds)) wall(c, a, env) // warm the file cache
  for (let i = 0; i < RUNS; i++) for (const [k, [c, a]] of Object.entries(cmds)) times[k].push(wall(c, a, env))
  return Object.fromEntries(Object.entries(times).map(([k, v]) => [k, round(median(v))]))
}

interface Daemon {
  url: string
  startToHealthMs: number
  stop: () => Promise<void>
}

/** `svc serve` on an empty data directory; resolves once /v1/health answers 200. */
async function startDaemon(): Promise<Daemon> {
  const data = mkdtempSync(join(tmpdir(), 'svc-bench-cli-'))
  const t0 = performance.now()
  const proc = spawn(process.execPath, [LAUNCHER, 'serve', '--port', '0', '--no-mdns', '--data', data], {
    cwd: REPO,
    env: { ...process.env, SVC_NO_MDNS: '1', SVC_P2P_LISTEN: '/ip4/127.0.0.1/tcp/0', SVC_AGENTS_PORT: '0' },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  const exited = new Promise<void>((r) => proc.on('exit', () => r()))
  const stop = async () => {
    if (proc.exitCode === null && proc.signalCode === null) proc.kill('SIGTERM')
    const t = setTimeout(() => proc.kill('SIGKILL'), 15_000)
    await exited
    clearTimeout(t)
    rmSync(data, { recursive: true, force: true })
  }
  let out = ''
  let err = ''
  proc.stdout.setEncoding('utf8').on('data', (c: string) => (out += c))
  proc.stderr.setEncoding('utf8').on('data', (c: string) => (err += c))
  try {
    const url = await new Promise<string>((resolve, reject) => {
      proc.stdout.on('data', () => out.includes('\n') && resolve(out.split('\n')[0]))
      void exited.then(() => reject(new Error(`svc serve exited: ${err}`)))
      setTimeout(() => reject(new Error(`svc serve did not start in 60 s: ${err}`)), 60_000).unref()
    })
    for (;;) {
      const ok = await fetch(`${url}/v1/health`).then(
        (r) => r.status === 200,
        () => false,
      )
      if (ok) break
      await new Promise((r) => setTimeout(r, 5))
    }
    return { url, startToHealthMs: performance.now() - t0, stop }
  } catch (e) {
    await stop()
    throw e
  }
}

/** The first `node` on the PATH that is not the one running this benchmark. */
function otherNode(): string | undefined {
  const self = realpathSync(process.execPath)
  for (const dir of (process.env.PATH ?? '').split(delimiter)) {
    const p = join(dir, 'node')
    if (existsSync(p) && realpathSync(p) !== self) return p
  }
  return undefined
}

/** The README's runnable blocks in one bash session against `url`: wall ms and `svc` calls. */
function quickStart(url: string): { ms: number; svcCalls: number; blocks: number } {
  const blocks = runnableBlocks('README.md', readFileSync(join(REPO, 'README.md'), 'utf8'))
  const script = ['set -euo pipefail', ...blocks.map((b) => b.code)].join('\n')
  const svcCalls = blocks.reduce((n, b) => n + (b.code.match(/(^|[\s$(|;&])svc\s/gm)?.length ?? 0), 0) - 1 // less the function's definition
  const t0 = performance.now()
  const r = spawnSync('bash', ['-c', script], {
    cwd: REPO,
    env: { ...process.env, SVC: url, SVC_URL: url, SVC_NO_MDNS: '1', EDITOR: 'true' },
    stdio: ['ignore', 'ignore', 'pipe'],
    timeout: 600_000,
  })
  const ms = performance.now() - t0
  if (r.status !== 0) throw new Error(`the README quick start failed (${r.status}): ${String(r.stderr).slice(-2000)}`)
  return { ms: Math.round(ms), svcCalls, blocks: blocks.length }
}

export async function benchCli(): Promise<Record<string, unknown>> {
  progress('building dist/cli')
  await buildCli()
  const node = process.execPath

  progress('daemon start to health')
  const starts: number[] = []
  for (let i = 0; i < STARTS; i++) {
    const d = await startDaemon()
    starts.push(d.startToHealthMs)
    await d.stop()
  }
  const daemon = await startDaemon()
  try {
    progress(`svc --version, svc health and node -e 0, ${RUNS} runs each`)
    const m = medians({
      nodeE0: [node, ['-e', '0']],
      version: [node, [LAUNCHER, '--version']],
      health: [node, [LAUNCHER, 'health', '--url', daemon.url]],
    })
    let viaOtherNode: Record<string, unknown> | undefined
    const other = otherNode()
    if (other) {
      progress(`the same through ${other}`)
      const o = medians({ nodeE0: [other, ['-e', '0']], version: [other, [LAUNCHER, '--version']], health: [other, [LAUNCHER, 'health', '--url', daemon.url]] })
      const version = spawnSync(other, ['--version'], { encoding: 'utf8' }).stdout.trim()
      viaOtherNode = { node: `${other} ${version}`, ...o, versionRatio: round(o.version / o.nodeE0, 2), healthRatio: round(o.health / o.nodeE0, 2) }
    }
    progress('one svc --version from the TypeScript sources (tsx)')
    const fromSourceMs = round(wall(node, [LAUNCHER, '--version'], { ...process.env, SVC_FROM_SOURCE: '1' }))
    await daemon.stop()

    progress('the README quick start against a fresh daemon')
    const qsDaemon = await startDaemon()
    let qs: ReturnType<typeof quickStart>
    try {
      qs = quickStart(qsDaemon.url)
    } finally {
      await qsDaemon.stop()
    }

    const versionRatio = round(m.version / m.nodeE0, 2)
    const healthRatio = round(m.health / m.nodeE0, 2)
    const startMs = Math.round(median(starts))
    return {
      runs: RUNS,
      nodeE0Ms: m.nodeE0,
      versionMs: m.version,
      healthMs: m.health,
      versionRatio,
      healthRatio,
      ratioTarget: 3,
      ratioMet: versionRatio <= 3 && healthRatio <= 3,
      daemonStartToHealthMs: startMs,
      daemonStartToHealthAllMs: starts.map((x) => Math.round(x)),
      startTargetMs: 1500,
      startMet: startMs <= 1500,
      quickStart: { totalMs: qs.ms, svcCalls: qs.svcCalls, perCallMs: Math.round(qs.ms / Math.max(1, qs.svcCalls)), blocks: qs.blocks },
      versionFromSourceMs: fromSourceMs,
      ...(viaOtherNode ? { viaOtherNode } : {}),
    }
  } finally {
    await daemon.stop()
  }
}
