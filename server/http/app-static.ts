import type { FastifyInstance, FastifyReply } from 'fastify'
import { existsSync } from 'node:fs'
import { readFile } from 'node:fs/promises'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { SvcError } from '../../sync/core/errors.ts'

/**
 * The web app's files (scripts/build-app.ts builds them into dist/app), served from the API's
 * own origin at `/` and `/app/*`. They are the only active content this origin ever serves;
 * their answers carry the app's strict CSP (content-policy.ts APP_CSP, set by security.ts
 * passiveHeaders for routes marked `webApp`) in place of the sandbox every other answer gets.
 */
const here = dirname(fileURLToPath(import.meta.url))
/**
 * Where the built app is: dist/app beside dist/cli when this runs compiled (dist/cli/*.js), or
 * under the repository root when it runs from the sources (server/http/).
 */
export const DEFAULT_APP_DIR =
  [join(here, '..', 'app'), join(here, '..', '..', 'dist', 'app')].find((d) => existsSync(join(d, 'index.html'))) ?? join(here, '..', '..', 'dist', 'app')

/** The app's files and their types; nothing else under the directory is served. */
const FILES: Record<string, string> = {
  'index.html': 'text/html; charset=utf-8',
  'app.js': 'text/javascript; charset=utf-8',
  'app.css': 'text/css; charset=utf-8',
}

export function webAppRoutes(opts: { dir?: string } = {}) {
  const dir = opts.dir ?? DEFAULT_APP_DIR
  const cache = new Map<string, Buffer>()
  const load = async (name: string): Promise<Buffer> => {
    const hit = cache.get(name)
    if (hit) return hit
    const body = await readFile(join(dir, name)).catch((err: unknown) => {
      if ((err as { code?: string }).code === 'ENOENT') {
        throw new SvcError('sdk.not_found', 'the web app is not built here: run `npm run build:app`')
      }
      throw err
    })
    cache.set(name, body)
    return body
  }
  const send = async (reply: FastifyReply, name: string) =>
    reply
      .header('content-type', FILES[name])
      .header('x-frame-options', 'DENY')
      .header('referrer-policy', 'no-referrer')
      .header('cross-origin-opener-policy', 'same-origin')
      .header('cache-control', 'no-cache')
      .send(await load(name))

  return async (app: FastifyInstance) => {
    const config = { public: true, whileSpaceLoads: true, webApp: true }
    app.get('/', { config, schema: { hide: true } }, (_req, reply) => send(reply, 'index.html'))
    app.get<{ Params: { file: string } }>('/app/:file', { config, schema: { hide: true } }, (req, reply) => {
      const name = req.params.file
      if (!Object.hasOwn(FILES, name) || name === 'index.html') throw new SvcError('sdk.not_found', 'no such file of the web app')
      return send(reply, name)
    })
  }
}
