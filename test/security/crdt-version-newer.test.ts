import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { FastifyInstance } from 'fastify'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { accountDir, METADATA_FILE } from '../../node/account/layout.ts'
import { AccountLifecycle } from '../../node/daemon/account-lifecycle.ts'
import { DaemonHost } from '../../node/daemon/daemon-host.ts'
import { buildApp } from '../../server/app.ts'
import { stopGracefully } from '../../server/lifecycle.ts'
import { systemEnv } from '../../sync/core/env.ts'
import { CHANGE_FORMAT_VERSION } from '../../sync/dag/change.ts'
import { call, expectError, newObject, newSpace, ok } from '../routes/helpers.ts'

/*
 * Spec Versioning 2 (issue 33, 8b): an account written by a newer release (stored crdtVersion
 * above the supported one) turns the server read-only: every write answers 409
 * `sdk.crdt_version_newer`, reads keep working. Before, health said `newer: true` and
 * `POST /v1/spaces` still answered 201.
 */

/** The POSTs the spec makes reads: snapshot and live queries, aggregates, search (core.md Endpoints, Events). */
const SPEC_READS = new Set([
  'POST /v1/spaces/query',
  'POST /v1/spaces/query/subscribe',
  'POST /v1/spaces/:spaceId/query',
  'POST /v1/spaces/:spaceId/query/subscribe',
  'POST /v1/spaces/:spaceId/aggregate',
  'POST /v1/spaces/:spaceId/objects/query',
  'POST /v1/spaces/:spaceId/objects/query/subscribe',
  'POST /v1/spaces/:spaceId/objects/aggregate',
  'POST /v1/spaces/:spaceId/objects/:objectId/files/query/subscribe',
  'POST /v1/spaces/:spaceId/search',
  'POST /v1/devices/query/subscribe',
])
/** Lifecycle around the account, never a write into it (and how an owner leaves the mode: upgrade). */
const LIFECYCLE = new Set(['POST /v1/auth', 'DELETE /v1/auth', 'POST /v1/shutdown'])

let root: string
let app: FastifyInstance
let accountId: string
let spaceId: string
let objectId: string
const mutating: string[] = []

function start(): { app: FastifyInstance; session: AccountLifecycle } {
  const engine = new DaemonHost({ dataRoot: root, noMdns: true, p2p: false })
  const session = new AccountLifecycle({ dataRoot: root, mode: 'standalone', engine, env: systemEnv })
  return { app: buildApp({ session, engine }), session }
}

beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), 'svc-newer-'))
  const first = start().app
  accountId = (await ok(call(first, 'POST', '/v1/auth', {}), 201)).accountId
  spaceId = await newSpace(first, 'Written before')
  objectId = await newObject(first, spaceId, { initialProperties: { core: { name: 'kept' } } })
  await stopGracefully(first, 1000)

  // A newer release wrote this account since.
  const metaPath = join(accountDir(root, accountId), METADATA_FILE)
  const meta = JSON.parse(readFileSync(metaPath, 'utf8'))
  writeFileSync(metaPath, JSON.stringify({ ...meta, crdtVersion: CHANGE_FORMAT_VERSION + 1 }))

  app = start().app
  app.addHook('onRoute', (r) => {
    for (const m of [r.method].flat()) if (['POST', 'PUT', 'PATCH', 'DELETE'].includes(m)) mutating.push(`${m} ${r.url}`)
  })
  await ok(call(app, 'POST', '/v1/auth', { accountId }))
}, 60_000)

afterAll(async () => {
  if (app) await stopGracefully(app, 1000)
  rmSync(root, { recursive: true, force: true })
})

const fill = (url: string) =>
  url
    .replace(':spaceId', spaceId)
    .replace(':objectId', objectId)
    .replace(/:[A-Za-z]+/g, 'x')

describe('an account written by a newer release', () => {
  it('health says newer', async () => {
    expect((await ok(call(app, 'GET', '/v1/health'))).crdtVersion).toEqual({ supported: CHANGE_FORMAT_VERSION, stored: CHANGE_FORMAT_VERSION + 1, newer: true })
  })

  it('POST /v1/spaces is 409 sdk.crdt_version_newer with stored and supported, and writes nothing', async () => {
    const res = await call(app, 'POST', '/v1/spaces', { name: 'Written after' })
    expectError(res, 409, 'sdk.crdt_version_newer')
    expect(res.json().error.details).toEqual({ stored: CHANGE_FORMAT_VERSION + 1, supported: CHANGE_FORMAT_VERSION })
    expect((await ok<Array<{ name: string }>>(call(app, 'GET', '/v1/spaces'))).map((s) => s.name)).toEqual(['Written before'])
  })

  it('every mutating route that is not a read or the lifecycle answers 409 before reading its body', async () => {
    expect(mutating.length).toBeGreaterThan(50)
    const writes = mutating.filter((r) => !SPEC_READS.has(r) && !LIFECYCLE.has(r))
    const answers: Record<string, string> = {}
    for (const route of writes) {
      const [method, url] = route.split(' ') as ['POST' | 'PUT' | 'PATCH' | 'DELETE', string]
      const res = await app.inject({ method, url: fill(url), ...(method === 'DELETE' ? {} : { payload: {} }) })
      answers[route] = `${res.statusCode} ${res.statusCode === 409 ? res.json().error.code : res.body.slice(0, 80)}`
    }
    expect(answers).toEqual(Object.fromEntries(writes.map((r) => [r, '409 sdk.crdt_version_newer'])))
  })

  it('reads keep working: GETs, the query POSTs, and the lifecycle routes answer as they would', async () => {
    expect((await ok<Array<{ id: string }>>(call(app, 'GET', '/v1/spaces'))).map((s) => s.id)).toEqual([spaceId])
    const rows = await ok(call(app, 'POST', `/v1/spaces/${spaceId}/objects/query`, {}))
    expect(rows.records.map((r: { id: string }) => r.id)).toContain(objectId)
    expect((await ok(call(app, 'POST', '/v1/spaces/query', {}))).records.length).toBeGreaterThan(0)
    // Every read POST gets past the mode: a body with an unknown key fails its validation (400),
    // which runs after the read-only check, so no stream opens either.
    for (const route of mutating.filter((r) => SPEC_READS.has(r))) {
      const url = fill(route.split(' ')[1])
      const res = await app.inject({ method: 'POST', url, payload: { objectId, dataset: 'files', notAKey: 1 } })
      expect({ route, status: res.statusCode, code: res.json().error?.code }).toMatchObject({ route, status: 400 })
    }
    expect((await ok(call(app, 'POST', '/v1/auth', {}))).alreadyAuthorized).toBe(true)
    expectError(await call(app, 'POST', '/v1/shutdown'), 403, 'shutdown.not_managed')
    expectError(await call(app, 'DELETE', '/v1/auth'), 403, 'auth.not_managed')
  })
})
