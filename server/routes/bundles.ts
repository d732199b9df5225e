import type { FastifyInstance, FastifyReply } from 'fastify'
import { SvcError } from '../../sync/core/errors.ts'
import type { BundlesService } from '../../sync/space/bundles/index.ts'
import { errorBody } from '../errors.ts'
import { NoContent } from '../schemas/common.ts'
import { Bundle, BundleBody, BundleInstalled, BundleList, BundleParams, ChildBody, ChildCreated, ResolveBody } from '../schemas/bundles.ts'
import { SpaceParams } from '../schemas/spaces.ts'
import { spaceServices, type RouteHost } from './context.ts'
import { typed } from '../http/type-provider.ts'
import { asProcess } from '../http/processes.ts'

const S = '/v1/spaces/:spaceId'

/** The bundles of a space; the tech space has none (405 `space.unsupported`). */
export function bundlesIn(engine: RouteHost, spaceId: string): BundlesService {
  if (spaceId === engine.account().tech.spaceId) throw new SvcError('space.unsupported', 'the tech space has no bundles', { spaceId })
  return spaceServices(engine, spaceId).bundles
}

/**
 * The spec answers an unknown type or property named in a bundle body with 400 (the request
 * is at fault), while the same codes elsewhere are 404 (a path target is missing).
 */
const BODY_REFERENCE_CODES = new Set(['type.not_found', 'property.not_found'])

async function withBodyReferences<T>(reply: FastifyReply, fn: () => Promise<T>): Promise<T | FastifyReply> {
  try {
    return await fn()
  } catch (err) {
    if (!(err instanceof SvcError) || !BODY_REFERENCE_CODES.has(err.code)) throw err
    return reply
      .code(400)
      .header('content-type', 'application/json; charset=utf-8')
      .send(errorBody(err.code, err.message, err.details))
  }
}

/** Spec "Bundles and catalog", the `{S}/bundles` half. Rules: sync/space/bundles/. */
export function bundleRoutes(engine: RouteHost) {
  return async (root: FastifyInstance) => {
    const app = typed(root)
    app.post(
      `${S}/bundles`,
      {
        schema: {
          summary: 'Adopt-or-install a bundle (201 installed, 200 adopted)',
          params: SpaceParams,
          body: BundleBody,
          response: { 200: BundleInstalled, 201: BundleInstalled },
        },
      },
      async (request, reply) => {
        const bundles = bundlesIn(engine, request.params.spaceId)
        return withBodyReferences(reply, async () => {
          // Long work of the daemon past 3 s (listed and announced); installs in one space join one process.
          const res = await asProcess(engine, `bundle.install.${request.params.spaceId}`, 'bundle.install', () => bundles.install(request.body))
          return reply.code(res.installed ? 201 : 200).send(res)
        })
      },
    )

    app.get(`${S}/bundles`, { schema: { summary: 'Installed bundles of the space', params: SpaceParams, response: { 200: BundleList } } }, async (request) => {
      return { bundles: await bundlesIn(engine, request.params.spaceId).list() }
    })

    app.get(`${S}/bundles/:bundleId`, { schema: { summary: 'One bundle', params: BundleParams, response: { 200: Bundle } } }, async (request) => {
      const { spaceId, bundleId } = request.params
      return bundlesIn(engine, spaceId).get(bundleId)
    })

    app.post(
      `${S}/bundles/:bundleId/resolve`,
      { schema: { summary: 'Release a losing root: it becomes an ordinary object', params: BundleParams, body: ResolveBody, response: { 204: NoContent } } },
      async (request, reply) => {
        const { spaceId, bundleId } = request.params
        await bundlesIn(engine, spaceId).resolve(bundleId, request.body.loserRootId)
        return reply.code(204).send()
      },
    )

    app.post(
      `${S}/bundles/:bundleId/children`,
      {
        schema: {
          summary: 'Deterministic child of a bundle (201 created here, 200 existing)',
          params: BundleParams,
          body: ChildBody,
          response: { 200: ChildCreated, 201: ChildCreated },
        },
      },
      async (request, reply) => {
        const { spaceId, bundleId } = request.params
        const bundles = bundlesIn(engine, spaceId)
        const body = request.body
        return withBodyReferences(reply, async () => {
          const { objectId, created } = await bundles.child(bundleId, { seed: body.seed, ...(body.types ? { types: body.types } : {}) })
          return reply.code(created ? 201 : 200).send({ objectId })
        })
      },
    )
  }
}
