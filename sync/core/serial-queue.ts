/**
 * Runs async tasks one at a time, in the order they were queued. A task that fails rejects
 * its own promise only: the next task still runs.
 */
export class SerialQueue {
  private tail: Promise<unknown> = Promise.resolve()

  run<T>(fn: () => T | Promise<T>): Promise<T> {
    const run = this.tail.then(fn)
    this.tail = run.then(noop, noop)
    return run
  }

  /** Settles once nothing is queued, including tasks queued by the tasks it waited for. */
  async drained(): Promise<void> {
    let t: Promise<unknown>
    do {
      t = this.tail
      await t
    } while (t !== this.tail)
  }
}

const noop = () => undefined

/**
 * A SerialQueue per key (a space, a peer): tasks of one key run one at a time in order, tasks
 * of different keys run independently. A key's lane is dropped once it is idle, so the map
 * holds only keys with work queued.
 */
export class KeyedSerialQueue {
  private readonly lanes = new Map<string, Promise<unknown>>()

  run<T>(key: string, fn: () => T | Promise<T>): Promise<T> {
    const run = (this.lanes.get(key) ?? Promise.resolve()).then(fn)
    const tail = run.then(noop, noop)
    this.lanes.set(key, tail)
    void tail.then(() => {
      if (this.lanes.get(key) === tail) this.lanes.delete(key)
    })
    return run
  }

  /** Keys with work queued or running. */
  get size(): number {
    return this.lanes.size
  }
}
