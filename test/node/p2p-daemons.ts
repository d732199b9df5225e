import { expect } from 'vitest'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { DaemonHost } from '../../node/daemon/daemon-host.ts'
import { AccountLifecycle } from '../../node/daemon/account-lifecycle.ts'
import { systemEnv } from '../../sync/core/env.ts'
import type { SchedulerOptions } from '../../sync/protocol/sync-scheduler.ts'
import { buildApp } from '../../server/app.ts'
import { stopGracefully } from '../../server/lifecycle.ts'
import { call, ok } from '../routes/helpers.ts'

/**
 * Daemons of different accounts with real libp2p on loopback (no mDNS), fast redials and
 * rounds, booted through the HTTP API: the fixture of the sharing tests over the wire.
 * `scheduler` replaces the fast rounds (a test that must not be rescued by a periodic round).
 */
export async function bootP2P(o: { scheduler?: SchedulerOptions } = {}) {
  const root = mkdtempSync(join(tmpdir(), 'svc-share-'))
  const engine = new DaemonHost({
    dataRoot: root,
    noMdns: true,
    p2pListen: ['/ip4/127.0.0.1/tcp/0'],
    redial: { baseMs: 40, maxMs: 200 },
    scheduler: o.scheduler ?? { periodMs: 300, backoffBaseMs: 50, backoffMaxMs: 300 },
  })
  const session = new AccountLifecycle({ dataRoot: root, mode: 'standalone', engine, env: systemEnv })
  const app = buildApp({ session, engine })
  const res = await app.inject({ method: 'POST', url: '/v1/auth', payload: {} })
  expect(res.statusCode).toBe(201)
  const accountId = res.json<{ accountId: string }>().accountId
  return {
    app,
    engine,
    accountId,
    multiaddr: () =>
      `/ip4/127.0.0.1/tcp/${engine
        .p2p()!
        .snapshot()
        .listen.map((a: string) => /\/tcp\/(\d+)/.exec(a)?.[1])
        .find(Boolean)}/p2p/${engine.p2p()!.transport.peerId}`,
    async close() {
      await stopGracefully(app, 1000)
      rmSync(root, { recursive: true, force: true })
    },
  }
}
export type P2PDaemon = Awaited<ReturnType<typeof bootP2P>>

export async function until<T>(what: string, fn: () => Promise<T | undefined | false>, ms = 30_000): Promise<T> {
  const end = Date.now() + ms
  for (;;) {
    const v = await fn().catch(() => undefined)
    if (v) return v
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`)
    await new Promise((r) => setTimeout(r, 100))
  }
}

/** Two daemons, `b` connected to `a` by address (`POST /v1/peers`). */
export async function connectedPair(o: { scheduler?: SchedulerOptions } = {}): Promise<[P2PDaemon, P2PDaemon]> {
  const [a, b] = await Promise.all([bootP2P(o), bootP2P(o)])
  await ok(call(b.app, 'POST', '/v1/peers', { multiaddr: a.multiaddr() }), 201)
  await until('b connected to a', async () => (await ok(call(b.app, 'GET', '/v1/peers'))).peers.some((p: { connected: boolean }) => p.connected))
  return [a, b]
}
