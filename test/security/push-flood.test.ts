import { afterEach, describe, expect, it } from 'vitest'
import { existsSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { randomBytes } from 'node:crypto'
import { identityOf, keyPairFromSeed } from '../../sync/crypto/keys.ts'
import { PUSH_WIRE_LIMITS, type PushReply } from '../../sync/protocol/push-wire.ts'
import { PushNodeServer } from '../../node/push-node/server.ts'
import { coreWith, subscribeBytes } from '../push/node-fixture.ts'

/**
 * Issue 33 item 4, the flood: 10 peers x 30 subscribes, each under a fresh self-made space key,
 * 256 topics and a 4 KB token, grew the default (in-memory) store to 76,803 subscriptions and
 * the node by 750 MB. Bounded now: per-peer and global caps, idle eviction, a file by default.
 * (The node's RSS under that flood is the push bench's `flood` figure.)
 */
const cleanup: Array<() => unknown> = []
afterEach(async () => {
  for (const c of cleanup.splice(0).reverse()) await c()
})

const TOPICS = Array.from({ length: PUSH_WIRE_LIMITS.maxTopicsPerRequest }, (_, i) => `chats/${i.toString(16).padStart(64, '0')}`)
const bigToken = (n: number) => {
  const head = `https://ntfy.example.org/${n}/`
  return head + 'x'.repeat(PUSH_WIRE_LIMITS.maxTokenBytes - head.length)
}

describe('flood: strangers registering under self-made space keys', () => {
  it('per-peer and global caps bound what 10 peers x 30 requests of 256 topics store', async () => {
    const perPeer = 2_000
    const global = 6_000
    const { core, store } = coreWith({ bounds: { subscriptionsPerPeer: perPeer, subscriptions: global } })
    cleanup.push(
      () => store.close(),
      () => core.close(),
    )
    const byPeer = new Map<string, PushReply[]>()
    let n = 0
    for (let p = 0; p < 10; p++) {
      const replies: PushReply[] = []
      for (let r = 0; r < 30; r++) replies.push(await core.handle(`peer-${p}`, await subscribeBytes(keyPairFromSeed(randomBytes(32)), 'ntfy', bigToken(n++), TOPICS)))
      byPeer.set(`peer-${p}`, replies)
    }
    const totals = await store.totals()
    expect(totals.subscriptions).toBeLessThanOrEqual(global)
    for (const [peer, replies] of byPeer) {
      const taken = replies.filter((r) => r.ok).length
      expect([peer, taken * TOPICS.length <= perPeer]).toEqual([peer, true])
    }
    // The first peer filled its own share; the later ones met the node's cap.
    expect(
      byPeer
        .get('peer-0')!
        .filter((r) => !r.ok)
        .map((r) => !r.ok && r.code),
    ).toEqual(Array(30 - Math.floor(perPeer / TOPICS.length)).fill('too_many_topics'))
    expect(byPeer.get('peer-9')!.every((r) => !r.ok && r.code === 'unavailable')).toBe(true)
  })

  it('a registration idle past the TTL is evicted; one renewed in time stays', async () => {
    let now = 1_700_000_000_000
    const day = 24 * 3600_000
    const { core, store } = coreWith({ now: () => now, bounds: { idleTtlMs: 7 * day } })
    cleanup.push(
      () => store.close(),
      () => core.close(),
    )
    const [a, b] = [keyPairFromSeed(randomBytes(32)), keyPairFromSeed(randomBytes(32))]
    await core.handle('p', await subscribeBytes(a, 'ntfy', 'https://ntfy.example.org/a', ['chats'], now))
    await core.handle('p', await subscribeBytes(b, 'ntfy', 'https://ntfy.example.org/b', ['chats'], now))
    now += 5 * day
    // The daemon's reconcile renews its registrations with the same topics.
    await core.handle('p', await subscribeBytes(b, 'ntfy', 'https://ntfy.example.org/b', ['chats'], now))
    now += 3 * day
    expect(await core.evictIdle()).toBe(1)
    expect(await store.targetsFor(identityOf(a.publicKey), ['chats'])).toEqual([])
    expect(await store.targetsFor(identityOf(b.publicKey), ['chats'])).toEqual([{ platform: 'ntfy', token: 'https://ntfy.example.org/b' }])
  })

  it('the node keeps its subscriptions in a file by default, never in memory', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'svc-push-flood-'))
    cleanup.push(() => rmSync(dir, { recursive: true, force: true }))
    const node = await PushNodeServer.start({ keySeed: randomBytes(32).toString('hex'), listen: ['/ip4/127.0.0.1/tcp/0'], dataDir: dir, providers: {} })
    cleanup.push(() => node.close())
    expect(existsSync(join(dir, 'push-node.db'))).toBe(true)
    const health = (await (await fetch(node.healthUrl)).json()) as { store: string }
    expect(health.store).toBe('sqlite')
  })
})
