import { describe, expect, it } from 'vitest'
import { SerialQueue } from '../../sync/core/serial-queue.ts'

describe('SerialQueue', () => {
  it('runs tasks one at a time in queue order; a failure rejects only its own task', async () => {
    const q = new SerialQueue()
    const log: string[] = []
    const task = (name: string, ms: number, fail = false) =>
      q.run(async () => {
        log.push(`start ${name}`)
        await new Promise((r) => setTimeout(r, ms))
        log.push(`end ${name}`)
        if (fail) throw new Error(name)
        return name
      })
    const results = await Promise.allSettled([task('a', 15), task('b', 1, true), task('c', 5)])
    expect(log).toEqual(['start a', 'end a', 'start b', 'end b', 'start c', 'end c'])
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled'])
  })

  it('drained() waits for tasks that queued more tasks', async () => {
    const q = new SerialQueue()
    const log: string[] = []
    void q.run(async () => {
      await new Promise((r) => setTimeout(r, 5))
      void q.run(async () => {
        await new Promise((r) => setTimeout(r, 5))
        log.push('nested')
      })
      log.push('outer')
    })
    await q.drained()
    expect(log).toEqual(['outer', 'nested'])
  })
})
