import type { FastifyInstance } from 'fastify'
import { NoContent } from '../schemas/common.ts'
import { SpaceParams } from '../schemas/spaces.ts'
import {
  AttachParams,
  DatasetCreated,
  DatasetDeclParams,
  DatasetDraftBody,
  PartCreateBody,
  PartCreated,
  PartList,
  PartParams,
  PropertyCreateBody,
  PropertyDef,
  PropertyList,
  PropertyParams,
  PropertySetResult,
  PropertyValuesBody,
  PropertyValuesParams,
  PropId,
  SetUnsetBody,
  TypeCreateBody,
  TypeInfo,
  TypeList,
  TypeParams,
  TypePatchBody,
  TypesQuery,
} from '../schemas/types.ts'
import { types, type RouteHost } from './context.ts'
import { typed } from '../http/type-provider.ts'

const S = '/v1/spaces/:spaceId'
const T_ = `${S}/types/:typeId`

/** Spec "Types, properties, parts, datasets" plus the typed value set of "Objects". Rules: sync/space/types/. */
export function typeRoutes(engine: RouteHost) {
  return async (root: FastifyInstance) => {
    const app = typed(root)
    // ------------------------------------------------------------ types
    app.get(
      `${S}/types`,
      { schema: { summary: 'Types in listing order; hidden ones with includeHidden=true', params: SpaceParams, querystring: TypesQuery, response: { 200: TypeList } } },
      async (request) => {
        const { spaceId } = request.params
        return { types: types(engine, spaceId).listTypes({ includeHidden: request.query.includeHidden === true }) }
      },
    )

    app.post(
      `${S}/types`,
      { schema: { summary: 'Create a type (xKey required, unique)', params: SpaceParams, body: TypeCreateBody, response: { 201: TypeInfo } } },
      async (request, reply) => {
        const { spaceId } = request.params
        return reply.code(201).send(await types(engine, spaceId).createType(request.body))
      },
    )

    app.get(T_, { schema: { summary: 'One type', params: TypeParams, response: { 200: TypeInfo } } }, async (request) => {
      const { spaceId, typeId } = request.params
      return types(engine, spaceId).getType(typeId)
    })

    app.patch(
      T_,
      { schema: { summary: 'Change a user type (built-ins are frozen)', params: TypeParams, body: TypePatchBody, response: { 204: NoContent } } },
      async (request, reply) => {
        const { spaceId, typeId } = request.params
        await types(engine, spaceId).patchType(typeId, request.body)
        return reply.code(204).send()
      },
    )

    app.delete(T_, { schema: { summary: 'Not implemented (501)', params: TypeParams } }, async (request) => {
      const { spaceId, typeId } = request.params
      return types(engine, spaceId).deleteType(typeId)
    })

    // Attach / detach after creation: paths not shown by the spec (svc's choice), 501.
    app.post(`${S}/objects/:objectId/types/:typeId`, { schema: { summary: 'Attach a type after creation: not implemented (501)', params: AttachParams } }, async (request) => {
      const { spaceId, objectId, typeId } = request.params
      return types(engine, spaceId).attachType(objectId, typeId)
    })
    app.delete(`${S}/objects/:objectId/types/:typeId`, { schema: { summary: 'Detach a type: not implemented (501)', params: AttachParams } }, async (request) => {
      const { spaceId, objectId, typeId } = request.params
      return types(engine, spaceId).detachType(objectId, typeId)
    })

    // ------------------------------------------------------------ properties
    app.get(`${T_}/properties`, { schema: { summary: 'Property definitions of a type', params: TypeParams, response: { 200: PropertyList } } }, async (request) => {
      const { spaceId, typeId } = request.params
      return { properties: await types(engine, spaceId).listProperties(typeId) }
    })

    app.post(
      `${T_}/properties`,
      { schema: { summary: 'Define a property (kind explicit; one change)', params: TypeParams, body: PropertyCreateBody, response: { 201: PropId } } },
      async (request, reply) => {
        const { spaceId, typeId } = request.params
        return reply.code(201).send(await types(engine, spaceId).createProperty(typeId, request.body))
      },
    )

    app.get(`${T_}/properties/:propId`, { schema: { summary: 'One property definition', params: PropertyParams, response: { 200: PropertyDef } } }, async (request) => {
      const { spaceId, typeId, propId } = request.params
      return types(engine, spaceId).getProperty(typeId, propId)
    })

    app.patch(
      `${T_}/properties/:propId`,
      { schema: { summary: 'Set and unset definition paths (one change)', params: PropertyParams, body: SetUnsetBody, response: { 204: NoContent } } },
      async (request, reply) => {
        const { spaceId, typeId, propId } = request.params
        await types(engine, spaceId).patchProperty(typeId, propId, request.body)
        return reply.code(204).send()
      },
    )

    app.delete(
      `${T_}/properties/:propId`,
      { schema: { summary: 'Remove a property (tombstone; values stay)', params: PropertyParams, response: { 204: NoContent } } },
      async (request, reply) => {
        const { spaceId, typeId, propId } = request.params
        await types(engine, spaceId).deleteProperty(typeId, propId)
        return reply.code(204).send()
      },
    )

    // ------------------------------------------------------------ parts and dataset declarations
    app.get(`${T_}/parts`, { schema: { summary: 'Parts of a type with their datasets', params: TypeParams, response: { 200: PartList } } }, async (request) => {
      const { spaceId, typeId } = request.params
      return { parts: await types(engine, spaceId).listParts(typeId) }
    })

    app.post(
      `${T_}/parts`,
      { schema: { summary: 'Add a part and its datasets (one change)', params: TypeParams, body: PartCreateBody, response: { 201: PartCreated } } },
      async (request, reply) => {
        const { spaceId, typeId } = request.params
        return reply.code(201).send(await types(engine, spaceId).createPart(typeId, request.body))
      },
    )

    app.patch(
      `${T_}/parts/:partId`,
      { schema: { summary: 'Set and unset part fields', params: PartParams, body: SetUnsetBody, response: { 204: NoContent } } },
      async (request, reply) => {
        const { spaceId, typeId, partId } = request.params
        await types(engine, spaceId).patchPart(typeId, partId, request.body)
        return reply.code(204).send()
      },
    )

    app.delete(`${T_}/parts/:partId`, { schema: { summary: 'Remove a part and its datasets', params: PartParams, response: { 204: NoContent } } }, async (request, reply) => {
      const { spaceId, typeId, partId } = request.params
      await types(engine, spaceId).deletePart(typeId, partId)
      return reply.code(204).send()
    })

    app.post(
      `${T_}/parts/:partId/datasets`,
      { schema: { summary: 'Declare a dataset on a part', params: PartParams, body: DatasetDraftBody, response: { 201: DatasetCreated } } },
      async (request, reply) => {
        const { spaceId, typeId, partId } = request.params
        return reply.code(201).send(await types(engine, spaceId).addDataset(typeId, partId, request.body))
      },
    )

    // Declaration patch and remove: not shown by the spec (svc's choice of paths).
    app.patch(
      `${T_}/datasets/:datasetDefId`,
      {
        schema: {
          summary: 'Set and unset declaration paths (fields.<name> adds, changes or removes a field)',
          params: DatasetDeclParams,
          body: SetUnsetBody,
          response: { 204: NoContent },
        },
      },
      async (request, reply) => {
        const { spaceId, typeId, datasetDefId } = request.params
        await types(engine, spaceId).patchDataset(typeId, datasetDefId, request.body)
        return reply.code(204).send()
      },
    )

    app.delete(
      `${T_}/datasets/:datasetDefId`,
      { schema: { summary: 'Remove a dataset declaration', params: DatasetDeclParams, response: { 204: NoContent } } },
      async (request, reply) => {
        const { spaceId, typeId, datasetDefId } = request.params
        await types(engine, spaceId).deleteDataset(typeId, datasetDefId)
        return reply.code(204).send()
      },
    )

    // ------------------------------------------------------------ typed values
    app.post(
      `${S}/properties/:objectId/set/:typeKey`,
      {
        schema: { summary: 'Set property values of one type key (routed by scope)', params: PropertyValuesParams, body: PropertyValuesBody, response: { 200: PropertySetResult } },
      },
      async (request) => {
        const { spaceId, objectId, typeKey } = request.params
        return types(engine, spaceId).setValues(objectId, typeKey, request.body)
      },
    )
  }
}
