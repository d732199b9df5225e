/**
 * Fixed-size slots of one SharedArrayBuffer, lent out one at a time: the daemon and its block
 * crypto thread both see a slot's bytes, so a block crosses between them without a copy on
 * either side and without a fresh 1 MiB buffer per block. Fresh buffers are what cost the
 * daemon most in an attach: every 64 MB of them starts a full collection of its heap
 * (docs/files.md "Where the work runs").
 */
export class SharedSlots {
  readonly buffer: SharedArrayBuffer
  private readonly free: number[]

  constructor(
    readonly slotBytes: number,
    count: number,
  ) {
    this.buffer = new SharedArrayBuffer(slotBytes * count)
    this.free = Array.from({ length: count }, (_, i) => count - 1 - i)
  }

  /** A free slot, or undefined when all are lent (the caller then does without). */
  take(): number | undefined {
    return this.free.pop()
  }

  give(slot: number): void {
    this.free.push(slot)
  }

  /** `length` bytes at the start of a slot. */
  view(slot: number, length: number): Uint8Array {
    if (length > this.slotBytes) throw new RangeError(`${length} bytes do not fit a slot of ${this.slotBytes}`)
    return new Uint8Array(this.buffer, slot * this.slotBytes, length)
  }

  get available(): number {
    return this.free.length
  }
}
