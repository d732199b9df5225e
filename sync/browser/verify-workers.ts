import type { CryptoProvider } from '../crypto/provider.ts'

/**
 * Ed25519 verification in Web Workers for a page's ingest.
 *
 * Why: Chromium runs a WebCrypto Ed25519 verify synchronously on the calling thread (a CDP
 * profile of the browser benchmark's ingest shows the native `verify` as about half the main
 * thread's time). A worker's WebCrypto is the same implementation, so its answers are the
 * same, and the main thread keeps the rest of ingest (decode, apply, IndexedDB) and the page.
 *
 * How: `verify` queues the request; in a microtask the queue is handed out in chunks (64
 * signatures, packed into one transferred buffer, answered by one array of results: a
 * postMessage per signature would cost more than it saves), each worker keeping two chunks in
 * flight, so a step's signatures start verifying while the rest of it still decodes. What is
 * still queued when the page's thread is idle (requestIdleCallback) it verifies itself, a few
 * at a time: with one worker, ingest otherwise waits on it with the page's thread idle.
 * Until a worker has answered its start-up probe (RFC 8032's first test vector, and a
 * corrupted copy that must fail), and whenever no worker is usable (no Worker, a blob: URL
 * refused by the page's CSP, a worker that failed or stalled), verification runs on the
 * page's own provider, as without this wrapper. A request whose worker fails is verified again
 * there: a worker's failure never turns into a rejected change, nor into a lost answer.
 *
 * Memory: what waits here is what callers asked to verify and have not been answered yet:
 * ingest verifies at most its steps in flight (BROWSER_INGEST_AHEAD), so this stays bounded.
 */
export interface VerifyWorkerOptions {
  /** Workers to start (default: one per core, 1 to 4). 0: none, verify on the page. */
  workers?: number
  /** Most signatures in one message to a worker (default 64). */
  chunk?: number
}

/** The worker, as source (a blob: URL): self-contained, nothing of the bundle in it. */
const WORKER_SOURCE = `
const keys = new Map()
const subtle = self.crypto.subtle
const keyOf = (pub) => {
  let s = ''
  for (let i = 0; i < pub.length; i++) s += String.fromCharCode(pub[i])
  let p = keys.get(s)
  if (!p) {
    if (keys.size >= 4096) keys.clear()
    p = subtle.importKey('raw', pub, { name: 'Ed25519' }, false, ['verify'])
    keys.set(s, p)
  }
  return p
}
const one = async (pub, msg, sig) => {
  try {
    return (await subtle.verify({ name: 'Ed25519' }, await keyOf(pub), sig, msg)) ? 1 : 0
  } catch {
    keys.delete(String.fromCharCode(...pub))
    return 0
  }
}
self.onmessage = async (e) => {
  const { id, lens, data } = e.data
  const n = lens.length / 3
  const out = new Uint8Array(n)
  const all = new Array(n)
  let at = 0
  for (let i = 0; i < n; i++) {
    const a = at, b = a + lens[3 * i], c = b + lens[3 * i + 1], d = c + lens[3 * i + 2]
    at = d
    all[i] = one(data.subarray(a, b), data.subarray(b, c), data.subarray(c, d)).then((ok) => { out[i] = ok })
  }
  await Promise.all(all)
  self.postMessage({ id, out }, [out.buffer])
}
`

/** RFC 8032 section 7.1, test 1: public key, empty message, signature. */
const PROBE_PUB = 'd75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a'
const PROBE_SIG = 'e5564300c360ac729086e2cc806e828a84877f1eb8e5d974d873e065224901555fb8821590a33bacc61e39701cf9b46bd25bf5f0595bbe24655141438e7a100b'

/** A chunk not answered after this long (64 signatures take a few ms) fails its worker. */
const STALL_MS = 10_000

const hex = (s: string) => Uint8Array.from(s.match(/../g)!, (h) => parseInt(h, 16))

interface Req {
  pub: Uint8Array
  msg: Uint8Array
  sig: Uint8Array
  resolve: (ok: boolean) => void
}

interface Slot {
  worker: Worker
  ready: boolean
  dead: boolean
  /** Messages sent and not answered yet, by id. */
  sent: Map<number, Req[]>
}

