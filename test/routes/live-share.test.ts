import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { LiveWindow } from '../../sync/query/index.ts'
import { bootApp, call, listen, newObject, newSpace, ok, openSse, type Booted, type Frame, type SseClient } from './helpers.ts'

/**
 * Shared windows (server/routes/live-share.ts): object subscriptions with the same query share
 * one window; each still sees exactly what an independent subscription sees, and keeps its own
 * mailbox.
 */
let b: Booted
let base: string
beforeAll(async () => {
  b = await bootApp()
  base = await listen(b.app)
})
afterAll(() => b.close())

const changes = (frames: Frame[]) => frames.filter((f) => f.event === 'changes').flatMap((f) => f.data as Array<Record<string, unknown>>)
const versions = (c: SseClient) => changes(c.frames).map((e) => e.versionId as string)
const snapshotOf = (c: SseClient) => c.frames.find((f) => f.event === 'snapshot')!.data
const setCore = (sid: string, objectId: string, values: Record<string, unknown>) => ok(call(b.app, 'POST', `/v1/spaces/${sid}/properties/${objectId}/set/core`, values))

describe('shared live windows', () => {
  it('members of one group get the frames an independent subscription gets, late joiners included', async () => {
    const sid = await newSpace(b.app, 'share')
    const url = `${base}/v1/spaces/${sid}/objects/query/subscribe`
    const seed: string[] = []
    for (const name of ['b', 'd', 'f']) seed.push(await newObject(b.app, sid, { initialProperties: { core: { name, tags: ['s'] } } }))
    const body = { filter: { 'core.tags': 's' }, sort: ['core.name'], limit: 3, includeTotal: true }
    // A different body (the drift budget never matters here: object windows refill) is its own group.
    const apply = vi.spyOn(LiveWindow.prototype, 'apply')
    const solo = await openSse(url, { ...body, driftBudgetPercent: 31 })
    const a1 = await openSse(url, body)
    const a2 = await openSse(url, body)
    const clients = [solo, a1, a2]
    try {
      for (const c of clients) await c.until((f) => f.some((x) => x.event === 'snapshot'))
      for (const c of [a1, a2]) expect(snapshotOf(c)).toEqual(snapshotOf(solo))
      expect(snapshotOf(solo)).toMatchObject({ total: 3, hasNext: false })

      const writes: Array<() => Promise<unknown>> = [
        () => newObject(b.app, sid, { initialProperties: { core: { name: 'a', tags: ['s'] } } }), // added, f displaced
        () => setCore(sid, seed[0], { description: 'edited' }), // updated
        () => setCore(sid, seed[1], { tags: ['gone'] }), // filtered-out, f back in
        () => newObject(b.app, sid, { initialProperties: { core: { name: 'z' } } }), // no frame
      ]
      apply.mockClear()
      for (const w of writes) await w()
      await solo.until((f) => changes(f).length >= 3)
      // One window evaluation per write for the group of two, one for the solo subscription.
      expect(apply.mock.calls.length).toBe(2 * writes.length)

      // A late joiner gets the current window, then the same frames as everybody else.
      const late = await openSse(url, body)
      clients.push(late)
      await late.until((f) => f.some((x) => x.event === 'snapshot'))
      const fresh = await ok(call(b.app, 'POST', `/v1/spaces/${sid}/objects/query`, body))
      expect(snapshotOf(late)).toEqual(fresh)
      await ok(call(b.app, 'DELETE', `/v1/spaces/${sid}/objects/${seed[0]}`), 204) // deleted
      for (const c of clients) await c.until((f) => changes(f).some((e) => (e.removed as Array<{ reason: string }>).some((r) => r.reason === 'deleted')))

      const want = changes(solo.frames)
      expect(want.map((e) => [(e.added as unknown[]).length, (e.updated as unknown[]).length, (e.removed as unknown[]).length])).toEqual([
        [1, 0, 1],
        [0, 1, 0],
        [1, 0, 1],
        [0, 0, 1], // b deleted: only a and f still match
      ])
      expect(changes(a1.frames)).toEqual(want)
      expect(changes(a2.frames)).toEqual(want)
      expect(changes(late.frames)).toEqual(want.slice(-1))
      expect(versions(late)).toEqual(versions(solo).slice(-1))
    } finally {
      apply.mockRestore()
      for (const c of clients) c.destroy()
    }
  })

  it('a group ends with its last member: later writes evaluate nothing', async () => {
    const sid = await newSpace(b.app, 'dissolve')
    const url = `${base}/v1/spaces/${sid}/objects/query/subscribe`
    const body = { filter: { 'core.tags': 'q' }, limit: 5 }
    const listeners = () => b.engine.account().space(sid).events.count('change')
    const idle = listeners()
    const c1 = await openSse(url, body)
    const c2 = await openSse(url, body)
    await c1.until((f) => f.some((x) => x.event === 'snapshot'))
    await c2.until((f) => f.some((x) => x.event === 'snapshot'))
    expect(listeners()).toBe(idle + 1) // one listener for the group
    c1.destroy()
    await c1.ended
    await newObject(b.app, sid, { initialProperties: { core: { tags: ['q'] } } })
    await c2.until((f) => changes(f).length === 1) // the remaining member still gets frames
    c2.destroy()
    await c2.ended
    const deadline = Date.now() + 5000
    while (b.app.sse.size > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20))
    expect(listeners()).toBe(idle)
    const apply = vi.spyOn(LiveWindow.prototype, 'apply')
    try {
      await newObject(b.app, sid, { initialProperties: { core: { tags: ['q'] } } })
      await new Promise((r) => setTimeout(r, 50))
      expect(apply).not.toHaveBeenCalled()
    } finally {
      apply.mockRestore()
    }
  })

  it('a member that stops reading overflows alone; the others get every frame', async () => {
    const sid = await newSpace(b.app, 'slow')
    const url = `${base}/v1/spaces/${sid}/objects/query/subscribe`
    const target = await newObject(b.app, sid, { initialProperties: { core: { name: 'big', tags: ['o'] } } })
    const body = { filter: { 'core.tags': 'o' }, limit: 5, mailboxCapacity: 16 }
    const slow = await openSse(url, body)
    const fast = await openSse(url, body)
    try {
      await slow.until((f) => f.some((x) => x.event === 'snapshot'))
      await fast.until((f) => f.some((x) => x.event === 'snapshot'))
      slow.pause()
      // Each frame carries the ~200 KB document: the paused socket fills, then its mailbox.
      const big = 'x'.repeat(200_000)
      const writes = 120
      for (let i = 0; i < writes; i++) await setCore(sid, target, { description: `${i}${big}` })
      await fast.until((f) => changes(f).length === writes, 30_000)
      expect(fast.frames.some((f) => f.event === 'closed')).toBe(false)
      slow.resume()
      await slow.until((f) => f.some((x) => x.event === 'closed'), 30_000)
      expect(slow.frames.at(-1)).toEqual({ event: 'closed', data: { reason: 'overflow' } })
      expect(changes(slow.frames).length).toBeLessThan(writes)
      // The fast member's stream is still open and still served.
      await setCore(sid, target, { description: 'small' })
      await fast.until((f) => changes(f).length === writes + 1)
    } finally {
      slow.destroy()
      fast.destroy()
    }
  }, 60_000)
})
