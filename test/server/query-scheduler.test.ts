import { describe, expect, it } from 'vitest'
import { QueryScheduler, runQueryFair } from '../../server/http/query-scheduler.ts'
import { runQuery, type Steps } from '../../sync/query/index.ts'
import { InMemoryIndex } from '../../sync/query/source.ts'

function* counted(name: string, steps: number, log: string[]): Steps<string> {
  for (let i = 0; i < steps; i++) {
    log.push(`${name}${i}`)
    yield
  }
  return name
}

describe('the query scheduler', () => {
  it('interleaves evaluations step by step and lets the event loop run between slices', async () => {
    // A clock that advances one unit per reading: a slice of 4 units is about two steps.
    let t = 0
    const scheduler = new QueryScheduler(4, () => t++)
    const log: string[] = []
    const a = scheduler.run(counted('a', 6, log))
    const b = scheduler.run(counted('b', 6, log))
    let between = -1
    // Queued after the evaluations: it runs once the first slice yields, long before they end.
    setImmediate(() => (between = log.length))
    expect(await Promise.all([a, b])).toEqual(['a', 'b'])
    expect(log.slice(0, 4)).toEqual(['a0', 'b0', 'a1', 'b1'])
    expect(between).toBeGreaterThan(0)
    expect(between).toBeLessThan(log.length)
    expect(scheduler.pending).toBe(0)
  })

  it('rejects an evaluation that throws and keeps running the others', async () => {
    const scheduler = new QueryScheduler()
    function* bad(): Steps<number> {
      yield
      throw new Error('boom')
    }
    const log: string[] = []
    await expect(scheduler.run(bad())).rejects.toThrow('boom')
    expect(await scheduler.run(counted('c', 3, log))).toBe('c')
  })

  it('answers a large query like runQuery, and a bad body before any work', async () => {
    const docs = Array.from({ length: 20_000 }, (_, i) => ({ id: `d${i}`, n: i % 97, s: `x${i % 13}` }))
    const ix = new InMemoryIndex([], docs)
    const body = { filter: { n: { $gt: 40 } }, sort: ['-s', 'n'], offset: 30, limit: 25, includeTotal: true }
    expect(await runQueryFair(ix, body)).toEqual(runQuery(docs, body))
    await expect(runQueryFair(ix, { filter: { n: { $nope: 1 } } })).rejects.toMatchObject({ code: 'filter.unknown_operator' })
  })
})
