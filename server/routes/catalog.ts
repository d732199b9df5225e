import type { FastifyInstance } from 'fastify'
import { getUsecase, listUsecases, setupUsecase } from '../../sync/space/catalog/index.ts'
import { SetupBody, SetupResult, Usecase, UsecaseList, UsecaseParams } from '../schemas/bundles.ts'
import { bundlesIn } from './bundles.ts'
import type { RouteHost } from './context.ts'
import { typed } from '../http/type-provider.ts'
import { asProcess } from '../http/processes.ts'

/** Spec "Bundles and catalog", the `/v1/catalog` half. Usecases: sync/space/catalog/usecases.ts. */
export function catalogRoutes(engine: RouteHost) {
  return async (root: FastifyInstance) => {
    const app = typed(root)
    app.get('/v1/catalog', { schema: { summary: 'Well-known system: bundles grouped by usecase', response: { 200: UsecaseList } } }, async () => ({ usecases: listUsecases() }))

    app.get('/v1/catalog/:usecaseId', { schema: { summary: 'One usecase', params: UsecaseParams, response: { 200: Usecase } } }, async (request) => {
      return getUsecase(request.params.usecaseId)
    })

    app.post(
      '/v1/catalog/:usecaseId/setup',
      { schema: { summary: 'Set a usecase up in a space (dependencies first; idempotent)', params: UsecaseParams, body: SetupBody, response: { 200: SetupResult } } },
      async (request) => {
        const { usecaseId } = request.params
        getUsecase(usecaseId)
        return asProcess(engine, `bundle.install.${request.body.spaceId}`, 'bundle.install', () => setupUsecase(bundlesIn(engine, request.body.spaceId), usecaseId))
      },
    )
  }
}
