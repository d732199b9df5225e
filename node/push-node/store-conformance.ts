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

    it('setTopics replaces a token\'s topics under one space key only', async () => {
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

    if (second) {
      it('a second process on the same database serves what the first stored', async () => {
        const s1 = await make(open)
        const s2 = await make(second)
        await s1.setTopics(K1, A, ['chats'])
        expect(await s2.targetsFor(K1, ['chats'])).toEqual([A])
        await s2.removeToken(A)
        expect(await s1.targetsFor(K1, ['chats'])).toEqual([])
      })
    }
  })
}
