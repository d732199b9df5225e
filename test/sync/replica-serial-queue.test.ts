import { describe, expect, it } from 'vitest'
import { SerialQueue } from '../../sync/core/serial-queue.ts'

describe('SerialQueue', () => {
  it('runs tasks one at a time, in the order they were queued', async () => {
    const q = new SerialQueue()
    const log: string[] = []
    const task = (name: string, ms: number) => () =>
      new Promise<string>((resolve) => {
        log.push(`start ${name}`)
        setTimeout(() => {
          log.push(`end ${name}`)
          resolve(name)
        }, ms)
      })
    const results = await Promise.all([q.run(task('a', 20)), q.run(task('b', 1)), q.run(() => 'c')])
    expect(results).toEqual(['a', 'b', 'c'])
    expect(log).toEqual(['start a', 'end a', 'start b', 'end b'])
  })

  it('a failed task rejects its own promise and does not block the next', async () => {
    const q = new SerialQueue()
    const failing = q.run(async () => {
      throw new Error('boom')
    })
    const throwing = q.run(() => {
      throw new Error('sync boom')
    })
    const next = q.run(async () => 'ran')
    await expect(failing).rejects.toThrow('boom')
    await expect(throwing).rejects.toThrow('sync boom')
    expect(await next).toBe('ran')
  })
})
