import { availableParallelism } from 'node:os'
import { Worker } from 'node:worker_threads'
import type { Env } from '../../sync/core/env.ts'
import type { Json } from '../../sync/crdt/ops.ts'
import { AGENT_LIMITS } from '../../sync/modules/agents/limits.ts'
import type { RunEnvelope } from '../../sync/modules/agents/record.ts'
import { errField, silentLogger, type Logger } from '../../sync/core/log.ts'
import type { FromThread, ToThread } from './sandbox-thread.ts'
import { SHARED, STOP_TIMEOUT, stopMessage, type StopReason, type VmResult } from './sandbox-vm-contract.ts'

/**
 * Programs run in QuickJS compiled to WebAssembly (quickjs-emscripten), never in the daemon's
 * realm, and never on the daemon's thread: each run goes to a sandbox thread (a worker of a
 * small pool, sandbox-thread.ts), so a program that computes, allocates or backtracks without
 * end holds its own thread and nothing else. The sandbox's globals are QuickJS's standard
 * library only (no `process`, `require`, `fetch`, fs or timers), and the program reaches the
 * world only through the `svc` object built from the capabilities passed in. Capabilities run
 * here, on the daemon's thread: the program's thread asks for each call by message and waits
 * for the reply.
 *
 * Budgets of one run, each holding within a second of its value:
 * - fuel: counted in the program's thread (interrupt checks, or its CPU time, whichever is
 *   more: sandbox-vm.ts); a thread stuck in one native call that never reaches an interrupt
 *   check is terminated once it has been stuck longer than its remaining fuel stands for;
 * - memory: the runtime's allocator limit (`memoryBytes`); an allocation past it throws
 *   `out of memory` inside the program; the thread's own heap is capped too;
 * - time: `timeoutMs` on the injected clock: the daemon sets the thread's stop flag (a
 *   computing program stops at its next check, a waiting one at once) and terminates the
 *   thread if it has not answered `killGraceMs` later;
 * - input depth: JSON entering the sandbox (args, capability results) and leaving it (capability
 *   arguments, the returned value) nests at most `jsonDepth` levels, checked here without
 *   recursion, so a deep value can neither overflow QuickJS's parser nor the daemon's;
 * - cost: model calls count `costUsd`, and a call once `maxCostUsd` is spent is refused (the
 *   capability itself checks, capabilities.ts).
 */

/** A host function the program calls as `await svc.<name>(arg)`; its result must be JSON. */
export type Capability = (arg: Json) => Promise<Json>

export interface RunBudgets {
  fuel: number
  memoryBytes: number
  timeoutMs: number
}

export interface SandboxRun {
  source: string
  args: Json
  capabilities: Readonly<Record<string, Capability>>
  budgets: RunBudgets
  env: Env
  /** The run id (`traceRef`). */
  runId: string
}

/** A run's envelope plus what the rollups need besides. */
export interface SandboxResult extends RunEnvelope {
  memPages: number
  trace: string[]
}

// ------------------------------------------------------------------ JSON depth

/** Whether a JSON value nests at most `max` arrays/objects deep (iterative: any depth is safe to ask). */
export function jsonDepthWithin(v: unknown, max: number = AGENT_LIMITS.jsonDepth): boolean {
  const stack: Array<[unknown, number]> = [[v, 0]]
  while (stack.length) {
    const [x, d] = stack.pop()!
    if (typeof x !== 'object' || x === null) continue
    if (d + 1 > max) return false
    for (const c of Array.isArray(x) ? x : Object.values(x)) if (typeof c === 'object' && c !== null) stack.push([c, d + 1])
  }
  return true
}

/** The same for JSON text, before it is parsed: brackets outside strings. */
export function jsonTextDepthWithin(text: string, max: number = AGENT_LIMITS.jsonDepth): boolean {
  let depth = 0
  let inString = false
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (inString) {
      if (c === 92 /* \ */) i++
      else if (c === 34 /* " */) inString = false
    } else if (c === 34) inString = true
    else if (c === 91 /* [ */ || c === 123 /* { */) {
      if (++depth > max) return false
    } else if (c === 93 /* ] */ || c === 125 /* } */) depth--
  }
  return true
}

const tooDeep = (what: string) => `${what} nests deeper than ${AGENT_LIMITS.jsonDepth} levels`

// ------------------------------------------------------------------ the pool

interface Job {
  run: SandboxRun
  resolve: (r: SandboxResult) => void
}

/** What a run holds while its thread works on it. */
interface Active {
  job: Job
  started: number
  done: boolean
  cancelTimeout: () => void
  graceTimer?: ReturnType<typeof setTimeout>
  stallTimer?: ReturnType<typeof setInterval>
}

