import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { pushModule } from '../../sync/modules/push/module.ts'
import { pushKeysOf } from '../../sync/modules/push/keys.ts'
import { chatMentionTopic, chatTopic } from '../../sync/modules/push/topics.ts'
import { wireLink } from '../../node/push/link.ts'
import { nobleProvider } from '../../sync/crypto/provider.ts'
import { bootApp, call, newSpace, ok, type Booted } from '../routes/helpers.ts'
import { coreWith } from '../push/node-fixture.ts'

/**
 * Issue 33 item 6: with the space's `notifyMode` at `none`, a chat's own `notifyMode: all` left
 * `GET /v1/push/subscriptions` empty. chat.md "Push notifications": once any chat overrides, the
 * daemon holds per-chat topics, right after a local write to either knob.
 */
let b: Booted
let spaceId: string
let chatId: string
let spaceKey: string
const node = coreWith()
beforeAll(async () => {
  b = await bootApp()
  spaceId = await newSpace(b.app, 'Override')
  chatId = (await ok(call(b.app, 'POST', '/v1/catalog/general-chat/setup', { spaceId }))).bundles[0].bundle.rootId
  spaceKey = pushKeysOf(b.engine.account().space(spaceId).replica)!.spaceKey
  b.engine
    .account()
    .services.of(pushModule)
    .attach(wireLink((bytes) => node.core.handle('daemon', bytes), nobleProvider))
  await ok(call(b.app, 'POST', '/v1/push/token', { platform: 'ntfy', token: 'https://ntfy.example.org/up/phone' }), 204)
}, 30_000)
afterAll(async () => {
  b.engine.account().services.of(pushModule).detach()
  await b?.close()
  await node.core.close()
  await node.store.close()
})

/** This space's topics as the route lists them, once they equal `want` (or the last seen after 3 s). */
async function topicsBecome(want: string[]): Promise<string[]> {
  const until = Date.now() + 3_000
  for (;;) {
    const subs = (await ok<{ subscriptions: Array<{ spaceKey: string; topic: string }> }>(call(b.app, 'GET', '/v1/push/subscriptions'))).subscriptions
    const got = subs
      .filter((s) => s.spaceKey === spaceKey)
      .map((s) => s.topic)
      .sort()
    if (JSON.stringify(got) === JSON.stringify([...want].sort()) || Date.now() > until) return got
    await new Promise((r) => setTimeout(r, 25))
  }
}

describe("a per-chat notifyMode overrides the space's", () => {
  it("space none, chat all: the chat's topics are held right after the write, and follow each later write", async () => {
    const S = `/v1/spaces/${spaceId}`
    await ok(call(b.app, 'PATCH', `${S}/settings`, { set: { notifyMode: 'none' } }), 204)
    expect(await topicsBecome([])).toEqual([])
    await ok(call(b.app, 'POST', `${S}/properties/${chatId}/set/chat`, { notifyMode: 'all' }))
    const all = [chatTopic(chatId), chatMentionTopic(chatId, b.accountId)].sort()
    expect(await topicsBecome(all)).toEqual(all)
    // The node holds them too, for this device's token.
    expect(await node.store.targetsFor(spaceKey, [chatTopic(chatId)])).toEqual([{ platform: 'ntfy', token: 'https://ntfy.example.org/up/phone' }])
    await ok(call(b.app, 'POST', `${S}/properties/${chatId}/set/chat`, { notifyMode: 'mentions' }))
    expect(await topicsBecome([chatMentionTopic(chatId, b.accountId)])).toEqual([chatMentionTopic(chatId, b.accountId)])
    // The other knob: the space at all, the chat still overriding with mentions.
    await ok(call(b.app, 'PATCH', `${S}/settings`, { set: { notifyMode: 'all' } }), 204)
    await new Promise((r) => setTimeout(r, 100))
    expect(await topicsBecome([chatMentionTopic(chatId, b.accountId)])).toEqual([chatMentionTopic(chatId, b.accountId)])
    // The override unset: bulk topics of the space's own mode again.
    await ok(call(b.app, 'POST', `${S}/properties/${chatId}/set/chat`, { notifyMode: null }))
    expect(await topicsBecome(['chats', b.accountId])).toEqual(['chats', b.accountId].sort())
  })
})
