/**
 * Conformance suite every SubscriptionStore must pass (SQLite's and PostgreSQL's). Test-only: it
 * imports vitest. Usage: `runSubscriptionStoreConformance('sqlite', () => open(), () => openSecond?)`.
 * `second`, when given, opens another store on the same database (another push-node process):
 * what one writes, the other serves.
 */
import { afterEach, describe, expect, it } from 'vitest'
import type { PushTarget, SubscriptionStore } from './store.ts'

const K1 = '8Lfjp9NzrnB4cL1d7i3m6fKcAXydk3mSHoQzJ5WFm1dN'
const K2 = '6WmcPqkd9cvvSMc2DqF3wnNRPErAU3uZ1ZyAd5Dm7Lk2'
const A: PushTarget = { platform: 'android', token: 'tok-a' }
const B: PushTarget = { platform: 'ios', token: 'tok-b' }
const N: PushTarget = { platform: 'ntfy', token: 'http://127.0.0.1:1/topic' }

export function runSubscriptionStoreConformance(name: string, open: () => Promise<SubscriptionStore>, second?: () => Promise<SubscriptionStore>) {
  describe(`subscription store conformance: ${name}`, () => {
    const opened: SubscriptionStore[] = []
    const make = async (f: () => Promise<SubscriptionStore>) => {
      const s = await f()
      opened.push(s)
      return s
    }
    afterEach(async () => {
      for (const s of opened.splice(0)) await s.close()
    })

    it("setTopics replaces a token's topics under one space key only", async () => {
      const s = await make(open)
      await s.setTopics(K1, A, ['chats', 'x'])
      await s.setTopics(K2, A, ['chats'])
      await s.setTopics(K1, A, ['y', 'chats'])
      expect(await s.topicsOf(K1, A)).toEqual(['chats', 'y'])
      expect(await s.topicsOf(K2, A)).toEqual(['chats'])
      await s.setTopics(K1, A, [])
      expect(await s.topicsOf(K1, A)).toEqual([])
      expect(await s.topicsOf(K2, A)).toEqual(['chats'])
    })

    it('targetsFor answers distinct targets of any listed topic, within the space key only', async () => {
      const s = await make(open)
      await s.setTopics(K1, A, ['chats', 'id1'])
      await s.setTopics(K1, B, ['id1'])
      await s.setTopics(K1, N, ['other'])
      await s.setTopics(K2, N, ['chats'])
      expect(await s.targetsFor(K1, ['chats', 'id1'])).toEqual([A, B])
      expect(await s.targetsFor(K1, ['nothing'])).toEqual([])
      expect(await s.targetsFor(K1, [])).toEqual([])
      expect(await s.targetsFor(K2, ['chats'])).toEqual([N])
      expect(await s.tokenCount(K1)).toBe(3)
      expect(await s.tokenCount(K2)).toBe(1)
    })

    it('removeToken drops a token under every space key and leaves the others', async () => {
      const s = await make(open)
      await s.setTopics(K1, A, ['chats', 'a'])
      await s.setTopics(K2, A, ['chats'])
      await s.setTopics(K1, B, ['chats'])
      expect(await s.removeToken(A)).toBe(3)
      expect(await s.targetsFor(K1, ['chats'])).toEqual([B])
      expect(await s.targetsFor(K2, ['chats'])).toEqual([])
      expect(await s.totals()).toEqual({ subscriptions: 1, spaceKeys: 1 })
      expect(await s.removeToken(A)).toBe(0)
    })

    it('duplicate topics in one call are stored once; odd bytes in tokens survive', async () => {
      const s = await make(open)
      const odd: PushTarget = { platform: 'webpush', token: '{"endpoint":"http://x/\'; DROP TABLE push_subscriptions; --"}' }
      await s.setTopics(K1, odd, ['chats', 'chats'])
      expect(await s.topicsOf(K1, odd)).toEqual(['chats'])
      expect(await s.targetsFor(K1, ['chats'])).toEqual([odd])
    })

    it('a registration records the peer that set it last; usage sums topics per peer and in all', async () => {
      const s = await make(open)
      await s.setTopics(K1, A, ['chats', 'x', 'y'], { peer: 'p1', at: 1000 })
      await s.setTopics(K2, A, ['chats'], { peer: 'p1', at: 1000 })
      await s.setTopics(K1, B, ['chats', 'x'], { peer: 'p2', at: 2000 })
      expect(await s.registrationOf(K1, A)).toEqual({ peer: 'p1', topics: 3, updatedAt: 1000 })
      expect(await s.registrationOf(K2, B)).toBeUndefined()
      expect(await s.usage('p1')).toEqual({ peer: 4, total: 6 })
      expect(await s.usage('nobody')).toEqual({ peer: 0, total: 6 })
      // Another peer setting the same registration takes all of it over.
      await s.setTopics(K1, A, ['chats'], { peer: 'p2', at: 3000 })
      expect(await s.usage('p2')).toEqual({ peer: 3, total: 4 })
      expect(await s.registrationOf(K1, A)).toEqual({ peer: 'p2', topics: 1, updatedAt: 3000 })
    })

    it('evictIdle drops registrations last set before the cut, topics and all', async () => {
      const s = await make(open)
      await s.setTopics(K1, A, ['chats', 'x'], { at: 1000 })
      await s.setTopics(K1, B, ['chats'], { at: 5000 })
      await s.setTopics(K2, A, ['chats'], { at: 2000 })
      // Renewed: the same topics set again later.
      await s.setTopics(K2, A, ['chats'], { at: 6000 })
      expect(await s.evictIdle(5000)).toBe(1)
      expect(await s.targetsFor(K1, ['chats', 'x'])).toEqual([B])
      expect(await s.targetsFor(K2, ['chats'])).toEqual([A])
      expect(await s.totals()).toEqual({ subscriptions: 2, spaceKeys: 2 })
    })

    it('the queue: enqueue, claim (leased, attempts counted), retry later, finish; bounded by maxDepth', async () => {
      const s = await make(open)
      expect(await s.nextDueAt()).toBeUndefined()
      expect(await s.enqueue('{"m":1}', [A, B], 100, 10)).toEqual({ queued: 2, claimed: [] })
      expect(await s.enqueue('{"m":2}', [N], 200, 10)).toEqual({ queued: 1, claimed: [] })
      // Past the bound nothing of the send is queued.
      expect(await s.enqueue('{"m":3}', Array(8).fill(A), 300, 10)).toEqual({ queued: 0, claimed: [] })
      expect(await s.queueStats(150)).toEqual({ depth: 3, due: 2 })
      expect(await s.nextDueAt()).toBe(100)
      const first = await s.claimDue(150, 10, 10_000)
      expect(first.map((d) => [d.target, d.message, d.attempts])).toEqual([
        [A, '{"m":1}', 1],
        [B, '{"m":1}', 1],
      ])
      // Leased: not due again until the lease ends.
      expect(await s.claimDue(5_000, 10, 20_000)).toEqual([expect.objectContaining({ target: N, message: '{"m":2}', attempts: 1 })])
      expect(await s.claimDue(9_999, 10, 20_000)).toEqual([])
      await s.finish(first[0].id)
      await s.retryAt(first[1].id, 12_000)
      expect(await s.queueStats(12_000)).toEqual({ depth: 2, due: 1 })
      const again = await s.claimDue(12_000, 10, 30_000)
      expect(again.map((d) => [d.id, d.target, d.message, d.attempts])).toEqual([[first[1].id, B, '{"m":1}', 2]])
      await s.finish(again[0].id)
      await s.finish(again[0].id)
      expect(await s.queueStats(50_000)).toEqual({ depth: 1, due: 1 })
    })

    it('enqueue hands back the first deliveries already claimed; the rest wait due', async () => {
      const s = await make(open)
      const { queued, claimed } = await s.enqueue('{"m":1}', [A, B, N], 100, 10, { limits: { android: 1, ios: 5 }, leaseUntil: 5_000 })
      expect(queued).toBe(3)
      expect(claimed.map((d) => [d.target, d.message, d.attempts])).toEqual([
        [A, '{"m":1}', 1],
        [B, '{"m":1}', 1],
      ])
      expect(await s.queueStats(100)).toEqual({ depth: 3, due: 1 })
      // By platform: only that platform's due deliveries.
      expect(await s.claimDue(100, 10, 5_000, 'android')).toEqual([])
      expect((await s.claimDue(100, 10, 5_000, 'ntfy')).map((d) => d.target)).toEqual([N])
      // The ids are the rows': finishing and retrying them works as after claimDue.
      await s.finish(claimed[0].id)
      await s.retryAt(claimed[1].id, 200)
      expect((await s.claimDue(200, 10, 6_000)).map((d) => [d.id, d.target, d.attempts])).toEqual([[claimed[1].id, B, 2]])
      expect((await s.queueStats(0)).depth).toBe(2)
    })

    it("removeToken drops the token's queued deliveries too", async () => {
      const s = await make(open)
      await s.setTopics(K1, A, ['chats'])
      await s.enqueue('{"m":1}', [A, B], 0, 100)
      await s.enqueue('{"m":2}', [A], 0, 100)
      await s.removeToken(A)
      const left = await s.claimDue(1, 10, 100)
      expect(left.map((d) => [d.target, d.message])).toEqual([[B, '{"m":1}']])
    })

    if (second) {
      it('a second process on the same database serves what the first stored', async () => {
        const s1 = await make(open)
        const s2 = await make(second)
        await s1.setTopics(K1, A, ['chats'])
        expect(await s2.targetsFor(K1, ['chats'])).toEqual([A])
        await s2.removeToken(A)
        expect(await s1.targetsFor(K1, ['chats'])).toEqual([])
      })

      it('two processes share one queue: a delivery is claimed by one only, and outlives the process that queued it', async () => {
        const s1 = await make(open)
        const s2 = await make(second)
        await s1.enqueue('{"m":1}', [A, B, N], 0, 100)
        const [c1, c2] = await Promise.all([s1.claimDue(1, 2, 1_000), s2.claimDue(1, 2, 1_000)])
        expect([...c1, ...c2].map((d) => d.target.token).sort()).toEqual([A.token, B.token, N.token].sort())
        for (const d of c2) await s2.finish(d.id)
        // The first process goes away mid-delivery: its lease ends and the other takes them.
        await s1.close()
        opened.splice(opened.indexOf(s1), 1)
        const retaken = await s2.claimDue(1_000, 10, 2_000)
        expect(retaken.map((d) => d.target.token).sort()).toEqual(c1.map((d) => d.target.token).sort())
        expect(retaken.every((d) => d.attempts === 2)).toBe(true)
      })
    }
  })
}
