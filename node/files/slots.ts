/**
 * At most `size` tasks run at once; the rest wait in arrival order. A task's failure frees its
 * slot like a success does.
 */
export class Slots {
  private running = 0
  private readonly waiting: Array<() => void> = []

  constructor(private readonly size: number) {
    if (!(size >= 1)) throw new RangeError('Slots needs at least one slot')
  }

  async run<T>(task: () => Promise<T>): Promise<T> {
    if (this.running >= this.size) await new Promise<void>((resolve) => this.waiting.push(resolve))
    else this.running++
    try {
      return await task()
    } finally {
      // The slot passes straight to the next waiter, so a newcomer cannot overtake it.
      const next = this.waiting.shift()
      if (next) next()
      else this.running--
    }
  }
}
