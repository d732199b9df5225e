import { isMarkedAsUntransferable, Worker } from 'node:worker_threads'
import type { BlockCrypto, HeldBlock } from '../../sync/modules/files/block-crypto.ts'
import { FILES } from '../../sync/modules/files/limits.ts'
import { SharedSlots } from './shared-slots.ts'

export type BlockCryptoRequest =
  | { op: 'slots'; n: number; buffer: SharedArrayBuffer; slotBytes: number }
  | { op: 'sealSlot'; n: number; secret: Uint8Array; slot: number; length: number }
  | { op: 'seal'; n: number; secret: Uint8Array; bytes: Uint8Array }
  | { op: 'open'; n: number; key: Uint8Array; bytes: Uint8Array }
  | { op: 'isBlock'; n: number; id: string; bytes: Uint8Array }

export type BlockCryptoReply = { n: number; ok: true; id?: string; key?: Uint8Array; bytes?: Uint8Array; is?: boolean; length?: number } | { n: number; ok: false; message: string }

/**
 * The buffer under given bytes, to transfer, unless it cannot move: a SharedArrayBuffer, or
 * one Node marked (its pool of small Buffers, shared by many): those are copied.
 */
const movable = (bytes: Uint8Array): ArrayBuffer[] => (bytes.buffer instanceof ArrayBuffer && !isMarkedAsUntransferable(bytes.buffer) ? [bytes.buffer] : [])

/**
 * Slots shared with the thread for sealing: a block and its tag fit one. As many as an attach
 * holds at once (8 sealing, a batch of 8 filling, 2 batches writing) and one more batch; a seal
 * that finds none free is posted as a copy instead, so nothing ever waits for a slot.
 */
const SLOT_BYTES = FILES.blockSize + 64
const SLOT_COUNT = 40

/**
 * A thread idle this long is stopped with its slots (about 26 MB, and up to 40 MiB more once an
 * attach has touched every slot); the next block starts one again.
 */
const IDLE_MS = 60_000

interface Waiting {
  resolve: (r: Extract<BlockCryptoReply, { ok: true }>) => void
  reject: (err: Error) => void
}

/**
 * The daemon's block crypto: files' sealing, address checks and opening on one worker thread,
 * so an attach or a transfer leaves the event loop to HTTP, head sync and the disk. Attach's
 * blocks cross through slots shared with the thread, and other bytes move by transfer, so the
 * daemon's heap sees no new 1 MiB buffer per block (docs/files.md "Where the work runs").
 *
 * The thread starts at the first block and stops after IDLE_MS without one; it holds the
 * process open only while a request is out. A thread that dies fails what was out with its
 * error and is replaced at the next request.
 */
export class WorkerBlockCrypto implements BlockCrypto {
  private worker: Worker | undefined
  /** The slots the current thread shares (made with it, dropped with it). */
  private slots: SharedSlots | undefined
  private readonly waiting = new Map<number, Waiting>()
  private next = 1
  private idleTimer: ReturnType<typeof setTimeout> | undefined

  private thread(): Worker {
    if (this.worker) return this.worker
    // Without tsx: the thread's module graph is erasable TypeScript, which Node runs as is, and
    // the thread starts in about half the time (164 against 325 ms measured here).
    const w = new Worker(new URL('./block-crypto-thread.ts', import.meta.url), { execArgv: [] })
    w.on('message', (r: BlockCryptoReply) => this.settle(r))
    const fail = (err: Error) => {
      if (this.worker !== w) return
      this.worker = undefined
      this.slots = undefined
      const out = [...this.waiting.values()]
      this.waiting.clear()
      for (const x of out) x.reject(err)
    }
    w.on('error', fail)
    w.on('exit', (code) => fail(new Error(`block crypto thread exited (${code})`)))
    w.unref()
    this.worker = w
    this.slots = new SharedSlots(SLOT_BYTES, SLOT_COUNT)
    w.postMessage({ op: 'slots', n: 0, buffer: this.slots.buffer, slotBytes: SLOT_BYTES } satisfies BlockCryptoRequest)
    return w
  }

  private settle(r: BlockCryptoReply) {
    const x = this.waiting.get(r.n)
    if (!x) return
    this.waiting.delete(r.n)
    if (this.waiting.size === 0) this.idle()
    if (r.ok) x.resolve(r)
    else x.reject(new Error(r.message))
  }

  /** Nothing out: the thread no longer holds the process, and goes once idle for IDLE_MS. */
  private idle() {
    const w = this.worker
    if (!w) return
    w.unref()
    clearTimeout(this.idleTimer)
    this.idleTimer = setTimeout(() => {
      if (this.worker === w && this.waiting.size === 0) {
        this.worker = undefined
        this.slots = undefined
        void w.terminate()
      }
    }, IDLE_MS)
    this.idleTimer.unref()
  }

  /**
   * Posts a request. Bytes not in `transfer` are copied before postMessage returns (so the
   * caller may reuse them, the BlockCrypto contract), which also keeps attach's block buffers
   * allocated in the thread's heap, not the daemon's. Given bytes move whole: serializing
   * 1 MiB costs the event loop about as much as hashing it.
   */
  private call(req: BlockCryptoRequest, transfer: ArrayBuffer[] = []): Promise<Extract<BlockCryptoReply, { ok: true }>> {
    clearTimeout(this.idleTimer)
    const w = this.thread()
    const reply = new Promise<Extract<BlockCryptoReply, { ok: true }>>((resolve, reject) => this.waiting.set(req.n, { resolve, reject }))
    if (this.waiting.size === 1) w.ref()
    w.postMessage(req, transfer)
    return reply
  }

  /**
   * Through a shared slot when one is free: the plaintext is copied in, the thread seals it and
   * writes the ciphertext over it, and the caller holds the slot until it releases the block.
   * Otherwise posted as a copy, the ciphertext coming back by transfer.
   */
  async seal(secret: Uint8Array, plain: Uint8Array): Promise<HeldBlock> {
    this.thread()
    const slots = this.slots!
    const slot = plain.length + 16 <= slots.slotBytes ? slots.take() : undefined
    if (slot === undefined) {
      const r = await this.call({ op: 'seal', n: this.next++, secret, bytes: plain })
      return { id: r.id!, key: r.key!, bytes: r.bytes! }
    }
    slots.view(slot, plain.length).set(plain)
    let r: Extract<BlockCryptoReply, { ok: true }>
    try {
      r = await this.call({ op: 'sealSlot', n: this.next++, secret, slot, length: plain.length })
    } catch (err) {
      slots.give(slot)
      throw err
    }
    let held = true
    const release = () => {
      if (held) slots.give(slot)
      held = false
    }
    return { id: r.id!, key: r.key!, bytes: slots.view(slot, r.length!), release }
  }

  async open(key: Uint8Array, bytes: Uint8Array, give = false): Promise<Uint8Array> {
    return (await this.call({ op: 'open', n: this.next++, key, bytes }, give ? movable(bytes) : [])).bytes!
  }

  async isBlock(id: string, bytes: Uint8Array): Promise<Uint8Array | undefined> {
    const r = await this.call({ op: 'isBlock', n: this.next++, id, bytes }, movable(bytes))
    return r.is ? r.bytes : undefined
  }

  /** Stops the thread; requests still out fail. */
  async close(): Promise<void> {
    clearTimeout(this.idleTimer)
    const w = this.worker
    this.worker = undefined
    this.slots = undefined
    if (w) await w.terminate()
    const out = [...this.waiting.values()]
    this.waiting.clear()
    for (const x of out) x.reject(new Error('block crypto closed'))
  }
}
