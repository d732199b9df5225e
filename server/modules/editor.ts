import { Type } from '@sinclair/typebox'
import type { FastifyPluginAsync } from 'fastify'
import { editorModule, makeEditorModule, type EditorOptions } from '../../sync/modules/editor/module.ts'
import { typed } from '../http/type-provider.ts'
import { space, spaceServices } from '../routes/context.ts'
import { eventsModule } from '../../sync/modules/events/module.ts'
import { EventStream } from '../schemas/common.ts'
import { Cursor, CursorBody, CursorCleared, CursorList } from '../schemas/editor-cursors.ts'
import { WriteResult } from '../schemas/query.ts'
import { Id } from '../schemas/spaces.ts'
import { withRoutes, type ModuleRouteOptions } from './module.ts'

const E = '/v1/spaces/:spaceId/objects/:objectId/editor/:collection'

const EditorParams = Type.Object({ spaceId: Id('space id'), objectId: Id('object id'), collection: Id('`editor_blocks` or `<typeId>_<key>`') })
const BlockParams = Type.Object({ ...EditorParams.properties, blockId: Id('block id') })

const Content = Type.String({ maxLength: 16 * 1024 * 1024, description: 'markdown' })
const ContentBody = Type.Object({ content: Content }, { additionalProperties: false })
const EditsBody = Type.Object(
  {
    edits: Type.Array(
      Type.Object(
        {
          oldText: Type.String({ description: 'must occur in the current rendering exactly (once, unless replaceAll)' }),
          newText: Type.String(),
          replaceAll: Type.Optional(Type.Boolean()),
        },
        { additionalProperties: false },
      ),
      { minItems: 1, maxItems: 1000 },
    ),
  },
  { additionalProperties: false },
)
const Summary = Type.Object({ inserted: Type.Integer(), updated: Type.Integer(), deleted: Type.Integer(), unchanged: Type.Integer() })
/**
 * GET /markdown answers the spec's "markdown text (render)": `text/markdown; charset=utf-8`, the
 * module's normal form (docs/editor.md) as the body. Extension (docs/api.md): a request whose
 * Accept names `application/json` and not `text/markdown` gets JSON `{markdown}` instead (the
 * bundled client and CLI read that form).
 */
const MarkdownBody = Type.Object({ markdown: Type.String({ description: 'the rendering in normal form; empty document is ""' }) })
const MarkdownResponse = Type.Unsafe({
  description: 'the rendering in normal form: text/markdown by default (spec); JSON {markdown} when Accept names application/json and not text/markdown',
  content: { 'text/markdown': { schema: { type: 'string' } }, 'application/json': { schema: MarkdownBody } },
})

/** Whether a GET /markdown asks for the JSON form (extension): Accept names application/json and not text/markdown. */
export function wantsMarkdownJson(accept: string | undefined): boolean {
  const types = (accept ?? '').split(',').map((t) => t.split(';', 1)[0].trim().toLowerCase())
  return types.includes('application/json') && !types.includes('text/markdown')
}

const BlockNav = Type.Object(
  {
    pos: Type.Optional(Type.String({ minLength: 1, maxLength: 256, description: 'fractional position; default after the last block' })),
    depth: Type.Optional(Type.Integer({ minimum: 0, maximum: 64 })),
  },
  { additionalProperties: false },
)
const BlockCreateBody = Type.Object(
  {
    type: Type.String({ minLength: 1, maxLength: 64 }),
    style: Type.Optional(Type.String({ maxLength: 1024 })),
    text: Type.Optional(Type.String()),
    checked: Type.Optional(Type.Boolean({ description: 'task blocks' })),
    rows: Type.Optional(Type.Array(Type.Array(Type.String()), { description: 'table blocks; row 0 is the header' })),
    nav: Type.Optional(BlockNav),
  },
  { additionalProperties: false },
)
const BlockPatchBody = Type.Object(
  {
    set: Type.Optional(Type.Record(Type.String({ minLength: 1, maxLength: 1024 }), Type.Unknown(), { description: 'dotted path -> value' })),
    unset: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 1024 }), { description: 'dotted paths; `type` cannot be unset' })),
    textBase: Type.Optional(
      Type.String({
        maxLength: 1_048_576,
        description: 'extension: the text `set.text` was typed against; the edit is merged onto the text now, keeping what others typed since (docs/editor.md)',
      }),
    ),
  },
  { additionalProperties: false },
)

