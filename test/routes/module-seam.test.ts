import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { FastifyPluginAsync } from 'fastify'
import { SvcError } from '../../sync/core/errors.ts'
import { parseSubscribeBody } from '../../sync/query/index.ts'
import { defineModule } from '../../sync/space/module.ts'
import { datasetFeed } from '../../sync/space/live-feeds.ts'
import type { SpaceChange, SpaceEngine } from '../../sync/space/space-engine.ts'
import { DEFAULT_MODULES } from '../../sync/modules/index.ts'
import { SERVER_MODULES, withRoutes, type ModuleRouteOptions } from '../../server/modules/index.ts'
import { spaceServices } from '../../server/routes/context.ts'
import { openLive } from '../../server/routes/live.ts'
import { bootApp, call, expectError, listen, newObject, newSpace, ok, openSse, type Booted } from './helpers.ts'

/**
 * The module seam, proven from a test file alone: a tiny "tally" module (one dataset kind with
 * a merge pin, one per-space service, one commit hook, one feed, one routes plugin) is handed
 * to the account engine and to buildApp through the one modules list, touching no central
 * list, and read back over HTTP and over a live query.
 */
const MARKS = 'tally_marks'

// The module's own error code, declared from this file alone (no edit of the core union).
declare module '../../sync/core/errors.ts' {
  interface ModuleErrorCodes {
    'tally.label_taken': true
  }
}

class TallyService {
  /** Kept by the commit hook, so it counts marks written here and marks arriving by sync. */
  readonly counts = new Map<string, number>()
  constructor(readonly space: SpaceEngine) {}

  /** One mark: a record of the shared collection; `by` is pinned (first write wins). */
  async mark(objectId: string, label: string): Promise<string> {
    this.space.requireObject(objectId)
    const id = `m${(this.counts.get(objectId) ?? 0) + 1}`
    await this.space.write(objectId, [{ op: 'set', ds: MARKS, id, path: '', value: { label, by: this.space.replica.me } }])
    return id
  }

  committed(c: SpaceChange) {
    for (const [objectId, byDs] of c.records) {
      const marks = byDs.get(MARKS)
      if (marks) this.counts.set(objectId, (this.counts.get(objectId) ?? 0) + marks.size)
    }
  }
}

const tallyModule = defineModule({
  name: 'tally',
  datasets: [{ kind: 'tally', canonicalKey: 'marks', canonicalCollection: MARKS, sharedOnly: true, schema: { type: 'object', properties: { label: { type: 'string' } } } }],
  pins: { [MARKS]: ['by'] },
  service: ({ space }) => new TallyService(space),
  onCommit: (change, tally) => tally.committed(change),
  feeds: { marks: (tally, { objectId }) => datasetFeed(tally.space, objectId, MARKS) },
  errorCodes: ['tally.label_taken'],
})

const P = '/v1/spaces/:spaceId/objects/:objectId/tally'
type Params = { spaceId: string; objectId: string }

const tallyRoutes: FastifyPluginAsync<ModuleRouteOptions> = async (app, { engine }) => {
  const tally = (spaceId: string) => spaceServices(engine, spaceId).of(tallyModule)
  app.post(P, async (request, reply) => {
    const { spaceId, objectId } = request.params as Params
    const label = (request.body as { label?: unknown } | undefined)?.label
    if (typeof label !== 'string') throw new SvcError('request.invalid_field', 'label is a string', { field: 'label' })
    if (label === 'taken') throw new SvcError('tally.label_taken', 'that label is taken', { label })
    const id = await tally(spaceId).mark(objectId, label)
    // The hook ran before the write resolved: the count already includes this mark.
    return reply.code(201).send({ id, count: tally(spaceId).counts.get(objectId) ?? 0 })
  })
  app.get(P, async (request) => {
    const { spaceId, objectId } = request.params as Params
    return { count: tally(spaceId).counts.get(objectId) ?? 0 }
  })
  app.post(`${P}/subscribe`, async (request, reply) => {
    const { spaceId, objectId } = request.params as Params
    await openLive(app, reply, parseSubscribeBody(request.body ?? {}), spaceServices(engine, spaceId).feed(tallyModule, 'marks', { objectId }))
  })
}

const tallyServerModule = withRoutes(tallyModule, tallyRoutes, { 'tally.label_taken': 409 })

