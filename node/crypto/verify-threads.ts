import { Worker } from 'node:worker_threads'
import type { WorkerLike } from '../../sync/browser/verify-workers.ts'

/**
 * The daemon's signature checks on threads of its own, 64 to a message
 * (sync/browser/verify-workers.ts hands them out; this file starts the threads).
 *
 * Why: with libuv's pool, every verify costs the event loop its own job and its own callback
 * into JS (about 11 µs of main-thread CPU per signature, against 2.5-3.5 µs for a share of one
 * message of 64 here; `verify` is 130 µs of CPU on these 2-core machines). Ingest is the event
 * loop's work, so what a verify costs it comes out of every change's apply and every request
 * waiting behind it.
 *
 * The thread is plain JavaScript (no loader, no TypeScript) and answers exactly what
 * node:crypto answers inline: OpenSSL's Ed25519 on the same bytes, copied into one transferred
 * buffer per message. verify-workers.ts probes each thread with a good and a corrupted
 * signature before using it, and verifies on the calling thread whatever a failed or stalled
 * thread had not answered: a thread's failure never accepts a change, nor loses one.
 */
const SOURCE = `
const { parentPort } = require('node:worker_threads')
const { createPublicKey, verify } = require('node:crypto')
const SPKI_PREFIX = Buffer.from('302a300506032b6570032100', 'hex')
const keys = new Map()
const keyOf = (pub) => {
  const s = Buffer.from(pub.buffer, pub.byteOffset, pub.byteLength).toString('latin1')
  let k = keys.get(s)
  if (!k) {
    if (keys.size >= 4096) keys.clear()
    k = createPublicKey({ key: Buffer.concat([SPKI_PREFIX, pub]), format: 'der', type: 'spki' })
    keys.set(s, k)
  }
  return k
}
parentPort.on('message', ({ id, lens, data }) => {
  const n = lens.length / 3
  const out = new Uint8Array(n)
  let at = 0
  for (let i = 0; i < n; i++) {
    const a = at, b = a + lens[3 * i], c = b + lens[3 * i + 1], d = c + lens[3 * i + 2]
    at = d
    try {
      if (b - a === 32 && d - c === 64) out[i] = verify(null, data.subarray(b, c), keyOf(data.subarray(a, b)), data.subarray(c, d)) ? 1 : 0
    } catch {
      out[i] = 0
    }
  }
  parentPort.postMessage({ id, out }, [out.buffer])
})
`

/**
 * As many as libuv's pool has (4), not one per core: where other processes keep the cores busy
 * (the hostile bench's flooding peer), the kernel shares them out per thread, and two threads
 * took the honest backlog under the flood 1.12-1.42x as long as the pool's four did.
 */
export const VERIFY_THREADS = 4

/** Starts one verify thread, shaped as verify-workers.ts expects; never keeps the process alive. */
export function spawnVerifyThread(): WorkerLike {
  // No execArgv: the parent's (tsx's loader) is not needed by plain JavaScript and costs start-up.
  const w = new Worker(SOURCE, { eval: true, execArgv: [] })
  // Referenced only while it owes answers: a process awaiting a verify stays up for it (as for
  // a libuv job), an idle thread never keeps one alive.
  let owed = 0
  const like: WorkerLike = {
    postMessage: (m, transfer) => {
      w.postMessage(m, transfer as never)
      if (owed++ === 0) w.ref()
    },
    terminate: () => void w.terminate(),
    onmessage: null,
    onerror: null,
    onmessageerror: null,
  }
  w.on('message', (data) => {
    if (--owed === 0) w.unref()
    like.onmessage?.({ data } as MessageEvent<{ id: number; out: Uint8Array }>)
  })
  w.on('error', (e) => like.onerror?.(e))
  w.on('messageerror', (e) => like.onmessageerror?.(e))
  // A thread that exits (killed, out of memory) fails like one that threw: its requests go back.
  w.on('exit', (code) => like.onerror?.(new Error(`verify thread exited (${code})`)))
  // After the listeners: attaching a 'message' listener refs the thread's port again.
  if (owed === 0) w.unref()
  return like
}
