import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { pushModule } from '../../sync/modules/push/module.ts'
import { wireLink } from '../../node/push/link.ts'
import { nobleProvider } from '../../sync/crypto/provider.ts'
import { expectError } from '../server/helpers.ts'
import { bootApp, call, newSpace, ok, type Booted } from './helpers.ts'
import { coreWith } from '../push/node-fixture.ts'
import { PushReceiver } from '../../sync/modules/push/receiver.ts'
import { sealEnvelope } from '../../sync/modules/push/payload.ts'
import { fromBase64 } from '../../sync/core/base64.ts'
import { systemEnv } from '../../sync/core/env.ts'

/** chat.md "Endpoints / Push" over a real app: 409 push.disabled until a node is linked, then the token and subscription routes. */
let b: Booted
let spaceId: string
beforeAll(async () => {
  b = await bootApp()
  spaceId = await newSpace(b.app, 'Pushy')
}, 30_000)
afterAll(async () => b?.close())
afterEach(() => b.engine.account().services.of(pushModule).detach())

const push = () => b.engine.account().services.of(pushModule)

describe('push routes, no push node configured', () => {
  it('every route answers 409 push.disabled', async () => {
    expectError(await call(b.app, 'POST', '/v1/push/token', { platform: 'ios', token: 'ab' }), 409, 'push.disabled')
    expectError(await call(b.app, 'GET', '/v1/push/token'), 409, 'push.disabled')
    expectError(await call(b.app, 'DELETE', '/v1/push/token'), 409, 'push.disabled')
    expectError(await call(b.app, 'GET', '/v1/push/subscriptions'), 409, 'push.disabled')
  })
})

describe('the key mirror', () => {
  it('the space row carries push {spaceKey, encKey, encKeyId}; the receiver opens payloads with it', async () => {
    const row = await ok<{ push: { spaceKey: string; encKey: string; encKeyId: string } }>(call(b.app, 'GET', `/v1/spaces/${spaceId}`))
    expect(row.push.encKeyId).toMatch(/^[0-9a-f]{64}$/)
    const list = await ok<{ spaces: Array<{ id: string; push?: unknown }> } | Array<{ id: string; push?: unknown }>>(call(b.app, 'GET', '/v1/spaces'))
    const rows = Array.isArray(list) ? list : list.spaces
    expect(rows.find((r) => r.id === spaceId)?.push).toEqual(row.push)
    const receiver = new PushReceiver()
    receiver.remember(spaceId, row.push)
    const env = sealEnvelope(
      systemEnv,
      { spaceKey: 'k', encKey: fromBase64(row.push.encKey), encKeyId: row.push.encKeyId },
      { spaceId, spaceUxType: 'chat', spaceType: 'svc.space', senderId: b.accountId, type: 1 },
      { silent: false },
    )
    expect(receiver.receive(env)).toMatchObject({ kind: 'message', spaceId })
  })
})

describe('push routes with a push node', () => {
  it('POST token registers (204), GET shows it, subscriptions list what the node took, DELETE forgets it', async () => {
    const { core, store } = coreWith()
    try {
      push().attach(wireLink((bytes) => core.handle('daemon', bytes), nobleProvider))
      expect(await ok(call(b.app, 'GET', '/v1/push/token'))).toEqual({ registered: false })
      await ok(call(b.app, 'POST', '/v1/push/token', { platform: 'ntfy', token: 'https://ntfy.example.org/up/1' }), 204)
      expect(await ok(call(b.app, 'GET', '/v1/push/token'))).toEqual({ registered: true, platform: 'ntfy' })
      await push().reconcile()
      const subs = (await ok<{ subscriptions: Array<{ spaceKey: string; topic: string }> }>(call(b.app, 'GET', '/v1/push/subscriptions'))).subscriptions
      // Space default notifyMode `all`: bulk topics for the space created above.
      expect(subs.map((s) => s.topic).sort()).toEqual(['chats', b.accountId].sort())
      expect(subs[0].spaceKey).not.toBe(spaceId)
      expect(await store.targetsFor(subs[0].spaceKey, ['chats'])).toEqual([{ platform: 'ntfy', token: 'https://ntfy.example.org/up/1' }])
      await ok(call(b.app, 'DELETE', '/v1/push/token'), 204)
      expect(await ok(call(b.app, 'GET', '/v1/push/token'))).toEqual({ registered: false })
      expect(await ok(call(b.app, 'GET', '/v1/push/subscriptions'))).toEqual({ subscriptions: [] })
    } finally {
      await store.close()
    }
  })

  it('bad bodies get the error envelope', async () => {
    push().attach(wireLink(async () => ({ ok: true }), nobleProvider))
    expectError(await call(b.app, 'POST', '/v1/push/token', { platform: 'symbian', token: 'x' }), 400, 'request.invalid_field')
    expectError(await call(b.app, 'POST', '/v1/push/token', { platform: 'ios' }), 400, 'request.missing_field')
    expectError(await call(b.app, 'POST', '/v1/push/token', { platform: 'ios', token: 'x', extra: 1 }), 400, 'request.unknown_field')
  })

  it('the delete wins locally even when the node is unreachable', async () => {
    push().attach(wireLink(async () => Promise.reject(new Error('down')), nobleProvider))
    await ok(call(b.app, 'POST', '/v1/push/token', { platform: 'ios', token: 'ab'.repeat(32) }), 204)
    await ok(call(b.app, 'DELETE', '/v1/push/token'), 204)
    expect(await ok(call(b.app, 'GET', '/v1/push/token'))).toEqual({ registered: false })
  })
})
