/**
 * The routes of the booted app's OpenAPI document as the fuzz test (fuzz.test.ts) sees them:
 * each route's method, path template, parameters and body schema, and the JSON types a schema
 * admits; and the shape of one request the test sends.
 */

export type Schema = {
  type?: string | string[]
  anyOf?: Schema[]
  oneOf?: Schema[]
  properties?: Record<string, Schema>
  required?: string[]
  items?: Schema
  additionalProperties?: unknown
  enum?: unknown[]
  const?: unknown
}
export interface Route {
  method: string
  template: string
  params: string[]
  body?: Schema
  strict: boolean
  /** Read-only POST queries: half-good (possibly valid) bodies are harmless there. */
  readOnlyQuery: boolean
  /** Streams (SSE): a valid request would never end, so only invalid ones are sent. */
  stream: boolean
}
export interface Req {
  kind: string
  method: string
  url: string
  headers?: Record<string, string>
  payload?: string
}

export const METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'] as const
export const FAMILIES = ['string', 'number', 'boolean', 'object', 'array', 'null'] as const
export type Family = (typeof FAMILIES)[number]

/** The JSON families a schema admits, or undefined when it admits anything. */
export function families(s: Schema | undefined): Set<Family> | undefined {
  if (!s) return undefined
  if (s.anyOf || s.oneOf) {
    const out = new Set<Family>()
    for (const b of (s.anyOf ?? s.oneOf)!) {
      const f = families(b)
      if (!f) return undefined
      for (const x of f) out.add(x)
    }
    return out
  }
  if (s.type === undefined) return undefined
  const out = new Set<Family>()
  for (const t of Array.isArray(s.type) ? s.type : [s.type]) out.add(t === 'integer' ? 'number' : (t as Family))
  return out
}

export function routesFrom(openapi: { paths: Record<string, Record<string, any>> }): Route[] {
  const out: Route[] = []
  for (const [path, ops] of Object.entries(openapi.paths)) {
    for (const [m, op] of Object.entries(ops)) {
      const method = m.toUpperCase()
      if (!(METHODS as readonly string[]).includes(method)) continue
      const template = path
      const params = [...path.matchAll(/\{([^}]+)\}/g)].map((x) => x[1])
      const body = op.requestBody?.content?.['application/json']?.schema as Schema | undefined
      const stream = /subscribe$/.test(path) || JSON.stringify(op.responses ?? {}).includes('text/event-stream')
      const readOnlyQuery = method === 'POST' && /\/query$/.test(path)
      out.push({ method, template, params, body, strict: op['x-strict'] === true, readOnlyQuery, stream })
    }
  }
  return out
}
