import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { eventsModule } from '../../sync/modules/events/module.ts'
import { request as httpRequest } from 'node:http'
import { bootApp, call, expectError, listen, newObject, newSpace, ok, openSse, type Booted, type SseClient } from './helpers.ts'

/** Process events on the bus (chat.md "Event envelope"), their helper routes, and `GET /v1/processes`. */
let b: Booted
let base: string
const open: SseClient[] = []
beforeAll(async () => {
  b = await bootApp()
  base = await listen(b.app)
}, 30_000)
afterAll(async () => {
  for (const c of open) c.destroy()
  await b?.close()
})

const publish = (body: unknown) => call(b.app, 'POST', '/v1/events', body)
const processes = async () => (await ok<{ processes: Array<Record<string, any>> }>(call(b.app, 'GET', '/v1/processes'))).processes
async function subscribe(query: string): Promise<SseClient> {
  const c = await openSse(`${base}/v1/events/subscribe?${query}`)
  open.push(c)
  await c.until((f) => f.some((x) => x.event === 'ready'))
  return c
}
const events = (c: SseClient) => c.frames.filter((f) => f.event === 'event').map((f) => f.data)

describe('process helper routes', () => {
  it('progress, finish and cancel on an unknown process are 404 process.not_found; bad ids and bodies are 400', async () => {
    for (const route of ['progress', 'finish', 'cancel']) {
      const body = route === 'finish' ? { status: 'done' } : {}
      expect(expectError(await call(b.app, 'POST', `/v1/processes/nope/${route}`, body), 404, 'process.not_found')).toMatchObject({ processId: 'nope' })
    }
    expectError(await call(b.app, 'POST', '/v1/processes/a%20b/progress', {}), 400, 'request.invalid_field')
    expectError(await call(b.app, 'POST', '/v1/processes/p/finish', { status: 'maybe' }), 400, 'request.invalid_field')
    expectError(await call(b.app, 'POST', '/v1/processes/p/finish', {}), 400, 'request.missing_field')
    expectError(await call(b.app, 'POST', '/v1/processes/p/progress', { progress: { done: 'x' } }), 400, 'request.invalid_field')
    expectError(await call(b.app, 'POST', '/v1/processes/p/cancel', { why: 1 }), 400, 'request.unknown_field')
  })

  it('a published process lists at once; progress carries the full descriptor; done ends it', async () => {
    const watch = await subscribe('type=process.*&target=imp.1')
    await ok(publish({ type: 'process.started', scope: 'device', target: 'imp.1', data: { kind: 'import', title: 'Importing notes' } }))
    const listed = (await processes()).find((p) => p.id === 'imp.1')
    expect(listed).toMatchObject({
      id: 'imp.1',
      kind: 'import',
      state: 'running',
      sender: { identity: b.accountId, self: true },
      scope: 'device',
      descriptor: { kind: 'import', title: 'Importing notes' },
    })
    expect(listed!.startedAt.$date).toMatch(/^\d{4}-/)

    expect(await ok(call(b.app, 'POST', '/v1/processes/imp.1/progress', { progress: { done: 3, total: 10 }, message: 'three' }))).toEqual({ subscribers: 1 })
    await watch.until((f) => f.filter((x) => x.event === 'event').length === 2)
    const progress = events(watch)[1]
    expect(progress).toMatchObject({ type: 'process.progress', scope: 'device', target: 'imp.1', sender: { identity: b.accountId, self: true } })
    expect(progress.data).toMatchObject({ id: 'imp.1', kind: 'import', title: 'Importing notes', state: 'running', progress: { done: 3, total: 10 }, message: 'three' })
    expect((await processes()).find((p) => p.id === 'imp.1')).toMatchObject({ progress: { done: 3, total: 10 } })

    // A second progress keeps the descriptor whole.
    await ok(call(b.app, 'POST', '/v1/processes/imp.1/progress', { progress: { done: 9, total: 10 } }))
    await ok(call(b.app, 'POST', '/v1/processes/imp.1/finish', { status: 'done', result: { notes: 10 } }))
    await watch.until((f) => f.filter((x) => x.event === 'event').length === 4)
    expect(events(watch)[2].data).toMatchObject({ title: 'Importing notes', progress: { done: 9, total: 10 } })
    expect(events(watch)[3]).toMatchObject({ type: 'process.done', target: 'imp.1', data: { state: 'done', result: { notes: 10 }, title: 'Importing notes' } })
    expect((await processes()).some((p) => p.id === 'imp.1')).toBe(false)
    expectError(await call(b.app, 'POST', '/v1/processes/imp.1/progress', {}), 404, 'process.not_found')
  })

  it('failed ends a process with its error; a process published on a space reports there', async () => {
    const s = await newSpace(b.app, 'Processes')
    const watch = await subscribe(`spaceId=${s}&type=process.*`)
    await ok(publish({ type: 'process.started', scope: 'space', spaceId: s, target: 'job', data: { kind: 'export' } }))
    expect((await processes()).find((p) => p.id === 'job')).toMatchObject({ scope: 'space', spaceId: s })
    await ok(call(b.app, 'POST', '/v1/processes/job/finish', { status: 'failed', error: 'disk full' }))
    await watch.until((f) => f.filter((x) => x.event === 'event').length === 2)
    expect(events(watch)[1]).toMatchObject({ type: 'process.failed', scope: 'space', spaceId: s, target: 'job', data: { state: 'failed', error: 'disk full' } })
    expect((await processes()).some((p) => p.id === 'job')).toBe(false)
  })

  it('cancel asks the runner with process.cancel; the runner then reports cancelled', async () => {
    const runner = await subscribe('type=process.cancel')
    await ok(publish({ type: 'process.started', scope: 'account', target: 'sync.big' }))
    await ok(call(b.app, 'POST', '/v1/processes/sync.big/cancel', { reason: 'user' }))
    await runner.until((f) => f.some((x) => x.event === 'event'))
    expect(events(runner)[0]).toMatchObject({ type: 'process.cancel', scope: 'account', target: 'sync.big', data: { id: 'sync.big', reason: 'user' } })
    // A cancel request ends nothing by itself.
    expect((await processes()).some((p) => p.id === 'sync.big')).toBe(true)
    await ok(call(b.app, 'POST', '/v1/processes/sync.big/finish', { status: 'cancelled' }))
    expect((await processes()).some((p) => p.id === 'sync.big')).toBe(false)
  })

  it('several publishers running one id: cancel is 409 process.ambiguous with details.identities; progress still finds ours', async () => {
    const s = await newSpace(b.app, 'Shared work')
    const bus = b.engine.account().services.of(eventsModule)
    const other = 'Zz9Other1111111111111111111111111111111111'
    // Another member's daemon announced the same id in the space (what the network side hands the bus).
    bus.deliverRemote({ type: 'process.started', scope: 'space', spaceId: s, target: 'dup', data: { kind: 'index' } }, other)
    expect(expectError(await call(b.app, 'POST', '/v1/processes/dup/progress', {}), 404, 'process.not_found')).toMatchObject({ processId: 'dup' })
    await ok(publish({ type: 'process.started', scope: 'space', spaceId: s, target: 'dup' }))
    const listed = (await processes()).filter((p) => p.id === 'dup')
    expect(listed.map((p) => p.sender)).toEqual(
      [
        { identity: b.accountId, self: true },
        { identity: other, self: false },
      ].sort((x, y) => (x.identity < y.identity ? -1 : 1)),
    )
    expect(expectError(await call(b.app, 'POST', '/v1/processes/dup/cancel', {}), 409, 'process.ambiguous')).toMatchObject({ identities: [b.accountId, other].sort() })
    await ok(call(b.app, 'POST', '/v1/processes/dup/progress', { progress: { done: 1 } }))
    await ok(call(b.app, 'POST', '/v1/processes/dup/finish', { status: 'done' }))
    // Only the other's is left: cancel reaches it.
    await ok(call(b.app, 'POST', '/v1/processes/dup/cancel', {}))
    bus.deliverRemote({ type: 'process.cancelled', scope: 'space', spaceId: s, target: 'dup' }, other)
    expect((await processes()).some((p) => p.id === 'dup')).toBe(false)
  })
})