/** Spec "Editor": markdown and block routes over an object's editor dataset (rules in EditorService). */
const editorRoutes: FastifyPluginAsync<ModuleRouteOptions> = async (root, { engine }) => {
  const app = typed(root)
  const svc = (spaceId: string) => spaceServices(engine, spaceId).of(editorModule)

  app.get(
    `${E}/markdown`,
    { schema: { summary: 'The editor dataset rendered as markdown', params: EditorParams, response: { 200: MarkdownResponse } } },
    async (request, reply) => {
      const { spaceId, objectId, collection } = request.params
      const markdown = await svc(spaceId).markdown(objectId, collection)
      if (wantsMarkdownJson(request.headers.accept)) return reply.type('application/json; charset=utf-8').send({ markdown })
      return reply.type('text/markdown; charset=utf-8').send(markdown)
    },
  )

  app.put(
    `${E}/markdown`,
    { schema: { summary: 'Replace the document: parse, diff, per-block ops in one change', params: EditorParams, body: ContentBody, response: { 200: Summary } } },
    async (request) => {
      const { spaceId, objectId, collection } = request.params
      return await svc(spaceId).put(objectId, collection, request.body.content)
    },
  )

  app.patch(
    `${E}/markdown`,
    { schema: { summary: 'Exact-text edits of the rendering, all or nothing', params: EditorParams, body: EditsBody, response: { 200: Summary } } },
    async (request) => {
      const { spaceId, objectId, collection } = request.params
      return await svc(spaceId).patch(objectId, collection, request.body.edits)
    },
  )

  app.post(
    `${E}/markdown/append`,
    { schema: { summary: 'Append markdown after the last block (inserts only)', params: EditorParams, body: ContentBody, response: { 200: Summary } } },
    async (request) => {
      const { spaceId, objectId, collection } = request.params
      return await svc(spaceId).append(objectId, collection, request.body.content)
    },
  )

  app.post(
    `${E}/blocks`,
    { schema: { summary: 'Create one block (stored as given)', params: EditorParams, body: BlockCreateBody, response: { 201: WriteResult } } },
    async (request, reply) => {
      const { spaceId, objectId, collection } = request.params
      const res = await svc(spaceId).createBlock(objectId, collection, request.body)
      return reply.code(201).send(res)
    },
  )

  app.patch(
    `${E}/blocks/:blockId`,
    { schema: { summary: 'Per-path set and unset on one block', params: BlockParams, body: BlockPatchBody, response: { 200: WriteResult } } },
    async (request) => {
      const { spaceId, objectId, collection, blockId } = request.params
      return await svc(spaceId).patchBlock(objectId, collection, blockId, request.body)
    },
  )

  // ---------------------------------------------------------------- cursors (docs/editor.md "Cursors")
  const presence = () => engine.account().services.of(editorModule).bind(engine.account().services.of(eventsModule))
  const cursorsOf = async (spaceId: string, objectId: string, collection: string) =>
    (await presence().list(space(engine, spaceId), objectId)).filter((c) => c.collection === collection)

  app.put(
    `${E}/cursor`,
    {
      schema: {
        summary: "Set this device's cursor in a block (editor.cursor presence, renewed by setting it again)",
        params: EditorParams,
        body: CursorBody,
        response: { 200: Cursor },
      },
    },
    async (request) => {
      const { spaceId, objectId, collection } = request.params
      await svc(spaceId).resolve(objectId, collection)
      const { blockId, anchor, head, name } = request.body
      return await presence().set(space(engine, spaceId), objectId, collection, blockId, anchor, head ?? anchor, name ?? '')
    },
  )

  app.delete(
    `${E}/cursor`,
    { schema: { summary: "Clear this device's cursor in the object, for everyone at once", params: EditorParams, response: { 200: CursorCleared } } },
    async (request) => {
      const { spaceId, objectId, collection } = request.params
      await svc(spaceId).resolve(objectId, collection)
      return { cleared: presence().clear(spaceId, objectId) }
    },
  )

  app.get(`${E}/cursors`, { schema: { summary: 'The live cursors in the object (every member device)', params: EditorParams, response: { 200: CursorList } } }, async (request) => {
    const { spaceId, objectId, collection } = request.params
    await svc(spaceId).resolve(objectId, collection)
    return { cursors: await cursorsOf(spaceId, objectId, collection) }
  })

  app.get(
    `${E}/cursors/stream`,
    {
      schema: {
        summary: 'Cursor changes in the object (SSE: ready, cursors, cursor, closed)',
        params: EditorParams,
        response: { 200: EventStream('ready, cursors (the current list), cursor ({action: set|removed, cursor}), closed') },
      },
    },
    async (request, reply) => {
      const { spaceId, objectId, collection } = request.params
      await svc(spaceId).resolve(objectId, collection)
      const current = await cursorsOf(spaceId, objectId, collection)
      const stream = root.sse.open(reply, { mailboxCapacity: 256 })
      if (stream.closed) return
      stream.send('cursors', { cursors: current })
      const stop = presence().watch(space(engine, spaceId), objectId, (c) => {
        if (c.cursor.collection === collection) stream.send('cursor', c)
      })
      stream.onClose(() => stop())
    },
  )

  app.delete(
    `${E}/blocks/:blockId`,
    { schema: { summary: 'Delete one block (children are not cascaded)', params: BlockParams, response: { 200: WriteResult } } },
    async (request) => {
      const { spaceId, objectId, collection, blockId } = request.params
      return await svc(spaceId).deleteBlock(objectId, collection, blockId)
    },
  )
}

const EDITOR_STATUSES = {
  'markdown.no_match': 400,
  'markdown.ambiguous_match': 400,
  'markdown.overlapping_edits': 400,
} as const

/** The editor module with these settings served over HTTP (`svc serve` passes the cursor timeout). */
export const makeEditorServerModule = (o: EditorOptions = {}) => withRoutes(makeEditorModule(o), editorRoutes, EDITOR_STATUSES)

/** The editor module served over HTTP (docs/architecture.md "Adding a module"). */
export const editorServerModule = withRoutes(editorModule, editorRoutes, EDITOR_STATUSES)