class SandboxThread {
  readonly worker: Worker
  readonly shared = new Int32Array(new SharedArrayBuffer(SHARED.length * 4))
  readonly ready: Promise<void>
  active: Active | undefined
  dead = false
  idleTimer: ReturnType<typeof setTimeout> | undefined

  constructor(onMessage: (t: SandboxThread, m: FromThread) => void, onGone: (t: SandboxThread, err: Error) => void, log: Logger) {
    // Without tsx: the thread's module graph is erasable TypeScript, which Node runs as is.
    this.worker = new Worker(new URL('./sandbox-thread.ts', import.meta.url), {
      execArgv: [],
      workerData: { shared: this.shared.buffer },
      resourceLimits: { maxOldGenerationSizeMb: AGENT_LIMITS.threadHeapMb, maxYoungGenerationSizeMb: 16, stackSizeMb: 16 },
    })
    let markReady: () => void = () => undefined
    let failStart: (err: Error) => void = () => undefined
    this.ready = new Promise<void>((resolve, reject) => {
      markReady = resolve
      failStart = reject
    })
    // A start that fails is reported to the run that waits for it (and the thread's end by
    // onGone), not as an unhandled rejection.
    this.ready.catch((err: unknown) => log.debug('a sandbox thread failed to start', { err: errField(err) }))
    this.worker.on('message', (m: FromThread) => {
      if (m.t === 'ready') markReady()
      else onMessage(this, m)
    })
    const gone = (err: Error) => {
      if (this.dead) return
      this.dead = true
      failStart(err)
      onGone(this, err)
    }
    this.worker.on('error', gone)
    this.worker.on('exit', (code) => gone(new Error(`the sandbox thread exited (${code})`)))
    // Referenced while it starts and while it runs a program; an idle thread never holds the process open.
  }

  post(m: ToThread): void {
    this.worker.postMessage(m)
  }
}

/**
 * Sandbox threads, at most `size` at once, each running one program at a time; runs beyond
 * wait in a queue of at most `AGENT_LIMITS.runQueue`. A thread starts on demand, stops after
 * `AGENT_LIMITS.threadIdleMs` without a run, and is replaced when a run had to be killed.
 */
export class SandboxPool {
  private readonly threads = new Set<SandboxThread>()
  private readonly idle: SandboxThread[] = []
  private readonly queue: Job[] = []
  private closed = false

  constructor(
    readonly size: number = Math.max(1, Math.min(AGENT_LIMITS.concurrentRuns, availableParallelism())),
    private readonly log: Logger = silentLogger,
  ) {}

  /** Starts one thread ahead of the first run (its QuickJS module compiles in the thread). */
  async warm(): Promise<void> {
    if (this.threads.size > 0) return
    const t = this.spawn()
    await t.ready
    t.worker.unref()
    this.idle.push(t)
    this.armIdle(t)
  }

  run(run: SandboxRun): Promise<SandboxResult> {
    const failed = (error: string) => Promise.resolve(failedResult(run, 0, 0, error))
    if (this.closed) return failed('the sandbox is closed')
    if (!jsonDepthWithin(run.args)) return failed(tooDeep('args'))
    return new Promise<SandboxResult>((resolve) => {
      const job: Job = { run, resolve }
      if (this.queue.length >= AGENT_LIMITS.runQueue) {
        this.log.warn('run refused: the sandbox queue is full', { runId: run.runId, queued: this.queue.length })
        resolve(failedResult(run, 0, 0, `the sandbox is busy: ${this.queue.length} runs are waiting`))
        return
      }
      this.queue.push(job)
      this.pump()
    })
  }

  /** Terminates every thread; runs in flight fail, queued ones too. */
  async close(): Promise<void> {
    this.closed = true
    for (const j of this.queue.splice(0)) j.resolve(failedResult(j.run, 0, 0, 'the sandbox is closed'))
    await Promise.all([...this.threads].map((t) => this.kill(t, 'the sandbox is closed')))
  }

  private spawn(): SandboxThread {
    const t = new SandboxThread(
      (th, m) => this.onMessage(th, m),
      (th, err) => this.onGone(th, err),
      this.log,
    )
    this.threads.add(t)
    return t
  }

  private pump(): void {
    while (this.queue.length) {
      let t = this.idle.pop()
      if (!t) {
        if (this.threads.size >= this.size) return
        t = this.spawn()
      }
      this.start(t, this.queue.shift()!)
    }
  }

