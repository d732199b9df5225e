import { parentPort, workerData } from 'node:worker_threads'
import { newQuickJSWASMModule, newVariant, RELEASE_SYNC, type QuickJSWASMModule } from 'quickjs-emscripten'
import { AGENT_LIMITS } from '../../sync/modules/agents/limits.ts'
import { prepareVm, type PreparedVm } from './sandbox-vm.ts'
import type { VmResult, VmRun } from './sandbox-vm-contract.ts'

/**
 * The sandbox thread (started by sandbox.ts): runs one program at a time in QuickJS and asks
 * the daemon for every capability call by message. The daemon owns time: it sets the stop flag
 * in the shared buffer and posts `stop`; a thread that does not finish soon after is
 * terminated, so nothing a program does here can hold the daemon's event loop.
 */
export type ToThread = { t: 'run'; run: VmRun } | { t: 'reply'; call: number; ok: true; text: string } | { t: 'reply'; call: number; ok: false; message: string } | { t: 'stop' }

export type FromThread =
  | { t: 'ready' }
  | { t: 'call'; call: number; name: string; argText: string }
  | { t: 'done'; result: VmResult }
  /** Torn down and the next runtime prepared: the thread takes a run again. */
  | { t: 'free' }
  /** QuickJS failed (an abort inside the WebAssembly module): the thread must be replaced. */
  | { t: 'broken'; message: string }

const port = parentPort!
const shared = new Int32Array((workerData as { shared: SharedArrayBuffer }).shared)
const waiting = new Map<number, { resolve: (text: string) => void; reject: (err: Error) => void }>()
let nextCall = 1
let wakeWait: (() => void) | undefined
const post = (m: FromThread) => port.postMessage(m)

/** WebAssembly pages (64 KiB) QuickJS starts with: its static data, stack and first heap. */
const BASE_PAGES = 256

/**
 * One QuickJS instance per memory budget, each over a WebAssembly memory that cannot grow past
 * the budget plus the instance's starting size. QuickJS's own allocator limit does not hold
 * for large strings and ArrayBuffers (measured: 2,141 strings of 1 MB under an 8 MiB limit);
 * the memory's `maximum` does: a growth past it fails, and QuickJS throws `out of memory`.
 * Two budgets are kept at most (the daemon uses one; tests use a few).
 */
const modules = new Map<number, Promise<QuickJSWASMModule>>()
function moduleFor(memoryBytes: number): Promise<QuickJSWASMModule> {
  let m = modules.get(memoryBytes)
  if (!m) {
    if (modules.size >= 2) modules.delete(modules.keys().next().value!)
    const wasmMemory = new WebAssembly.Memory({ initial: BASE_PAGES, maximum: BASE_PAGES + Math.ceil(memoryBytes / 65536) })
    m = newQuickJSWASMModule(newVariant(RELEASE_SYNC, { wasmMemory }))
    modules.set(memoryBytes, m)
  }
  return m
}

/** The runtime the next run gets, prepared while the thread waits. */
let prepared: PreparedVm | undefined
async function prepare(memoryBytes: number): Promise<PreparedVm> {
  return prepareVm(await moduleFor(memoryBytes), memoryBytes, AGENT_LIMITS.stackBytes, shared)
}
const message = (err: unknown) => (err instanceof Error ? err.message : String(err))

prepared = await prepare(AGENT_LIMITS.memoryBytes)

port.on('message', (m: ToThread) => {
  if (m.t === 'reply') {
    const w = waiting.get(m.call)
    if (!w) return
    waiting.delete(m.call)
    if (m.ok) w.resolve(m.text)
    else w.reject(new Error(m.message))
  } else if (m.t === 'stop') {
    wakeWait?.()
  } else if (m.t === 'run') {
    void start(m.run)
  }
})

async function start(run: VmRun): Promise<void> {
  try {
    let vm = prepared
    prepared = undefined
    if (!vm || vm.memoryBytes !== run.budgets.memoryBytes) {
      const failed = vm?.teardown()
      if (failed !== undefined) throw new Error(failed)
      vm = await prepare(run.budgets.memoryBytes)
    }
    const result = await vm.run(
      run,
      (name, argText) =>
        new Promise<string>((resolve, reject) => {
          const call = nextCall++
          waiting.set(call, { resolve, reject })
          post({ t: 'call', call, name, argText })
        }),
      (wake) => (wakeWait = wake),
    )
    waiting.clear()
    // The answer first: tearing down and preparing the next runtime happen after it.
    post({ t: 'done', result })
    const failed = vm.teardown()
    // QuickJS aborted freeing the runtime (a leak inside it, seen after a deep JSON.stringify
    // overflowed): the result stood, but this instance is no longer sound.
    if (failed !== undefined) {
      post({ t: 'broken', message: failed })
      return
    }
    prepared = await prepare(run.budgets.memoryBytes)
    post({ t: 'free' })
  } catch (err) {
    post({ t: 'broken', message: message(err) })
  }
}

post({ t: 'ready' })
