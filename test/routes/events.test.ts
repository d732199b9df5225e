import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { eventsModule } from '../../sync/modules/events/module.ts'
import { ownerToken } from '../../sync/modules/events/namespace.ts'
import { bootApp, call, expectError, listen, newSpace, ok, openSse, type Booted, type SseClient } from './helpers.ts'

/** chat.md "Event bus": publish and subscribe over a real app, every filter rule and code. */
let b: Booted
let base: string
let spaceId: string
const open: SseClient[] = []

beforeAll(async () => {
  b = await bootApp()
  base = await listen(b.app)
  spaceId = await newSpace(b.app, 'Events')
}, 30_000)
afterAll(async () => {
  for (const c of open) c.destroy()
  await b?.close()
})

const publish = (body: unknown) => call(b.app, 'POST', '/v1/events', body)

/** Opens a subscription and waits for `ready`. */
async function subscribe(query = ''): Promise<SseClient> {
  const c = await openSse(`${base}/v1/events/subscribe${query ? `?${query}` : ''}`)
  open.push(c)
  await c.until((f) => f.some((x) => x.event === 'ready'))
  return c
}

const events = (c: SseClient) => c.frames.filter((f) => f.event === 'event').map((f) => f.data)

describe('POST /v1/events and GET /v1/events/subscribe', () => {
  it('a publish with nobody listening is still success: {subscribers: 0}', async () => {
    expect(await ok(publish({ type: 'ui.open_space', scope: 'device', data: { spaceId } }))).toEqual({ subscribers: 0 })
  })

  it('a catch-all subscriber gets ready, then each event with sender {identity, self} set by the server', async () => {
    const c = await subscribe()
    expect(c.frames[0]).toEqual({ event: 'ready', data: {} })
    expect(await ok(publish({ type: 'ui.open_object', scope: 'device', target: 'obj1', data: { spaceId, objectId: 'obj1' } }))).toEqual({ subscribers: 1 })
    await c.until((f) => f.some((x) => x.event === 'event'))
    expect(events(c)[0]).toEqual({ type: 'ui.open_object', scope: 'device', target: 'obj1', data: { spaceId, objectId: 'obj1' }, sender: { identity: b.accountId, self: true } })
    c.destroy()
  })

  it('filters AND across dimensions, OR within one; `.*` is a prefix; no spaceId means no space events', async () => {
    const byType = await subscribe('type=ui.*&type=process.done')
    const byTarget = await subscribe('type=ui.*&target=a&target=b')
    const byScope = await subscribe('scope=account')
    const bySpace = await subscribe(`spaceId=${spaceId}`)
    const all = await subscribe()
    await ok(publish({ type: 'ui.open_space', scope: 'device', target: 'a' }))
    await ok(publish({ type: 'ui.open_space', scope: 'device', target: 'c' }))
    await ok(publish({ type: 'process.done', scope: 'account', target: 'b' }))
    await ok(publish({ type: 'process.progress', scope: 'device' }))
    await ok(publish({ type: 'uix.other', scope: 'device' }))
    await ok(publish({ type: 'ui.open_object', scope: 'space', spaceId, target: 'b' }))
    // A last event every filter matches: once it arrived, everything before it was delivered or not.
    expect(await ok(publish({ type: 'ui.end', scope: 'account', target: 'a' }))).toEqual({ subscribers: 5 })
    for (const c of [byType, byTarget, byScope, bySpace, all]) await c.until((f) => f.some((x) => x.event === 'event' && x.data.type === 'ui.end'))
    const seen = (c: SseClient) =>
      events(c)
        .filter((e) => e.type !== 'ui.end')
        .map((e) => `${e.type}/${e.scope}/${e.target ?? ''}`)
    expect(seen(byType)).toEqual(['ui.open_space/device/a', 'ui.open_space/device/c', 'process.done/account/b'])
    expect(seen(byTarget)).toEqual(['ui.open_space/device/a'])
    expect(seen(byScope)).toEqual(['process.done/account/b'])
    // A catch-all with a spaceId covers device and account events too, and that space's events.
    expect(seen(bySpace)).toEqual([
      'ui.open_space/device/a',
      'ui.open_space/device/c',
      'process.done/account/b',
      'process.progress/device/',
      'uix.other/device/',
      'ui.open_object/space/b',
    ])
    expect(seen(all)).toEqual(['ui.open_space/device/a', 'ui.open_space/device/c', 'process.done/account/b', 'process.progress/device/', 'uix.other/device/'])
    expect(events(bySpace).find((e) => e.scope === 'space')).toMatchObject({ spaceId, sender: { identity: b.accountId, self: true } })
    for (const c of [byType, byTarget, byScope, bySpace, all]) c.destroy()
  })

  it('publish counts the local subscribers matched', async () => {
    const x = await subscribe('type=count.me')
    const y = await subscribe('type=count.*')
    await subscribe('type=other')
    expect(await ok(publish({ type: 'count.me', scope: 'device' }))).toEqual({ subscribers: 2 })
    x.destroy()
    y.destroy()
  })

  it('publish errors: missing, invalid, over the budget, too large, sender supplied', async () => {
    expect(expectError(await publish({ scope: 'device' }), 400, 'request.missing_field')).toMatchObject({ field: 'type' })
    expect(expectError(await publish({ type: '', scope: 'device' }), 400, 'request.missing_field')).toMatchObject({ field: 'type' })
    expect(expectError(await publish({ type: 'a.b' }), 400, 'request.missing_field')).toMatchObject({ field: 'scope' })
    expect(expectError(await publish({ type: 'a.b', scope: 'space' }), 400, 'request.missing_field')).toMatchObject({ field: 'spaceId' })
    for (const type of ['Upper', 'a..b', 'a.', '.a', 'a-b', 'a.*', 'x'.repeat(129)]) {
      expect(expectError(await publish({ type, scope: 'device' }), 400, 'request.invalid_field')).toMatchObject({ field: 'type' })
    }
    expect(expectError(await publish({ type: 'a', scope: 'planet' }), 400, 'request.invalid_field')).toMatchObject({ field: 'scope' })
    expect(expectError(await publish({ type: 'a', scope: 'device', spaceId }), 400, 'request.invalid_field')).toMatchObject({ field: 'spaceId' })
    expect(expectError(await publish({ type: 'a', scope: 'account', spaceId }), 400, 'request.invalid_field')).toMatchObject({ field: 'spaceId' })
    for (const target of ['', 'a b', 'x'.repeat(129), 'é']) {
      expect(expectError(await publish({ type: 'a', scope: 'device', target }), 400, 'request.invalid_field')).toMatchObject({ field: 'target' })
    }
    // Topic budget: 256 bytes or 16 segments for type plus target, on every scope.
    await ok(publish({ type: 'x'.repeat(127), scope: 'device', target: 'y'.repeat(128) }))
    expectError(await publish({ type: 'x'.repeat(128), scope: 'device', target: 'y'.repeat(128) }), 400, 'request.invalid_field')
    await ok(publish({ type: Array(16).fill('s').join('.'), scope: 'account' }))
    expectError(await publish({ type: Array(16).fill('s').join('.'), scope: 'account', target: 't' }), 400, 'request.invalid_field')
    expectError(await publish({ type: Array(17).fill('s').join('.'), scope: 'space', spaceId }), 400, 'request.invalid_field')
    // data: 64 KiB marshaled.
    await ok(publish({ type: 'big', scope: 'device', data: 'x'.repeat(64 * 1024 - 2) }))
    expect(expectError(await publish({ type: 'big', scope: 'device', data: 'x'.repeat(64 * 1024 - 1) }), 400, 'events.payload_too_large')).toMatchObject({ limit: 65536 })
    expectError(await publish({ type: 'big', scope: 'device', data: { s: 'é'.repeat(33 * 1024) } }), 400, 'events.payload_too_large')
    // sender is the server's to set.
    expect(expectError(await publish({ type: 'a', scope: 'device', sender: { identity: 'x', self: true } }), 400, 'request.unknown_field')).toMatchObject({ fields: ['sender'] })
    // scope space resolves the space.
    expectError(await publish({ type: 'a', scope: 'space', spaceId: 'nope' }), 404, 'space.not_found')
  })

  it('subscribe errors answer as JSON before the stream opens', async () => {
    const get = (q: string) => call(b.app, 'GET', `/v1/events/subscribe?${q}`)
    expect(expectError(await get('scope=space'), 400, 'request.missing_field')).toMatchObject({ field: 'spaceId' })
    expect(expectError(await get('scope=space&scope=device'), 400, 'request.missing_field')).toMatchObject({ field: 'spaceId' })
    expect(expectError(await get(`scope=device&spaceId=${spaceId}`), 400, 'request.invalid_field')).toMatchObject({ field: 'spaceId' })
    expect(expectError(await get('scope=planet'), 400, 'request.invalid_field')).toMatchObject({ field: 'scope' })
    expect(expectError(await get('type=UI'), 400, 'request.invalid_field')).toMatchObject({ field: 'type' })
    expect(expectError(await get('type=ui.*.x'), 400, 'request.invalid_field')).toMatchObject({ field: 'type' })
    expect(expectError(await get('target=a%20b'), 400, 'request.invalid_field')).toMatchObject({ field: 'target' })
    expectError(await get('sender=x'), 400, 'request.unknown_field')
    expectError(await get('spaceId=nope'), 404, 'space.not_found')
    // An explicit space subscription with its spaceId is fine.
    const c = await subscribe(`scope=space&spaceId=${spaceId}`)
    await ok(publish({ type: 'ui.open_space', scope: 'space', spaceId }))
    await c.until((f) => f.some((x) => x.event === 'event'))
    c.destroy()
  })

  it('100 interest patterns per space: identical filters share one, the 101st distinct is 409 events.too_many_patterns', async () => {
    const s = await newSpace(b.app, 'Budget')
    const bus = b.engine.account().services.of(eventsModule)
    const subs = []
    for (let i = 0; i < 99; i++) subs.push(bus.subscribe({ spaceIds: [s], types: [`t${i}`] }, () => undefined))
    expect(bus.patternsOf(s)).toBe(99)
    const a = await subscribe(`spaceId=${s}&type=shared`)
    // The same filter (values in another order count as the same) shares the interest.
    const a2 = await subscribe(`type=shared&spaceId=${s}`)
    expect(bus.patternsOf(s)).toBe(100)
    expect(expectError(await call(b.app, 'GET', `/v1/events/subscribe?spaceId=${s}&type=more`), 409, 'events.too_many_patterns')).toMatchObject({ limit: 100, spaceId: s })
    // Other spaces have their own budget.
    const other = await subscribe(`spaceId=${spaceId}&type=more`)
    // Closing every subscriber of an interest frees its pattern.
    a.destroy()
    a2.destroy()
    await new Promise<void>((resolve, reject) => {
      const t = setTimeout(() => reject(new Error('pattern not freed')), 5000)
      const check = () => (bus.patternsOf(s) === 99 ? (clearTimeout(t), resolve()) : setTimeout(check, 20))
      check()
    })
    const again = await subscribe(`spaceId=${s}&type=more`)
    for (const x of subs) x.close()
    other.destroy()
    again.destroy()
  })

  it("editor.cursor maps into the sender account's namespace; another account's is 403 events.topic_not_owned", async () => {
    const c = await subscribe(`spaceId=${spaceId}&type=editor.cursor.*`)
    const mine = `editor.cursor.${ownerToken(b.accountId)}`
    await ok(publish({ type: 'editor.cursor', scope: 'space', spaceId, target: 'obj', data: { pos: 3 } }))
    await ok(publish({ type: `${mine}.block`, scope: 'space', spaceId }))
    await c.until((f) => f.filter((x) => x.event === 'event').length === 2)
    expect(events(c).map((e) => e.type)).toEqual([mine, `${mine}.block`])
    const theirs = `editor.cursor.${ownerToken('SomeoneElse111111111111111111111111111111111')}`
    expect(expectError(await publish({ type: theirs, scope: 'space', spaceId }), 403, 'events.topic_not_owned')).toMatchObject({ type: theirs })
    expectError(await publish({ type: 'editor.cursor.anything', scope: 'device' }), 403, 'events.topic_not_owned')
    // Outside the namespace nothing is owned.
    await ok(publish({ type: 'editor.cursors', scope: 'device' }))
    c.destroy()
  })
})