describe('a module added from a test file alone', () => {
  let b: Booted
  let base: string
  beforeAll(async () => {
    b = await bootApp({ modules: [...SERVER_MODULES, tallyServerModule] })
    base = await listen(b.app)
  })
  afterAll(async () => b?.close())

  it('serves its route, runs its service and hook, and lists its dataset kind', async () => {
    const sid = await newSpace(b.app, 'tally')
    const obj = await newObject(b.app, sid)
    const url = `/v1/spaces/${sid}/objects/${obj}/tally`
    expect(await ok(call(b.app, 'POST', url, { label: 'one' }), 201)).toEqual({ id: 'm1', count: 1 })
    expect(await ok(call(b.app, 'POST', url, { label: 'two' }), 201)).toEqual({ id: 'm2', count: 2 })
    expect(await ok(call(b.app, 'GET', url))).toEqual({ count: 2 })
    // Its own error code answers with the status its server module gives, in the envelope.
    expectError(await call(b.app, 'POST', url, { label: 'taken' }), 409, 'tally.label_taken')
    // The marks are ordinary records: the data plane reads them back.
    const page = await ok(call(b.app, 'POST', `/v1/spaces/${sid}/query`, { objectId: obj, dataset: MARKS, sort: ['id'] }))
    expect(page.records.map((r: { id: string; label: string }) => [r.id, r.label])).toEqual([
      ['m1', 'one'],
      ['m2', 'two'],
    ])
    const listed = (await ok(call(b.app, 'GET', `/v1/spaces/${sid}/datasets`))).datasets.find((d: { name: string }) => d.name === MARKS)
    expect(listed).toMatchObject({ module: 'tally', shared: true, schema: { properties: { label: { type: 'string' } } } })
  })

  it('its dataset kind is declarable by types; its merge pin reaches the replica', async () => {
    const sid = await newSpace(b.app, 'tally-types')
    const type = await ok(call(b.app, 'POST', `/v1/spaces/${sid}/types`, { xKey: 'counter', name: 'Counter' }), 201)
    const part = await ok(call(b.app, 'POST', `/v1/spaces/${sid}/types/${type.id}/parts`, { key: 'tally', datasets: [{ module: 'tally' }] }), 201)
    expect(part.datasets).toEqual([expect.objectContaining({ collection: MARKS })])
    const obj = await newObject(b.app, sid)
    await ok(call(b.app, 'POST', `/v1/spaces/${sid}/objects/${obj}/tally`, { label: 'x' }), 201)
    // `by` is pinned: a later write of it is dropped by merge and comes back as a rejection.
    const res = await ok(
      call(b.app, 'POST', `/v1/spaces/${sid}/modify`, {
        objectId: obj,
        dataset: MARKS,
        records: [
          {
            id: 'm1',
            ops: [
              { type: '$set', path: 'by', value: 'someone-else' },
              { type: '$set', path: 'label', value: 'y' },
            ],
          },
        ],
      }),
    )
    expect(res.rejections).toEqual([expect.objectContaining({ recordId: 'm1' })])
    const rec = (await ok(call(b.app, 'POST', `/v1/spaces/${sid}/query`, { objectId: obj, dataset: MARKS }))).records[0]
    expect(rec).toMatchObject({ id: 'm1', label: 'y', by: b.accountId })
  })

  it("streams its feed's changes over a live query (SSE)", async () => {
    const sid = await newSpace(b.app, 'tally-live')
    const obj = await newObject(b.app, sid)
    await ok(call(b.app, 'POST', `/v1/spaces/${sid}/objects/${obj}/tally`, { label: 'before' }), 201)
    const sse = await openSse(`${base}/v1/spaces/${sid}/objects/${obj}/tally/subscribe`, { sort: ['id'] })
    try {
      await sse.until((f) => f.some((x) => x.event === 'snapshot'))
      expect(sse.frames.find((f) => f.event === 'snapshot')!.data.records.map((r: { label: string }) => r.label)).toEqual(['before'])
      await ok(call(b.app, 'POST', `/v1/spaces/${sid}/objects/${obj}/tally`, { label: 'after' }), 201)
      const frames = await sse.until((f) => f.some((x) => x.event === 'changes'))
      const changes = frames.filter((f) => f.event === 'changes').flatMap((f) => f.data)
      expect(changes.flatMap((c: { added: Array<{ doc: { label: string } }> }) => c.added.map((a) => a.doc.label))).toEqual(['after'])
    } finally {
      sse.destroy()
    }
  })
})

describe('the same app without the module', () => {
  let b: Booted
  beforeAll(async () => {
    b = await bootApp()
  })
  afterAll(async () => b?.close())

  it('has neither its route nor its dataset kind', async () => {
    const sid = await newSpace(b.app, 'plain')
    const obj = await newObject(b.app, sid)
    expect((await call(b.app, 'POST', `/v1/spaces/${sid}/objects/${obj}/tally`, { label: 'x' })).statusCode).toBe(404)
    const type = await ok(call(b.app, 'POST', `/v1/spaces/${sid}/types`, { xKey: 'counter', name: 'Counter' }), 201)
    expectError(await call(b.app, 'POST', `/v1/spaces/${sid}/types/${type.id}/parts`, { key: 'tally', datasets: [{ module: 'tally' }] }), 400, 'dataset.module_unknown')
  })

  it('the release lists the same modules, in the same order, for the engine and the app', () => {
    expect(SERVER_MODULES.map((m) => m.name)).toEqual(DEFAULT_MODULES.map((m) => m.name))
  })
})
