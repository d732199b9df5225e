/**
 * The side-by-side benchmark's process plumbing (bench/peers.ts). Each peer of Jazz,
 * automerge-repo and Yjs is its own Node process (`fork`), driven over the IPC channel: the
 * parent sends `{id, op, args}`, the child answers `{id, result}` or `{id, error}`, and may send
 * `{event}` unasked (a live edit seen). Every child is killed when the bench ends, however it ends.
 */
import { fork, type ChildProcess } from 'node:child_process'
import { mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'

/** Wall-clock milliseconds with sub-millisecond resolution, comparable across processes of one machine. */
export const now = () => performance.timeOrigin + performance.now()

export type Handlers = Record<string, (args: any) => unknown>

/** The child side: answers the parent's ops with `handlers`. */
export function serveOps(handlers: Handlers) {
  process.on('message', (m: { id: number; op: string; args: unknown }) => {
    void (async () => {
      try {
        const fn = handlers[m.op]
        if (!fn) throw new Error(`unknown op ${m.op}`)
        const result = await fn(m.args)
        process.send!({ id: m.id, result: result ?? null })
      } catch (err) {
        process.send!({ id: m.id, error: (err as Error).stack ?? String(err) })
      }
    })()
  })
  process.on('disconnect', () => process.exit(0))
}

/** The child side: an event the parent did not ask for. */
export const emit = (event: Record<string, unknown>) => process.send!({ event })

const live = new Set<ChildProcess>()
const dirs = new Set<string>()
process.on('exit', () => {
  for (const c of live) c.kill('SIGKILL')
  for (const d of dirs) rmSync(d, { recursive: true, force: true })
})

/** A fresh directory under the system's temp dir, removed when the bench ends (or by `dropDir`). */
export function tempDir(prefix: string): string {
  const d = mkdtempSync(join(tmpdir(), prefix))
  dirs.add(d)
  return d
}

export function dropDir(d: string) {
  rmSync(d, { recursive: true, force: true })
  dirs.delete(d)
}
// Interrupted, the bench still ends through 'exit', so the peers' (and daemons') kill runs.
for (const sig of ['SIGINT', 'SIGTERM'] as const) process.once(sig, () => process.exit(130))

export interface PeerProc {
  proc: ChildProcess
  call<T = any>(op: string, args?: unknown, timeoutMs?: number): Promise<T>
  onEvent(fn: (e: any) => void): void
  kill(): Promise<void>
  startedAt: number
}

/** The parent side: forks `bench/peers/<script>` under tsx on this Node. */
export function startPeer(script: string, env: Record<string, string> = {}): PeerProc {
  const file = fileURLToPath(new URL(script, import.meta.url))
  const startedAt = now()
  const proc = fork(file, [], {
    execArgv: ['--max-semi-space-size=64', '--import', 'tsx'],
    env: { ...process.env, ...env },
    stdio: ['ignore', 'ignore', 'pipe', 'ipc'],
  })
  live.add(proc)
  let err = ''
  proc.stderr!.setEncoding('utf8').on('data', (c: string) => (err = (err + c).slice(-4000)))
  let next = 1
  const waiting = new Map<number, { resolve: (v: any) => void; reject: (e: Error) => void }>()
  const listeners: Array<(e: any) => void> = []
  proc.on('message', (m: any) => {
    if (m.event) return listeners.forEach((f) => f(m.event))
    const w = waiting.get(m.id)
    waiting.delete(m.id)
    if (m.error) w?.reject(new Error(`${script}: ${m.error}`))
    else w?.resolve(m.result)
  })
  const exited = new Promise<void>((resolve) =>
    proc.on('exit', (code) => {
      live.delete(proc)
      for (const w of waiting.values()) w.reject(new Error(`${script} exited ${code}: ${err}`))
      waiting.clear()
      resolve()
    }),
  )
  return {
    proc,
    startedAt,
    call(op, args, timeoutMs = 600_000) {
      const id = next++
      return new Promise((resolve, reject) => {
        const t = setTimeout(() => reject(new Error(`${script} ${op}: timed out`)), timeoutMs)
        waiting.set(id, {
          resolve: (v) => (clearTimeout(t), resolve(v)),
          reject: (e) => (clearTimeout(t), reject(e)),
        })
        proc.send({ id, op, args })
      })
    },
    onEvent: (fn) => void listeners.push(fn),
    async kill() {
      if (proc.exitCode === null && proc.signalCode === null) proc.kill('SIGKILL')
      await exited
    },
  }
}

/** Bytes of every file under `dir`. */
export function dirBytes(dir: string): number {
  let n = 0
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name)
    n += e.isDirectory() ? dirBytes(p) : statSync(p).size
  }
  return n
}

/** The five fields of record `i`, in plain JSON (each peer maps the date to its own type). */
export function recordFields(i: number) {
  return { name: `record ${i}`, n: i, done: i % 3 === 0, at: new Date(Date.UTC(2026, 0, 1) + i * 60_000).toISOString(), note: `short note ${i % 97}` }
}

export const recordId = (i: number) => `r${i}`

/** A small seeded PRNG (mulberry32), so both sides of every system type the same sequence. */
export function rng(seed: number) {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

/** Yields to the event loop (lets the transport send and receive between two typed characters). */
export const tick = () => new Promise<void>((r) => setImmediate(r))
