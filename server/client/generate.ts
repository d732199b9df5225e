import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import openapiTS, { astToString, type OpenAPI3 } from 'openapi-typescript'
import { AccountLifecycle } from '../../node/daemon/account-lifecycle.ts'
import { DaemonHost } from '../../node/daemon/daemon-host.ts'
import { systemEnv } from '../../sync/core/env.ts'
import { buildApp } from '../app.ts'

/** Where the generated types live (committed, so scripts and the CLI need no build step). */
export const API_TYPES_FILE = fileURLToPath(new URL('./api-types.ts', import.meta.url))

const HEADER = `/**
 * Generated from GET /v1/openapi.json by server/client/generate.ts (npm run gen:client).
 * Do not edit: regenerate after changing a route's schema. test/cli/client-types.test.ts fails
 * when this file differs from what the current app's OpenAPI document generates.
 */
`

/**
 * The OpenAPI document of the release's app (every module's routes), read without booting an
 * account or opening a socket: the routes are registered when the app is built.
 */
export async function currentOpenApiDocument(): Promise<OpenAPI3> {
  const root = mkdtempSync(join(tmpdir(), 'svc-openapi-'))
  const engine = new DaemonHost({ dataRoot: root, noMdns: true, p2p: false })
  const session = new AccountLifecycle({ dataRoot: root, mode: 'standalone', engine, env: systemEnv })
  const app = buildApp({ session, engine, version: '0.0.0' })
  try {
    const res = await app.inject({ method: 'GET', url: '/v1/openapi.json' })
    if (res.statusCode !== 200) throw new Error(`GET /v1/openapi.json answered ${res.statusCode}`)
    return res.json<OpenAPI3>()
  } finally {
    await app.close()
    rmSync(root, { recursive: true, force: true })
  }
}

/** The TypeScript source openapi-typescript makes of `doc` (paths, operations, components). */
export async function generateApiTypes(doc: OpenAPI3): Promise<string> {
  const ast = await openapiTS(doc, { alphabetize: true })
  return HEADER + astToString(ast)
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  writeFileSync(API_TYPES_FILE, await generateApiTypes(await currentOpenApiDocument()))
  process.stdout.write(`wrote ${API_TYPES_FILE}\n`)
}
