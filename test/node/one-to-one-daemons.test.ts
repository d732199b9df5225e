import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { DaemonHost } from '../../node/daemon/daemon-host.ts'
import { AccountLifecycle } from '../../node/daemon/account-lifecycle.ts'
import { systemEnv } from '../../sync/core/env.ts'
import { buildApp } from '../../server/app.ts'
import { stopGracefully } from '../../server/lifecycle.ts'
import { pairSpaceId } from '../../sync/space/one-to-one.ts'
import { call, ok } from '../routes/helpers.ts'

/**
 * One-to-one between real daemons of three accounts: P2P on loopback (no mDNS), connected by
 * `POST /v1/peers`, driven through app.inject. The receiving side learns of a one-to-one only
 * through the wire's offer (a sync round for a space it does not hold).
 */
async function daemon() {
  const root = mkdtempSync(join(tmpdir(), 'svc-1to1-'))
  const engine = new DaemonHost({ dataRoot: root, noMdns: true, p2pListen: ['/ip4/127.0.0.1/tcp/0'], redial: { baseMs: 40, maxMs: 200 } })
  const session = new AccountLifecycle({ dataRoot: root, mode: 'standalone', engine, env: systemEnv })
  const app = buildApp({ session, engine })
  const res = await app.inject({ method: 'POST', url: '/v1/auth', payload: {} })
  expect(res.statusCode).toBe(201)
  const accountId = res.json<{ accountId: string }>().accountId
  return {
    app,
    engine,
    accountId,
    address: () =>
      engine
        .p2p()!
        .snapshot()
        .listen.find((m) => m.startsWith('/ip4/127.0.0.1/'))!,
    async close() {
      await stopGracefully(app, 1000)
      rmSync(root, { recursive: true, force: true })
    },
  }
}
type Daemon = Awaited<ReturnType<typeof daemon>>

async function eventually<T>(read: () => Promise<T>, pred: (v: T) => boolean, ms = 20_000): Promise<T> {
  const end = Date.now() + ms
  for (;;) {
    const v = await read()
    if (pred(v)) return v
    if (Date.now() > end) throw new Error(`timed out; last: ${JSON.stringify(v).slice(0, 500)}`)
    await new Promise((r) => setTimeout(r, 100))
  }
}

const statusOf = (d: Daemon, id: string) => async () => {
  const res = await call(d.app, 'GET', `/v1/spaces/${id}`)
  return res.statusCode === 200 ? res.json<{ status: string }>().status : `http ${res.statusCode}`
}

let a: Daemon
let b: Daemon
let c: Daemon
beforeAll(async () => {
  ;[a, b, c] = await Promise.all([daemon(), daemon(), daemon()])
  for (const d of [b, c]) {
    const listen = a.address()
    const multiaddr = listen.includes('/p2p/') ? listen : `${listen}/p2p/${a.engine.p2p()!.transport.peerId}`
    await ok(call(d.app, 'POST', '/v1/peers', { multiaddr }), 201)
  }
}, 60_000)
afterAll(async () => {
  await Promise.all([a?.close(), b?.close(), c?.close()])
})

describe('one-to-one between daemons', () => {
  it('both directions at once: one space id on both sides, both active, writes flow both ways', async () => {
    const [ia, ib] = await Promise.all([
      ok(call(a.app, 'POST', '/v1/spaces/one-to-one', { otherIdentity: b.accountId }), 201),
      ok(call(b.app, 'POST', '/v1/spaces/one-to-one', { otherIdentity: a.accountId }), 201),
    ])
    expect(ia.id).toBe(ib.id)
    expect(ia.id).toBe(pairSpaceId(a.accountId, b.accountId))
    const obj = (await ok(call(a.app, 'POST', `/v1/spaces/${ia.id}/objects`, { initialProperties: { core: { name: 'hi from a' } } }), 201)).objectId
    const read = async () => (await call(b.app, 'POST', `/v1/spaces/${ia.id}/objects/query`, { filter: { id: obj } })).json<{ records?: Array<{ core: { name: string } }> }>()
    const got = await eventually(read, (r) => (r.records?.length ?? 0) > 0)
    expect(got.records![0].core.name).toBe('hi from a')
    expect(await statusOf(a, ia.id)()).toBe('active')
    expect(await statusOf(b, ia.id)()).toBe('active')
  }, 60_000)

  it('offered over the wire: pending, declined (sticky), un-declined by a later start, accepted', async () => {
    const info = await ok(call(a.app, 'POST', '/v1/spaces/one-to-one', { otherIdentity: c.accountId }), 201)
    // No forced round: a's scheduler runs one about the new space, c does not hold it, so it is offered.
    await eventually(statusOf(c, info.id), (s) => s === 'one_to_one_pending', 10_000)
    await ok(call(c.app, 'POST', `/v1/spaces/${info.id}/one-to-one/decline`), 204)
    expect(await statusOf(c, info.id)()).toBe('deleted')
    // Rounds keep running (a's writes still reach c's dormant copy); the row stays declined.
    await ok(call(a.app, 'POST', `/v1/spaces/${info.id}/objects`, { initialProperties: { core: { name: 'still' } } }), 201)
    await ok(call(a.app, 'POST', `/v1/spaces/${info.id}/sync`), 204)
    expect(await statusOf(c, info.id)()).toBe('deleted')
    // A later start by a.
    await ok(call(a.app, 'POST', '/v1/spaces/one-to-one', { otherIdentity: c.accountId }), 201)
    await eventually(statusOf(c, info.id), (s) => s === 'one_to_one_pending', 10_000)
    expect(await ok(call(c.app, 'POST', `/v1/spaces/${info.id}/one-to-one/accept`), 200)).toMatchObject({ id: info.id, status: 'active', ownRole: 'writer' })
  }, 60_000)
})
