import type { FastifyInstance, FastifyRequest, RouteOptions } from 'fastify'
import { SvcError } from '../../sync/core/errors.ts'

/**
 * Read-only mode (spec Versioning 2): when the booted account was written by a newer release
 * (`crdtVersion.newer`), every route that changes something answers 409
 * `sdk.crdt_version_newer` and reads keep working. One hook decides for every route, so a
 * route added later is refused by default instead of writing data this release may not
 * understand.
 *
 * "Changes something" is the method: POST, PUT, PATCH and DELETE, except
 * - routes marked `config.reads` (a POST whose body is a query): their own file sets it, or the
 *   list below names them, for routes in files of other modules;
 * - `public` routes (auth and shutdown): they start and stop the server around the account,
 *   they never write into it, and the owner needs them to leave read-only mode (an upgrade).
 * Local cache work (pin, offload, free, sweep) is refused too: it decides what to delete from
 * records it reads, and records of a newer format may reference blocks it cannot see.
 */

/** `METHOD /registered/pattern` of routes of other files that only read (spec: snapshot and live queries, aggregates, search). */
export const READ_ROUTES: ReadonlySet<string> = new Set([
  'POST /v1/spaces/query',
  'POST /v1/spaces/query/subscribe',
  'POST /v1/spaces/:spaceId/query',
  'POST /v1/spaces/:spaceId/query/subscribe',
  'POST /v1/spaces/:spaceId/aggregate',
  'POST /v1/spaces/:spaceId/objects/query',
  'POST /v1/spaces/:spaceId/objects/query/subscribe',
  'POST /v1/spaces/:spaceId/objects/aggregate',
  'POST /v1/spaces/:spaceId/search',
])

const MUTATING = new Set(['POST', 'PUT', 'PATCH', 'DELETE'])

export interface ReadOnlyState {
  /** The booted account's stored version and the one this release writes; undefined while unauthorized. */
  crdtVersion(): { supported: number; stored: number | null; newer: boolean }
}

/** Marks the listed routes as reads as they register (an onRoute hook on the root instance). */
export function markReadRoutes(route: RouteOptions): void {
  const methods = Array.isArray(route.method) ? route.method : [route.method]
  if (!methods.every((m) => READ_ROUTES.has(`${m.toUpperCase()} ${route.url}`))) return
  route.config = { ...route.config, reads: true }
}

/** Whether a registered route keeps answering in read-only mode. */
export function servesReadOnly(method: string, config: { reads?: boolean; public?: boolean } | undefined): boolean {
  return !MUTATING.has(method.toUpperCase()) || config?.reads === true || config?.public === true
}

/** onRequest hook, after the auth gate: refuses a write before its body is read. */
export function readOnlyGuard(state: ReadOnlyState) {
  return async (request: FastifyRequest): Promise<void> => {
    if (request.routeOptions.url === undefined || request.is404) return
    if (servesReadOnly(request.method, request.routeOptions.config)) return
    const v = state.crdtVersion()
    if (!v.newer) return
    throw new SvcError('sdk.crdt_version_newer', 'this account was written by a newer release; this server is read-only', { stored: v.stored, supported: v.supported })
  }
}

/** Installs both on the root app (before any route registers). */
export function installReadOnly(app: FastifyInstance, state: ReadOnlyState): void {
  app.addHook('onRoute', markReadRoutes)
  app.addHook('onRequest', readOnlyGuard(state))
}
