/**
 * Issue 36, "Push through the hub": `svc hub --push-config FILE` runs the push node in the hub's
 * process, on the hub's own peer id and addresses, so a small team runs one service. A client
 * subscribes and sends over `/svc/push/1.0.0` to the hub's address, and the (fake) ntfy server
 * receives the sealed notification; the hub still answers head sync and its operator endpoint.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { createSvcNode, type SvcLibp2p } from '../../node/p2p/libp2p-node.ts'
import { PushNodeClient } from '../../node/push/client.ts'
import { identityOf } from '../../sync/crypto/keys.ts'
import { HubFleet } from '../e2e/hub-process.ts'
import { keyFor } from '../helpers.ts'
import { fakeNtfy, type FakeHttp } from '../push/fakes.ts'
import { sendBytes, spaceKeyFor, subscribeBytes } from '../push/node-fixture.ts'

const hubs = new HubFleet()
let ntfy: FakeHttp | undefined
let client: SvcLibp2p | undefined
const dir = mkdtempSync(join(tmpdir(), 'svc-hub-push-'))
afterAll(async () => {
  await client?.stop()
  hubs.close()
  await ntfy?.close()
  rmSync(dir, { recursive: true, force: true })
})

describe('a hub that runs the push node too', () => {
  it('takes subscriptions and sends on its own peer id and delivers them', async () => {
    ntfy = await fakeNtfy()
    const cfg = join(dir, 'push.json')
    writeFileSync(cfg, JSON.stringify({ healthPort: 0, store: `sqlite:${join(dir, 'push.db')}`, providers: { ntfy: { allowHttp: true, allowedOrigins: [ntfy.url] } } }))
    const hub = await hubs.start(['--push-config', cfg])
    const summary = JSON.parse(hub.proc.stdout().split('\n')[0]) as { push: string | null }
    expect(summary.push).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/health$/)

    client = await createSvcNode({ deviceKey: keyFor(77), listen: ['/ip4/127.0.0.1/tcp/0'], mdns: false })
    const push = new PushNodeClient(client, { peerId: hub.peerId, addrs: [hub.addr] })
    const k = spaceKeyFor(3)
    expect(await push.request(await subscribeBytes(k, 'ntfy', `${ntfy.url}/team`, ['chats']))).toEqual({ ok: true, validTopics: 1 })
    expect(await push.request(await sendBytes(k, ['chats']))).toEqual({ ok: true, validTopics: 1 })
    const got = await ntfy.waitFor(1)
    expect(JSON.parse(got[0].body).spaceKey).toBe(identityOf(k.publicKey))
    const health = await (await fetch(`${hub.operator}/health`)).json()
    expect(health).toMatchObject({ ok: true, peerId: hub.peerId })
    hub.proc.proc.kill('SIGTERM')
    expect(await hub.proc.exited).toBe(0)
  }, 120_000)
})