  private armIdle(t: SandboxThread): void {
    clearTimeout(t.idleTimer)
    t.idleTimer = setTimeout(() => {
      const i = this.idle.indexOf(t)
      if (i < 0 || t.active) return
      this.idle.splice(i, 1)
      void this.kill(t)
    }, AGENT_LIMITS.threadIdleMs)
    t.idleTimer.unref()
  }

  private start(t: SandboxThread, job: Job): void {
    clearTimeout(t.idleTimer)
    const { run } = job
    const { env, budgets } = run
    const a: Active = { job, started: env.now(), done: false, cancelTimeout: () => undefined }
    t.active = a
    t.worker.ref()
    Atomics.store(t.shared, SHARED.stop, 0)
    Atomics.store(t.shared, SHARED.fuel, 0)
    Atomics.store(t.shared, SHARED.beat, 0)
    Atomics.store(t.shared, SHARED.busy, 0)
    t.ready.then(
      () => {
        if (a.done || t.dead) return
        t.post({
          t: 'run',
          run: {
            source: run.source,
            argsText: JSON.stringify(run.args ?? null),
            names: Object.keys(run.capabilities),
            budgets: {
              fuel: budgets.fuel,
              fuelUnitUs: AGENT_LIMITS.fuelUnitUs,
              memoryBytes: budgets.memoryBytes,
              stackBytes: AGENT_LIMITS.stackBytes,
              traceBytes: AGENT_LIMITS.traceMaxBytes,
              valueBytes: AGENT_LIMITS.valueBytes,
            },
          },
        })
      },
      () => undefined,
    )
    // Time is the env's (a virtual clock in tests): at the budget the thread is asked to stop,
    // and terminated if it has not answered a grace later (stuck in one native call).
    a.cancelTimeout = env.setTimer(budgets.timeoutMs, () => {
      if (a.done) return
      Atomics.store(t.shared, SHARED.stop, STOP_TIMEOUT)
      t.post({ t: 'stop' })
      a.graceTimer = setTimeout(() => {
        if (!a.done) this.abandon(t, 'timeout', 'thread terminated: it did not stop at its time budget')
      }, AGENT_LIMITS.killGraceMs)
    })
    // Fuel is counted at interrupt checks; a thread that reaches none for longer than its
    // remaining fuel stands for (plus the grace) is spending fuel nobody counts.
    let lastBeat = -1
    let stuckSince = 0
    const every = 100
    a.stallTimer = setInterval(() => {
      if (a.done) return
      const beat = Atomics.load(t.shared, SHARED.beat)
      const busy = Atomics.load(t.shared, SHARED.busy) === 1
      const now = performance.now()
      if (!busy || beat !== lastBeat) {
        lastBeat = beat
        stuckSince = now
        return
      }
      const leftMs = ((budgets.fuel - Atomics.load(t.shared, SHARED.fuel)) * AGENT_LIMITS.fuelUnitUs) / 1000
      if (now - stuckSince > Math.max(0, leftMs) + AGENT_LIMITS.killGraceMs) this.abandon(t, 'fuel', 'thread terminated: one native call ran past the fuel left')
    }, every)
    a.stallTimer.unref()
  }

  private onMessage(t: SandboxThread, m: FromThread): void {
    if (m.t === 'free') {
      this.release(t)
      return
    }
    const a = t.active
    if (m.t === 'broken') {
      this.log.error('QuickJS failed in a sandbox thread; the thread is replaced', { runId: a?.job.run.runId, message: m.message })
      if (a && !a.done) this.finish(t, a, failedResult(a.job.run, a.started, Atomics.load(t.shared, SHARED.fuel), `the sandbox failed: ${m.message}`))
      void this.kill(t)
      return
    }
    if (!a || a.done) return
    if (m.t === 'call') {
      void this.capability(a.job.run, m.name, m.argText).then(
        (text) => !a.done && t.post({ t: 'reply', call: m.call, ok: true, text }),
        (err: unknown) => !a.done && t.post({ t: 'reply', call: m.call, ok: false, message: err instanceof Error ? err.message : String(err) }),
      )
    } else if (m.t === 'done') {
      // The thread takes its next run once it says `free` (it tears down and prepares first).
      this.finish(t, a, fromVm(a.job.run, a.started, m.result))
    }
  }

