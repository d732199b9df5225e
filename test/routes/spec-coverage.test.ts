import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildAgentControlApp } from '../../server/modules/agents.ts'
import { bootApp, call, type Booted } from './helpers.ts'

/**
 * Every route the spec names (docs/spec/core.md and chat.md, the contract copied into the
 * repository) is served: each endpoint-table row, and the stream paths the Events sections name
 * in prose, is in `GET /v1/openapi.json` with its method, except the agent control API, which is
 * its own loopback listener (chat.md) and is checked on that app. Parameter names are compared
 * as placeholders (`:msgId` and `{messageId}` are the same segment). Every other route the
 * document lists is in docs/api.md's table of routes beyond the spec, with its reason.
 */
const SPEC = ['core.md', 'chat.md'].map((f) => readFileSync(join(import.meta.dirname, '..', '..', 'docs', 'spec', f), 'utf8'))
const METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE']

const S = '/v1/spaces/:spaceId'
const expand = (p: string) => p.replaceAll('{O}', `${S}/objects/:objectId`).replaceAll('{T}', `${S}/types/:typeId`).replaceAll('{S}', S)
/** Parameters as placeholders: `:name` (spec) and `{name}` (OpenAPI) alike. */
const shape = (p: string) => p.replace(/:[A-Za-z]+|\{[A-Za-z]+\}/g, '{}')

interface SpecRoute {
  method: string
  path: string
  control: boolean
}

/** The table rows `| METHOD | path | ...`, with a table's `Path (under X)` prefix, and the control API's section apart. */
function specRoutes(): SpecRoute[] {
  const out: SpecRoute[] = []
  for (const text of SPEC) {
    let prefix = ''
    let control = false
    for (const line of text.split('\n')) {
      if (line.startsWith('#')) control = /Agent control API/.test(line)
      if (!line.startsWith('|')) {
        prefix = ''
        continue
      }
      const cells = line.split('|').map((c) => c.trim())
      const under = /^Path \(under (.+)\)$/.exec(cells[2] ?? '')
      if (under) prefix = under[1]
      if (!METHODS.includes(cells[1])) continue
      out.push({ method: cells[1], path: expand(prefix + cells[2]), control })
    }
    // Streams the Events sections name in prose: windowed ones are POST (the body is the query), the others GET.
    const windowed = /Windowed query\/subscribe \(paths: ([^)]*)\)/.exec(text)
    for (const m of windowed?.[1].matchAll(/`([^`]+)`/g) ?? []) out.push({ method: 'POST', path: expand(m[1]), control: false })
    for (const m of text.matchAll(/\(`((?:\/v1|\{[SOT]\})[^`]*\/subscribe)`/g)) out.push({ method: 'GET', path: expand(m[1]), control: false })
  }
  const seen = new Set<string>()
  return out.filter((r) => {
    const k = `${r.method} ${shape(r.path)}`
    return seen.has(k) ? false : (seen.add(k), true)
  })
}

/** The table "Routes beyond the spec's tables" of docs/api.md. */
function documentedExtensions(): Array<{ method: string; path: string; why: string; reason: string }> {
  const api = readFileSync(join(import.meta.dirname, '..', '..', 'docs', 'api.md'), 'utf8')
  const start = api.indexOf("### Routes beyond the spec's tables")
  expect(start).toBeGreaterThan(0)
  const section = api.slice(start, api.indexOf('\n## ', start))
  return section
    .split('\n')
    .map((l) => l.split('|').map((c) => c.trim()))
    .filter((c) => METHODS.includes(c[1]))
    .map((c) => ({ method: c[1], path: expand(c[2].replace(/`/g, '')), why: c[3], reason: c[4] }))
}

let b: Booted
beforeAll(async () => {
  b = await bootApp()
}, 30_000)
afterAll(() => b?.close())

describe('spec route coverage', () => {
  it('every route of the spec is in the OpenAPI document with its method (the control API on its own app)', async () => {
    const routes = specRoutes()
    // The parser reads the tables: a spec page it could not read would cover nothing.
    expect(routes.filter((r) => !r.control).length).toBeGreaterThanOrEqual(117)
    expect(routes.filter((r) => r.control).length).toBe(8)
    for (const p of ['/v1/devices/query/subscribe', `${S}/members/subscribe`, `${S}/objects/:objectId/editor/:collection/markdown/append`]) {
      expect(routes.map((r) => r.path)).toContain(p)
    }

    const doc = (await call(b.app, 'GET', '/v1/openapi.json')).json<{ paths: Record<string, Record<string, unknown>> }>()
    const served = new Set(Object.entries(doc.paths).flatMap(([path, ops]) => Object.keys(ops).map((m) => `${m.toUpperCase()} ${shape(path)}`)))
    // The document does not list itself; it answers.
    const missing = routes.filter((r) => !r.control && r.path !== '/v1/openapi.json' && !served.has(`${r.method} ${shape(r.path)}`))
    expect(missing.map((r) => `${r.method} ${r.path}`)).toEqual([])

    // Every route beyond the spec's is listed, with its reason, in docs/api.md; the table names no route that is not served.
    const spec = new Set(routes.map((r) => `${r.method} ${shape(r.path)}`))
    const extra = [...served].filter((k) => !spec.has(k)).sort()
    const documented = documentedExtensions()
    expect(documented.every((d) => d.reason.length > 0 && ['extension', 'not shown'].includes(d.why))).toBe(true)
    expect(documented.map((d) => `${d.method} ${shape(d.path)}`).sort()).toEqual(extra)
    expect((await call(b.app, 'GET', '/v1/openapi.json')).statusCode).toBe(200)

    const controlApp = buildAgentControlApp(() => undefined)
    try {
      await controlApp.ready()
      const absent = routes.filter((r) => r.control && !controlApp.hasRoute({ method: r.method, url: r.path }))
      expect(absent.map((r) => `${r.method} ${r.path}`)).toEqual([])
    } finally {
      await controlApp.close()
    }
  })
})