describe('event bus stream: overflow and shutdown', () => {
  it('a reader that stops reading is closed with overflow once 16 events wait for it', async () => {
    const c = await subscribe('type=flood')
    c.pause()
    const data = 'x'.repeat(60 * 1024)
    let closed = false
    // Fill the socket until frames have to wait, then 16 more: the stream closes, never buffers on.
    for (let i = 0; i < 2000 && !closed; i++) {
      const r = await ok<{ subscribers: number }>(publish({ type: 'flood', scope: 'device', data }))
      closed = r.subscribers === 0
    }
    expect(closed).toBe(true)
    c.resume()
    await c.ended
    const last = c.frames.at(-1)
    expect(last).toEqual({ event: 'closed', data: { reason: 'overflow' } })
  }, 60_000)

  it('closing the server ends every subscriber with server_shutdown', async () => {
    const x = await bootApp()
    try {
      const url = await listen(x.app)
      const c = await openSse(`${url}/v1/events/subscribe`)
      await c.until((f) => f.some((y) => y.event === 'ready'))
      const closing = x.close()
      await c.ended
      await closing
      expect(c.frames.at(-1)).toEqual({ event: 'closed', data: { reason: 'server_shutdown' } })
    } finally {
      await x.close().catch(() => undefined)
    }
  })

  it('a managed sign-out ends subscribers with deauthorized; every event route then answers 401 auth.required', async () => {
    const x = await bootApp({ controlToken: 'tok' })
    try {
      const url = await listen(x.app)
      const c = await openSse(`${url}/v1/events/subscribe`)
      await c.until((f) => f.some((y) => y.event === 'ready'))
      expect((await x.app.inject({ method: 'DELETE', url: '/v1/auth', headers: { 'x-svc-control-token': 'tok' } })).statusCode).toBe(204)
      await c.ended
      expect(c.frames.at(-1)).toEqual({ event: 'closed', data: { reason: 'deauthorized' } })
      expectError(await call(x.app, 'POST', '/v1/events', { type: 'a', scope: 'device' }), 401, 'auth.required')
      expectError(await call(x.app, 'GET', '/v1/events/subscribe'), 401, 'auth.required')
      for (const route of ['progress', 'finish', 'cancel']) expectError(await call(x.app, 'POST', `/v1/processes/p/${route}`, {}), 401, 'auth.required')
    } finally {
      await x.close()
    }
  })
})