  /** One capability call of a program: JSON text in and out, both depth-checked. */
  private async capability(run: SandboxRun, name: string, argText: string): Promise<string> {
    const cap = Object.hasOwn(run.capabilities, name) ? run.capabilities[name] : undefined
    if (!cap) throw new Error(`no capability ${name}`)
    if (argText.length > AGENT_LIMITS.capabilityArgBytes) throw new Error(`the argument of ${name} is over ${AGENT_LIMITS.capabilityArgBytes} characters`)
    if (!jsonTextDepthWithin(argText)) throw new Error(tooDeep(`the argument of ${name}`))
    const value = await cap(JSON.parse(argText) as Json)
    if (!jsonDepthWithin(value)) throw new Error(tooDeep(`the result of ${name}`))
    return JSON.stringify(value ?? null)
  }

  private finish(t: SandboxThread, a: Active, result: SandboxResult): void {
    if (a.done) return
    a.done = true
    a.cancelTimeout()
    clearTimeout(a.graceTimer)
    clearInterval(a.stallTimer)
    if (t.active === a) t.active = undefined
    a.job.resolve(result)
  }

  private release(t: SandboxThread): void {
    if (t.dead || t.active || this.idle.includes(t)) return
    t.worker.unref()
    this.idle.push(t)
    this.armIdle(t)
    this.pump()
  }

  /** A run that would not stop: its thread is terminated (the only way to cut native code) and replaced on demand. */
  private abandon(t: SandboxThread, stop: StopReason, why: string): void {
    const a = t.active
    if (!a || a.done) return
    this.log.warn(why, { runId: a.job.run.runId, stop })
    this.finish(t, a, failedResult(a.job.run, a.started, stop === 'fuel' ? a.job.run.budgets.fuel : Atomics.load(t.shared, SHARED.fuel), stopMessage(stop)))
    void this.kill(t)
  }

  private async kill(t: SandboxThread, why = 'the sandbox thread was stopped'): Promise<void> {
    this.forget(t)
    const a = t.active
    if (a && !a.done) this.finish(t, a, failedResult(a.job.run, a.started, Atomics.load(t.shared, SHARED.fuel), why))
    t.dead = true
    await t.worker.terminate()
    this.pump()
  }

  private forget(t: SandboxThread): void {
    clearTimeout(t.idleTimer)
    this.threads.delete(t)
    const i = this.idle.indexOf(t)
    if (i >= 0) this.idle.splice(i, 1)
  }

  /** The thread died on its own: its heap limit, or an error no run caught. */
  private onGone(t: SandboxThread, err: Error): void {
    this.forget(t)
    const a = t.active
    if (a && !a.done) {
      const oom = (err as { code?: string }).code === 'ERR_WORKER_OUT_OF_MEMORY'
      this.log.error('the sandbox thread died during a run', { runId: a.job.run.runId, err: errField(err) })
      this.finish(
        t,
        a,
        failedResult(
          a.job.run,
          a.started,
          Atomics.load(t.shared, SHARED.fuel),
          oom ? 'out of memory: the sandbox thread passed its heap limit' : `the sandbox failed: ${err.message}`,
        ),
      )
    } else {
      this.log.error('an idle sandbox thread died', { err: errField(err) })
    }
    this.pump()
  }
}

function failedResult(run: SandboxRun, started: number, fuelUsed: number, error: string): SandboxResult {
  return {
    status: 'failed',
    traceRef: run.runId,
    durationMs: started ? Math.max(0, run.env.now() - started) : 0,
    fuelUsed: Math.min(fuelUsed, run.budgets.fuel),
    value: null,
    error,
    memPages: 0,
    trace: [],
  }
}

function fromVm(run: SandboxRun, started: number, r: VmResult): SandboxResult {
  let value: Json = null
  if (r.status === 'ok')
    value = jsonTextDepthWithin(r.valueText) ? (JSON.parse(r.valueText) as Json) : { truncated: true, bytes: r.valueText.length, depth: `over ${AGENT_LIMITS.jsonDepth}` }
  return {
    status: r.status,
    traceRef: run.runId,
    durationMs: Math.max(0, run.env.now() - started),
    fuelUsed: r.fuelUsed,
    value,
    error: r.error,
    memPages: r.memPages,
    trace: r.trace,
  }
}

let pool: SandboxPool | undefined
/**
 * The process's sandbox pool (one per daemon process: the threads are the machine's, not an
 * account's). It logs to the logger of the first runner that asked for it.
 */
export const sandboxPool = (log?: Logger): SandboxPool => (pool ??= new SandboxPool(undefined, log))

/** Starts a sandbox thread ahead of the first run. */
export const warmSandbox = (): Promise<void> => sandboxPool().warm()

export function runSandboxed(run: SandboxRun, log?: Logger): Promise<SandboxResult> {
  return sandboxPool(log).run(run)
}