describe("the daemon's own long work on the bus", () => {
  it('a process registered for more than 3 s is announced (started, done, full descriptor, device scope); one that ends sooner never is', async () => {
    const watch = await subscribe('type=process.*')
    const endLong = b.engine.processes.start('sync.long-test', 'sync')
    const endShort = b.engine.processes.start('sync.short-test', 'sync')
    await new Promise((r) => setTimeout(r, 1000))
    endShort()
    b.engine.processes.progress('sync.long-test', { rounds: 2 })
    const started = await watch.until((f) => f.some((x) => x.event === 'event' && x.data.type === 'process.started' && x.data.target === 'sync.long-test'), 8000)
    const ev = started.find((x) => x.event === 'event' && x.data.target === 'sync.long-test')!.data
    expect(ev).toMatchObject({
      type: 'process.started',
      scope: 'device',
      target: 'sync.long-test',
      sender: { identity: b.accountId, self: true },
      data: { id: 'sync.long-test', kind: 'sync', state: 'running', progress: { rounds: 2 } },
    })
    // Listed once, as the daemon's work (not again as a process heard on the bus).
    expect((await processes()).filter((p) => p.id === 'sync.long-test')).toEqual([
      { id: 'sync.long-test', kind: 'sync', state: 'running', startedAt: ev.data.startedAt, progress: { rounds: 2 } },
    ])
    endLong()
    await watch.until((f) => f.some((x) => x.event === 'event' && x.data.type === 'process.done' && x.data.target === 'sync.long-test'))
    expect(events(watch).find((e) => e.type === 'process.done')).toMatchObject({ target: 'sync.long-test', data: { id: 'sync.long-test', state: 'done' } })
    expect(events(watch).filter((e) => e.target === 'sync.short-test')).toEqual([])
    expect((await processes()).some((p) => p.id === 'sync.long-test')).toBe(false)
  }, 15_000)
})