export interface WorkerVerifier extends CryptoProvider {
  /** Workers answering now (0 while they start, or when none could). */
  readonly workersReady: () => number
  /** How many signatures the workers and the page's thread verified (tests, benchmarks). */
  readonly verifiedBy: () => { workers: number; page: number }
  /** Stops the workers; later calls verify on the page. */
  close(): void
}

/**
 * One per core, 1 to 4. Not one fewer, leaving the page's thread a core: during a backlog that
 * thread waits for the checks about 40% of the time, and on 2 cores one worker left that idle
 * (ingestVsBare median 0.55 over six runs against 0.75 with two, alternating; docs/browser.md).
 */
function defaultWorkers(): number {
  const cores = (globalThis.navigator as { hardwareConcurrency?: number } | undefined)?.hardwareConcurrency ?? 2
  return Math.max(1, Math.min(4, cores))
}

type IdleCallback = (cb: (d: { timeRemaining(): number }) => void) => number

/** `base` with its `verify` moved to Web Workers where it can be (see above); everything else is `base`'s. */
export function verifyInWorkers(base: CryptoProvider, o: VerifyWorkerOptions = {}): WorkerVerifier {
  const pool = new VerifyPool(base, o.workers ?? defaultWorkers(), Math.max(1, o.chunk ?? 64))
  pool.start()
  return {
    ...base,
    name: `${base.name}+workers`,
    verify: (pub, msg, sig) => pool.verify(pub, msg, sig),
    workersReady: () => pool.usable().length,
    verifiedBy: () => ({ workers: pool.byWorkers, page: pool.byPage }),
    close: () => pool.close(),
  }
}

/** The workers, the queue of requests not handed out yet, and who verified how many. */
class VerifyPool {
  private readonly slots: Slot[] = []
  /** Asked and not yet handed to a worker or to the page's thread. */
  private queue: Req[] = []
  private head = 0
  private pumping = false
  private helping = false
  private nextId = 1
  private closed = false
  byWorkers = 0
  byPage = 0
  /**
   * The page's thread verifies queued requests itself while it is idle (requestIdleCallback:
   * nothing else is waiting to run): when ingest waits for its signatures it has nothing else
   * to do, and one worker alone left it idle about a quarter of a backlog's ingest.
   */
  private readonly idle = (globalThis as { requestIdleCallback?: IdleCallback }).requestIdleCallback

  constructor(
    private readonly base: CryptoProvider,
    private readonly want: number,
    private readonly chunk: number,
  ) {}

  verify(pub: Uint8Array, msg: Uint8Array, sig: Uint8Array): Promise<boolean> {
    if (this.closed || !this.slots.some((s) => s.ready && !s.dead)) {
      this.byPage++
      return this.base.verify(pub, msg, sig)
    }
    return new Promise<boolean>((resolve) => {
      this.queue.push({ pub, msg, sig, resolve })
      this.schedule()
    })
  }

  close(): void {
    this.closed = true
    for (const s of this.slots) this.fail(s)
    for (const r of this.take(this.queue.length - this.head)) this.onPage(r)
  }

  usable(): Slot[] {
    return this.slots.filter((s) => s.ready && !s.dead)
  }

  private onPage(r: Req): void {
    this.byPage++
    void this.base.verify(r.pub, r.msg, r.sig).then(r.resolve, () => r.resolve(false))
  }

  private take(n: number): Req[] {
    const out = this.queue.slice(this.head, this.head + n)
    this.head += out.length
    if (this.head === this.queue.length) {
      this.queue = []
      this.head = 0
    }
    return out
  }

  /** A failed worker's unanswered chunks go to the page's thread: no request is lost or rejected. */
  private fail(slot: Slot): void {
    if (slot.dead) return
    slot.dead = true
    slot.worker.terminate()
    for (const [id, reqs] of slot.sent) if (id !== 0) for (const r of reqs) this.onPage(r)
    slot.sent.clear()
    // What is queued goes to the other workers, or to the page if none is left.
    if (this.head < this.queue.length) this.schedule()
  }

