import { Readable } from 'node:stream'
import { Type } from '@sinclair/typebox'
import type { FastifyPluginAsync } from 'fastify'
import { SvcError } from '../../sync/core/errors.ts'
import { filesModule, makeFilesModule } from '../../sync/modules/files/module.ts'
import { parseRange } from '../../sync/modules/files/range.ts'
import { FILES_COLLECTION } from '../../sync/modules/files/record.ts'
import type { FilesOptions, FilesService } from '../../sync/modules/files/service.ts'
import { parseSubscribeBody } from '../../sync/query/index.ts'
import { datasetFeed } from '../../sync/space/live-feeds.ts'
import { variantBytes, variantsOf } from '../../node/files/variants.ts'
import { servedAs } from '../http/content-policy.ts'
import { forwarder } from '../http/forwarder.ts'
import { typed } from '../http/type-provider.ts'
import { liveRoute } from '../http/live-route.ts'
import { space } from '../routes/context.ts'
import { openLive } from '../routes/live.ts'
import { EventStream, NoContent } from '../schemas/common.ts'
import {
  AttachParams,
  AttachQuery,
  Attached,
  CacheSize,
  FileInfo,
  FileList,
  FileParams,
  FileStats,
  FileStatus,
  FreeBody,
  Freed,
  ListQuery,
  Variants,
  VariantQuery,
} from '../schemas/files.ts'
import { ObjectsSubscribeBody, WriteResult } from '../schemas/query.ts'
import { SpaceParams } from '../schemas/spaces.ts'
import { ObjectParams } from '../schemas/objects.ts'
import { withRoutes, type ModuleRouteOptions } from './module.ts'
import { asProcess, counted } from '../http/processes.ts'

const S = '/v1/spaces/:spaceId'
const F = `${S}/files/:fileId`

/** The attach body's content type: raw bytes, parsed by nobody (streamed to the chunker). */
const RAW = 'application/octet-stream'

/**
 * Files over HTTP (spec core.md "Files cache" and the routes it leaves "not shown", designed in
 * docs/api.md "Files"): attach (streamed, exempt from the 1 MB body limit, its own limit
 * FILES.attachMax), list, info, status, stats, download with Range, variants, delete, the cache
 * routes, the status stream and the per-object live query of file records.
 */