describe('a large attach is long work of the daemon', () => {
  it('an upload still running after 3 s is listed and announced with its bytes as progress, and done once stored', async () => {
    const space = await newSpace(b.app, 'Uploads')
    const obj = await newObject(b.app, space)
    const watch = await subscribe('type=process.*')
    const isAttach = (e: { target?: string }) => e.target?.startsWith(`files.attach.${space}.`) === true
    // A real upload over HTTP whose body arrives slowly: a first part now, the rest after the announcement.
    const answered = new Promise<{ status: number; body: string }>((resolve, reject) => {
      const req = httpRequest(
        `${base}/v1/spaces/${space}/objects/${obj}/files?name=slow.bin`,
        { method: 'POST', headers: { 'content-type': 'application/octet-stream' } },
        (res) => {
          let body = ''
          res.setEncoding('utf8')
          res.on('data', (c: string) => (body += c))
          res.on('end', () => resolve({ status: res.statusCode ?? 0, body }))
        },
      )
      req.on('error', reject)
      req.write(Buffer.alloc(70_000, 1))
      void watch
        .until((f) => f.some((x) => x.event === 'event' && x.data.type === 'process.started' && isAttach(x.data)), 8000)
        .then(
          () => req.end(Buffer.alloc(30_000, 2)),
          (err: unknown) => {
            req.destroy()
            reject(err)
          },
        )
    })
    const res = await answered
    expect(res.status).toBe(201)
    const started = events(watch).find((e) => e.type === 'process.started' && isAttach(e))
    expect(started).toMatchObject({ scope: 'device', data: { kind: 'files.attach', state: 'running', progress: { bytes: 70_000 } } })
    await watch.until((f) => f.some((x) => x.event === 'event' && x.data.type === 'process.done' && isAttach(x.data)))
    expect(events(watch).find((e) => e.type === 'process.done' && isAttach(e))).toMatchObject({ target: started.target, data: { kind: 'files.attach', state: 'done' } })
    expect((await processes()).some((p) => p.kind === 'files.attach')).toBe(false)
  }, 20_000)

  it('a quick attach and a bundle install are never announced', async () => {
    const space = await newSpace(b.app, 'Quick')
    const obj = await newObject(b.app, space)
    const watch = await subscribe('type=process.*')
    const up = await b.app.inject({
      method: 'POST',
      url: `/v1/spaces/${space}/objects/${obj}/files?name=a.txt`,
      headers: { 'content-type': 'application/octet-stream' },
      payload: Buffer.from('hi'),
    })
    expect(up.statusCode).toBe(201)
    await ok(call(b.app, 'POST', '/v1/catalog/general-chat/setup', { spaceId: space }))
    await new Promise((r) => setTimeout(r, 1500))
    expect(events(watch).filter((e) => e.target?.includes(space))).toEqual([])
  })
})
