import fc from 'fast-check'
import { badFilter, badIdArb, badIds, badJson, ctypes, deepArray, deepObject, HUGE, ofFamily, anyJson, scalar, seededSampler, type Sampler } from './fuzz-arbitraries.ts'
import { FAMILIES, families, METHODS, type Family, type Req, type Route, type Schema } from './fuzz-openapi.ts'

/**
 * The requests of fuzz.test.ts's "bad requests across every route": for each route, requests
 * that cannot be valid (wrong types, unknown keys, deep nesting, bad filters, huge bodies, bad
 * JSON, wrong content types, bad path ids), half-good bodies only where they are harmless (read-
 * only queries, plain GETs), then wrong methods on every path and unknown routes. The draws take
 * seeds 1, 2, ... in order, so the list is the same on every run.
 */
export function badRequests(all: Route[], fill: (r: Route, bad?: [string, string]) => string, obj: string): Req[] {
  const draws = seededSampler()
  const { sample, partial } = draws
  const pathsOf = new Map<string, Set<string>>()
  for (const r of all) {
    if (!pathsOf.has(r.template)) pathsOf.set(r.template, new Set())
    pathsOf.get(r.template)!.add(r.method)
  }

  // ---- requests: each category yields requests that cannot be valid (except readOnlyQuery/GET)
  const reqs: Req[] = []
  const json = (r: Route, body: unknown, kind: string, url = fill(r)) =>
    reqs.push({ kind, method: r.method, url, headers: { 'content-type': 'application/json' }, payload: JSON.stringify(body) })
  const raw = (r: Route, payload: string, kind: string, ctype = 'application/json') =>
    reqs.push({ kind, method: r.method, url: fill(r), headers: { 'content-type': ctype }, payload })
  const canHaveBody = (r: Route) => r.method !== 'GET'
  for (const r of all) {
    if (r.body) bodyRequests(r, r.body, { json, raw }, draws, obj)
    // Huge bodies (> 1 MB): 413 whatever the route.
    if (canHaveBody(r)) {
      for (let i = 0; i < 3; i++) raw(r, i === 0 ? `{"a":"${HUGE}"}` : i === 1 ? `[${'1,'.repeat(600_000)}1]` : `"${HUGE}"`, 'huge')
      // Bad JSON and wrong content types: the body never reaches a handler.
      for (const t of badJson) raw(r, t, 'bad-json')
      // An empty body is no body: only invalid where a body is required.
      if (r.body) raw(r, '', 'empty-json')
      for (const c of ctypes) raw(r, JSON.stringify(partial(r.body)), 'content-type', c)
    }
    // Bad ids in each path parameter (a body that may be well formed: the id cannot resolve).
    for (const p of r.params) {
      for (const junk of [...badIds, ...sample(badIdArb, 10)]) {
        const url = fill(r, [p, junk])
        if (r.body) json(r, partial(r.body), 'bad-id', url)
        else reqs.push({ kind: 'bad-id', method: r.method, url })
      }
    }
    // Plain GETs (not streams) with junk query strings: reads, so anything goes.
    if (r.method === 'GET' && !r.stream) {
      for (const q of ['?includeHidden=maybe', '?status=%00', '?limit=-1&offset=x', '?a[b]=1&a=2', `?x=${'q'.repeat(5_000)}`, '?%zz=1'])
        reqs.push({ kind: 'get-query', method: 'GET', url: fill(r) + q })
    }
  }
  // Wrong methods on every path (with and without a body).
  for (const [template, methods] of pathsOf) {
    const r = all.find((x) => x.template === template)!
    for (const m of METHODS) {
      if (methods.has(m)) continue
      reqs.push({ kind: 'wrong-method', method: m, url: fill(r) })
      if (m !== 'GET') reqs.push({ kind: 'wrong-method', method: m, url: fill(r), headers: { 'content-type': 'application/json' }, payload: '{"zzUnknown":1}' })
    }
  }
  // Unknown routes.
  for (const u of ['/', '/v2/spaces', '/v1', '/v1/spaces/x/y/z/w', '/v1/%00', `/v1/${'n'.repeat(10_000)}`, '/v1/openapi.json/x']) {
    for (const m of METHODS) reqs.push({ kind: 'unknown-route', method: m, url: u })
  }
  return reqs
}

