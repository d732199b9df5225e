import { spawn, type ChildProcess } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { Readable, Writable } from 'node:stream'
import type { CliIO } from '../../server/cli/io.ts'

export const REPO = fileURLToPath(new URL('../../', import.meta.url))
const MAIN = fileURLToPath(new URL('../../server/cli/main.ts', import.meta.url))
const LAUNCHER = fileURLToPath(new URL('../../server/cli/svc.mjs', import.meta.url))

export interface Served {
  proc: ChildProcess
  url: string
  /** Managed mode: the control token (second stdout line). */
  token?: string
  stderr: () => string
  stdout: () => string
  exited: Promise<number | null>
}

/**
 * Every `svc` process a test started that has not exited. A test that times out, or forgets to
 * stop what it started, must not leave a daemon listening after the run (issue 39, item 3):
 * test/setup/processes.ts kills what is left after each test file, a start that times out kills
 * its process (`serve`, `startDaemon`), and the worker's exit kills the rest.
 */
const live = new Set<ChildProcess>()
process.once('exit', () => {
  for (const p of live) p.kill('SIGKILL')
})

/** The `svc` processes started by this test file that still run. */
export const liveSvcProcesses = (): ChildProcess[] => [...live]

/** Stops every `svc` process still running: SIGTERM, then SIGKILL after `graceMs`; resolves once all have exited. */
export async function killLeftSvcProcesses(graceMs = 5_000): Promise<ChildProcess[]> {
  const left = [...live]
  await Promise.all(
    left.map(
      (p) =>
        new Promise<void>((resolve) => {
          if (p.exitCode !== null || p.signalCode !== null) return resolve()
          const hard = setTimeout(() => p.kill('SIGKILL'), graceMs)
          p.once('exit', () => {
            clearTimeout(hard)
            resolve()
          })
          p.kill('SIGTERM')
        }),
    ),
  )
  return left
}

/**
 * Spawns `svc` on the Node running the tests, TypeScript through tsx, with the launcher's V8
 * flags; or, with `built`, through the package's launcher on the compiled dist/cli, as an
 * installed svc runs (the caller builds it first: scripts/build.ts `buildCli`).
 */
export function spawnSvc(args: string[], opts: { stdin?: string; env?: NodeJS.ProcessEnv; nodeArgs?: string[]; built?: boolean } = {}) {
  // Extra Node flags for the child only, e.g. `--cpu-prof --cpu-prof-dir=/tmp/prof` (Node 22 refuses
  // --cpu-prof in NODE_OPTIONS).
  const extra = (process.env.SVC_SPAWN_NODE_FLAGS ?? '').split(/\s+/).filter(Boolean)
  const entry = opts.built ? [LAUNCHER] : ['--import', 'tsx', MAIN]
  const proc = spawn(process.execPath, [...extra, '--max-semi-space-size=64', ...(opts.nodeArgs ?? []), ...entry, ...args], {
    cwd: REPO,
    env: { ...process.env, ...opts.env },
    stdio: ['pipe', 'pipe', 'pipe'],
  })
  live.add(proc)
  proc.once('exit', () => live.delete(proc))
  let out = ''
  let err = ''
  proc.stdout.setEncoding('utf8').on('data', (c: string) => (out += c))
  proc.stderr.setEncoding('utf8').on('data', (c: string) => (err += c))
  proc.stdin.end(opts.stdin ?? '')
  const exited = new Promise<number | null>((resolve) => proc.on('exit', (code) => resolve(code)))
  return { proc, exited, stdout: () => out, stderr: () => err }
}

/** Starts `svc serve` on port 0 and waits for the base URL (and token) on stdout; a start that times out kills the process. */
export async function serve(args: string[], opts: { stdin?: string; env?: NodeJS.ProcessEnv; startTimeoutMs?: number } = {}): Promise<Served> {
  const s = spawnSvc(['serve', '--port', '0', '--no-mdns', ...args], opts)
  const lines = args.includes('--managed') ? 2 : 1
  let timer: NodeJS.Timeout | undefined
  await new Promise<void>((resolve, reject) => {
    const check = () => {
      if (s.stdout().split('\n').length > lines) resolve()
    }
    s.proc.stdout.on('data', check)
    void s.exited.then((code) => reject(new Error(`svc serve exited ${code}: ${s.stderr()}`)))
    // Only while it starts: a daemon that started runs as long as its test needs it.
    timer = setTimeout(() => {
      s.proc.kill('SIGKILL')
      reject(new Error(`svc serve did not start: ${s.stderr()}`))
    }, opts.startTimeoutMs ?? 20_000)
    timer.unref()
  }).finally(() => clearTimeout(timer))
  const [url, token] = s.stdout().split('\n')
  return { ...s, url: url, ...(lines === 2 ? { token: token } : {}) }
}

export async function stop(s: Served): Promise<number | null> {
  if (s.proc.exitCode === null) s.proc.kill('SIGTERM')
  return s.exited
}

/** In-process IO for the CLI's `main`. */
export function memoryIO(stdin = '', env: NodeJS.ProcessEnv = {}) {
  let out = ''
  let err = ''
  const sink = (append: (s: string) => void) =>
    new Writable({
      write(chunk, _enc, cb) {
        append(String(chunk))
        cb()
      },
    })
  const io: CliIO = {
    stdout: sink((s) => (out += s)),
    stderr: sink((s) => (err += s)),
    stdin: Readable.from([stdin]),
    env,
  }
  return { io, out: () => out, err: () => err }
}