  /** One message per chunk: lengths and bytes packed into two transferred buffers. */
  private send(slot: Slot, reqs: Req[], id = this.nextId++): void {
    const lens = new Uint32Array(reqs.length * 3)
    let total = 0
    reqs.forEach((r, i) => {
      lens[3 * i] = r.pub.length
      lens[3 * i + 1] = r.msg.length
      lens[3 * i + 2] = r.sig.length
      total += r.pub.length + r.msg.length + r.sig.length
    })
    const data = new Uint8Array(total)
    let at = 0
    for (const r of reqs) {
      data.set(r.pub, at)
      data.set(r.msg, at + r.pub.length)
      data.set(r.sig, at + r.pub.length + r.msg.length)
      at += r.pub.length + r.msg.length + r.sig.length
    }
    slot.sent.set(id, reqs)
    try {
      slot.worker.postMessage({ id, lens, data }, [lens.buffer, data.buffer])
    } catch {
      this.fail(slot)
      return
    }
    setTimeout(() => {
      if (slot.sent.has(id)) this.fail(slot)
    }, STALL_MS)
  }

  /**
   * Hands queued requests out: each worker keeps two chunks in flight (one to verify while the
   * other's answer travels); what is left waits for a worker to answer, or for the page's
   * thread to have a turn free (`help`).
   */
  private pump(): void {
    this.pumping = false
    const live = this.usable()
    if (live.length === 0) {
      for (const r of this.take(this.queue.length - this.head)) this.onPage(r)
      return
    }
    for (const slot of live) while (slot.sent.size < 2 && this.head < this.queue.length) this.send(slot, this.take(this.chunk))
    if (this.head < this.queue.length) this.wantHelp()
  }

  private schedule(): void {
    if (this.pumping) return
    this.pumping = true
    queueMicrotask(() => this.pump())
  }

  private help(deadline: { timeRemaining(): number }): void {
    this.helping = false
    if (deadline.timeRemaining() > 2) for (const r of this.take(16)) this.onPage(r)
    if (this.head < this.queue.length) this.wantHelp()
  }

  private wantHelp(): void {
    const idle = this.idle
    if (this.helping || !idle) return
    this.helping = true
    // Called detached, as the global function it is (a method call would pass this pool as `this`).
    idle((d) => this.help(d))
  }

  /** Starts the workers from a blob: URL; any step the page refuses leaves verification on the page. */
  start(): void {
    if (this.want <= 0 || typeof Worker === 'undefined' || typeof Blob === 'undefined' || typeof URL?.createObjectURL !== 'function') return
    let url: string
    try {
      url = URL.createObjectURL(new Blob([WORKER_SOURCE], { type: 'text/javascript' }))
    } catch {
      return
    }
    const pub = hex(PROBE_PUB)
    const sig = hex(PROBE_SIG)
    const bad = sig.slice()
    bad[0] ^= 1
    const probe = (s: Uint8Array): Req => ({ pub, msg: new Uint8Array(0), sig: s, resolve: () => undefined })
    for (let i = 0; i < this.want; i++) {
      let worker: Worker
      try {
        worker = new Worker(url)
      } catch {
        break
      }
      const slot: Slot = { worker, ready: false, dead: false, sent: new Map() }
      this.slots.push(slot)
      worker.onerror = () => this.fail(slot)
      worker.onmessageerror = () => this.fail(slot)
      worker.onmessage = (e: MessageEvent<{ id: number; out: Uint8Array }>) => this.answered(slot, e.data.id, e.data.out)
      this.send(slot, [probe(sig), probe(bad)], 0)
    }
    // Every worker has fetched the source once it runs; the URL is not needed after.
    setTimeout(() => URL.revokeObjectURL(url), 1000)
  }

  /** A worker's answer to message `id`: the probe (0) makes it ready or fails it; any other resolves its chunk. */
  private answered(slot: Slot, id: number, out: Uint8Array): void {
    const reqs = slot.sent.get(id)
    if (!reqs || slot.dead) return
    slot.sent.delete(id)
    if (id === 0) {
      // The probe: the good signature passes and the corrupted one fails, or the worker is not used.
      if (out.length === 2 && out[0] === 1 && out[1] === 0 && !this.closed) slot.ready = true
      else this.fail(slot)
    } else {
      this.byWorkers += reqs.length
      reqs.forEach((r, j) => r.resolve(out[j] === 1))
    }
    if (this.head < this.queue.length) this.schedule()
  }
}
