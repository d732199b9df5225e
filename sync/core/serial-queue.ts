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
