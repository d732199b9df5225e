import createClient, { type Client } from 'openapi-fetch'
import type { paths } from './api-types.ts'

export type { paths, components, operations } from './api-types.ts'

/** The daemon's default base URL (`svc serve` without `--port`). */
export const DEFAULT_BASE_URL = 'http://127.0.0.1:7001'

export interface SvcClientOptions {
  /** Base URL without `/v1`, e.g. `http://127.0.0.1:7001` (the first line `svc serve` prints). */
  baseUrl?: string
  /** Managed servers: the control token, sent as `X-Svc-Control-Token`. */
  controlToken?: string
  /** Another fetch (tests, proxies). */
  fetch?: (input: Request) => Promise<Response>
}

/** A typed client of the svc HTTP API: every path, parameter and body checked by TypeScript. */
export type SvcClient = Client<paths>

/**
 * Creates a typed client (openapi-fetch over the types generated from `GET /v1/openapi.json`).
 * Each call resolves to `{data, error, response}`: `error` is the envelope `{error: {code,
 * message, details?}}` on a non-2xx; a refused connection rejects.
 */
export function createSvcClient(opts: SvcClientOptions = {}): SvcClient {
  return createClient<paths>({
    baseUrl: (opts.baseUrl ?? DEFAULT_BASE_URL).replace(/\/+$/, ''),
    headers: opts.controlToken ? { 'x-svc-control-token': opts.controlToken } : {},
    ...(opts.fetch ? { fetch: opts.fetch } : {}),
  })
}