const filesRoutes: FastifyPluginAsync<ModuleRouteOptions> = async (root, { engine }) => {
  const app = typed(root)
  const files = (): FilesService => engine.account().services.of(filesModule)
  let attaches = 0

  // Scoped to this plugin: the app's JSON parsing and 1 MB limit stay as they are everywhere
  // else. The stream is handed to the route as is; the chunker enforces the attach limit as
  // bytes arrive, so no body is ever buffered whole.
  root.addContentTypeParser(RAW, (_request, payload, done) => done(null, payload))

  app.post(
    `${S}/objects/:objectId/files`,
    {
      bodyLimit: Number.MAX_SAFE_INTEGER,
      // A large upload may take longer than the app's 10 s body timeout (server/http/body-timeout.ts).
      config: { streamedBody: true },
      schema: {
        summary: `Attach a file: the body is its bytes (${RAW}); 413 file.too_large past the attach limit`,
        params: AttachParams,
        querystring: AttachQuery,
        response: { 201: Attached },
      },
    },
    async (request, reply) => {
      if (!(request.headers['content-type'] ?? '').startsWith(RAW))
        throw new SvcError('request.invalid_field', `the body must be the file's bytes sent as ${RAW}`, { field: 'content-type' })
      const { spaceId, objectId } = request.params
      const body = request.body as AsyncIterable<Uint8Array>
      try {
        // A large attach is long work of the daemon: listed (and announced) past 3 s, its bytes as progress.
        const res = await asProcess(engine, `files.attach.${spaceId}.${++attaches}`, 'files.attach', (progress) =>
          files().attach(spaceId, objectId, { name: request.query.name, mime: request.query.mime ?? RAW }, counted(body, progress)),
        )
        // eslint-disable-next-line @typescript-eslint/return-await -- Fastify's reply.send returns the reply, not a promise to await
        return reply.code(201).send({ ...res, objectId, uri: `svc://f/${spaceId}/${res.fileId}` })
      } catch (err) {
        // The rest of a refused body is not read: the connection closes after the answer.
        if (!request.raw.readableEnded) reply.header('connection', 'close')
        throw err
      }
    },
  )

  app.get(
    `${S}/files`,
    { schema: { summary: 'Files of the space (or of one object), by file id', params: SpaceParams, querystring: ListQuery, response: { 200: FileList } } },
    async (request) => {
      return { files: await files().list(request.params.spaceId, request.query.objectId) }
    },
  )

  app.get(
    `${S}/files/stats`,
    { schema: { summary: 'Counts by state, plaintext bytes, bytes stored here', params: SpaceParams, response: { 200: FileStats } } },
    async (request) => {
      return files().stats(request.params.spaceId)
    },
  )

  app.get(
    `${S}/files/subscribe`,
    { schema: { summary: 'File status frames (SSE): status, lagged', params: SpaceParams, response: { 200: EventStream('ready, status, lagged, closed') } } },
    async (request, reply) => {
      const { spaceId } = request.params
      const svc = files()
      // Built before the stream opens, so files that sync in from now on announce themselves.
      await svc.index.of(space(engine, spaceId))
      const stream = app.sse.open(reply)
      if (stream.closed) return
      const forward = forwarder(stream, 'status')
      stream.onClose(svc.events.on('status', (e) => e.spaceId === spaceId && forward(e.frame)))
    },
  )

  app.get(F, { schema: { summary: 'File info', params: FileParams, response: { 200: FileInfo } } }, async (request) => {
    return files().info(request.params.spaceId, request.params.fileId)
  })

  app.get(`${F}/status`, { schema: { summary: 'File status (the body of a status frame)', params: FileParams, response: { 200: FileStatus } } }, async (request) => {
    return files().status(request.params.spaceId, request.params.fileId)
  })

  app.get(`${F}/variants`, { schema: { summary: 'Image variants this file offers', params: FileParams, response: { 200: Variants } } }, async (request) => {
    const rec = await files().record(request.params.spaceId, request.params.fileId)
    return { variants: variantsOf(rec.mime) }
  })

  app.get(
    `${F}/content`,
    {
      // The one route a document of the API's own origin may load (server/http/security.ts): it
      // serves passive bytes only.
      config: { passiveContent: true },
      schema: { summary: 'Download: 200 whole, 206 with Range, 416 bad range; ?variant=w<width> for images', params: FileParams, querystring: VariantQuery },
    },
    async (request, reply) => {
      const { spaceId, fileId } = request.params
      const svc = files()
      let size: number
      let open: (start: number, end: number) => Promise<AsyncIterable<Uint8Array>>
      let etag: string
      const variant = request.query.variant
      const rec = await svc.record(spaceId, fileId)
      if (variant !== undefined) {
        const v = await variantBytes(svc, spaceId, fileId, variant, request.log.child({ scope: 'files.variants' }))
        size = v.bytes.length
        etag = `"${fileId}.${variant}"`
        open = async (start, end) =>
          (async function* () {
            if (end >= start) yield v.bytes.subarray(start, end + 1)
          })()
      } else {
        size = rec.size
        etag = `"${rec.hash}"`
        open = async (start, end) => (await svc.read(spaceId, fileId, start, end)).body
      }
      // The record's type and name are whatever a member wrote: the policy picks what is served.
      const served = servedAs(rec.mime, rec.name)
      reply.header('accept-ranges', 'bytes').header('etag', etag).header('content-type', served.contentType).header('content-disposition', served.disposition)
      const range = parseRange(request.headers.range, size)
      if (range === 'invalid') {
        return reply
          .code(416)
          .header('content-range', `bytes */${size}`)
          .header('content-type', 'application/json; charset=utf-8')
          .send({
            error: {
              code: 'request.invalid_field',
              message: 'the range is malformed, names several ranges, or starts past the end of the file',
              details: { field: 'range', size },
            },
          })
      }
      const { start, end } = range ?? { start: 0, end: size - 1 }
      const body = await open(start, end)
      if (range) reply.code(206).header('content-range', `bytes ${start}-${end}/${size}`)
      reply.header('content-length', String(Math.max(0, end - start + 1)))
      return reply.send(Readable.from(body, { objectMode: false }))
    },
  )

  app.delete(
    F,
    { schema: { summary: 'Delete a file (tombstones the record; bytes go at the next sweep past grace)', params: FileParams, response: { 200: WriteResult } } },
    async (request) => {
      return files().remove(request.params.spaceId, request.params.fileId)
    },
  )

  app.post(
    `${F}/pin`,
    { schema: { summary: 'Keep a full local copy (background fetch, survives restarts)', params: FileParams, response: { 204: NoContent } } },
    async (request, reply) => {
      await files().pin(request.params.spaceId, request.params.fileId)
      return reply.code(204).send()
    },
  )

  app.post(
    `${F}/offload`,
    { schema: { summary: 'Drop local bytes (409 file.not_durable while they are the only copy)', params: FileParams, response: { 204: NoContent } } },
    async (request, reply) => {
      await files().offload(request.params.spaceId, request.params.fileId)
      return reply.code(204).send()
    },
  )

  app.get(
    '/v1/files/exchange',
    { schema: { summary: 'Block exchange counters since start (debug); empty without P2P', response: { 200: Type.Object({}, { additionalProperties: true }) } } },
    async () => {
      return files().reader.source?.stats?.() ?? {}
    },
  )

  app.get('/v1/files/cache', { schema: { summary: 'Bytes of complete and partial copies, all spaces', response: { 200: CacheSize } } }, async () => {
    return { size: await files().cache.size() }
  })

  app.post(
    '/v1/files/cache/free',
    { schema: { summary: 'LRU reclaim of backed-up or unreferenced content, never the only copy', body: FreeBody, response: { 200: Freed } } },
    async (request) => {
      return { freed: await files().cache.free(request.body.bytes) }
    },
  )

  app.post(
    '/v1/files/cache/sweep',
    { schema: { summary: 'Prune deleted files, delete unreferenced content past grace, drop stale partial fetches', response: { 204: NoContent } } },
    async (_request, reply) => {
      await files().cache.sweep()
      return reply.code(204).send()
    },
  )

  liveRoute(
    root,
    `${S}/objects/:objectId/files/query/subscribe`,
    {
      config: { reads: true },
      schema: {
        summary: 'Live file records of one object (SSE, windowed frames)',
        params: ObjectParams,
        body: ObjectsSubscribeBody,
        response: { 200: EventStream('ready, snapshot, changes, closed') },
      },
    },
    async (request, reply) => {
      const body = parseSubscribeBody(request.body)
      const sp = space(engine, request.params.spaceId)
      sp.requireObject(request.params.objectId)
      await openLive(app, reply, body, datasetFeed(sp, request.params.objectId, FILES_COLLECTION))
    },
  )
}

/** Files served over HTTP with these options (tests shrink blocks, limits and grace). */
export const makeFilesServerModule = (opts: FilesOptions = {}) => withRoutes(makeFilesModule(opts), filesRoutes, { 'file.too_large': 413 })

/** Files served over HTTP, and the status of the module's own code. */
export const filesServerModule = withRoutes(filesModule, filesRoutes, { 'file.too_large': 413 })