/** Where the requests go as they are made: a JSON body, or a raw payload with a content type. */
interface Emit {
  json(r: Route, body: unknown, kind: string, url?: string): void
  raw(r: Route, payload: string, kind: string, ctype?: string): void
}

/** The requests a route with a body gets: wrong types, unknown keys, deep nesting, bad filters, and half-good bodies on read-only queries. */
function bodyRequests(r: Route, body: Schema, { json, raw }: Emit, { one, partial }: Sampler, obj: string): void {
  const typed = Object.entries(body.properties ?? {})
    .map(([k, s]) => [k, families(s)] as const)
    .filter((x): x is readonly [string, Set<Family>] => !!x[1])
  // Wrong types: one declared field gets a JSON type its schema does not allow.
  for (let i = 0; i < 20; i++) {
    const base = partial(body)
    if (typed.length > 0 && i % 4 !== 3) {
      const [k, fam] = one(fc.constantFrom(...typed))
      const wrong = FAMILIES.filter((f) => !fam.has(f))
      base[k] = one(ofFamily(one(fc.constantFrom(...wrong))))
      json(r, base, 'wrong-type')
    } else {
      // The body itself of the wrong type (every body schema is an object).
      json(r, one(fc.oneof(ofFamily('array'), ofFamily('string'), ofFamily('number'), fc.constant(null), fc.boolean())), 'wrong-type-body')
    }
  }
  // Unknown keys: strict routes answer request.unknown_field.
  if (r.strict) {
    for (let i = 0; i < 12; i++) {
      const base = partial(body)
      base[`zz${one(fc.stringMatching(/^[a-zA-Z0-9_$.]{0,12}$/))}`] = one(anyJson)
      if (i % 3 === 0) base['__fuzz unknown'] = 1
      json(r, base, 'unknown-key')
    }
  }
  // Deep nesting, where no deep value can be valid: a mistyped declared field, an unknown key, or the whole body.
  for (const depth of [64, 1_000, 10_000, 100_000]) {
    const nestedArr = deepArray(depth)
    raw(r, nestedArr, 'deep-body')
    const objField = typed.find(([, f]) => !f.has('array'))
    if (objField) raw(r, `{"${objField[0]}":${nestedArr}}`, 'deep-field')
    const arrField = typed.find(([, f]) => !f.has('object'))
    if (arrField) raw(r, `{"${arrField[0]}":${deepObject(Math.min(depth, 50_000))}}`, 'deep-field')
    if (r.strict) raw(r, `{"zzDeep":${deepObject(Math.min(depth, 50_000))}}`, 'deep-unknown')
  }
  // Filters: invalid by construction (any route whose body declares one).
  if (body.properties?.filter) {
    for (let i = 0; i < 60; i++) json(r, { ...partial(body), filter: one(badFilter) }, 'bad-filter')
    raw(r, `{"filter":${deepObject(5_000)}}`, 'deep-filter')
  }
  // Half-good bodies (may be valid): read-only queries only.
  if (r.readOnlyQuery && !r.stream) {
    for (let i = 0; i < 40; i++) {
      const f = one(
        fc.dictionary(
          fc.constantFrom('a', 'core.name', 'core.types', 'id', '_ver.id', 'x.0'),
          fc.oneof(scalar, fc.dictionary(fc.constantFrom('$eq', '$ne', '$gt', '$in', '$exists', '$text', '$size'), anyJson, { maxKeys: 2 })),
          { maxKeys: 3 },
        ),
      )
      json(r, { ...partial(body), filter: f, objectId: obj, dataset: 'd', limit: one(fc.integer({ min: 0, max: 5 })) }, 'half-good')
    }
  }
}
