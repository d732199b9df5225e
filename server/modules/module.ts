import type { FastifyPluginAsync } from 'fastify'
import type { AnyModule, SvcModule } from '../../sync/space/module.ts'
import type { RouteHost } from '../routes/context.ts'
import type { ModuleErrorStatus } from '../errors.ts'

/**
 * A module as the HTTP app serves it: the module itself (sync/space/module.ts) plus its routes
 * plugin. It *is* a SvcModule, so one list goes to both the account engine (DaemonHost
 * `modules`) and `buildApp({modules})`.
 */
export interface ServerModule<S = unknown, A = unknown> extends SvcModule<S, A> {
  /** Registered with `{engine}` once an engine serves the app; no route list names a module. */
  readonly routes?: FastifyPluginAsync<ModuleRouteOptions>
  /** The module's own error codes (declared in its sync folder) with their HTTP statuses. */
  readonly errorStatus?: ModuleErrorStatus
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type AnyServerModule = ServerModule<any, any> & AnyModule

/** The options every module's routes plugin gets. */
export interface ModuleRouteOptions {
  engine: RouteHost
}

/** A module with its routes plugin and the statuses of its error codes. */
export function withRoutes<S, A>(module: SvcModule<S, A>, routes?: FastifyPluginAsync<ModuleRouteOptions>, errorStatus?: ModuleErrorStatus): ServerModule<S, A> {
  return { ...module, ...(routes ? { routes } : {}), ...(errorStatus ? { errorStatus } : {}) }
}
