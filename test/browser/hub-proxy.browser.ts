/**
 * docs/hub.md "Web pages: WebSockets behind a TLS reverse proxy (wss)", run for real: the nginx
 * site the document shows (read from the document itself, with this test's port, certificate
 * and upstream substituted), Debian's nginx, a self-signed certificate made with openssl, a real
 * `svc hub` with WebSockets on loopback, and Chromium trusting exactly that certificate (by its
 * key's hash). The page knows only the proxy's wss address; it adds the hub there, the hub
 * proves its identity, admits the page's account and keeps its space, and a head-sync round
 * about the space completes.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { spawn, spawnSync, type ChildProcess } from 'node:child_process'
import { createHash, X509Certificate } from 'node:crypto'
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Page } from 'playwright-core'
import { accountKeyFromMnemonic, identityOf, newMnemonic } from '../../sync/crypto/keys.ts'
import { systemEnv } from '../../sync/core/env.ts'
import { REPO } from '../server/process.ts'
import { until } from '../e2e/daemons.ts'
import { HubFleet, type HubProc } from '../e2e/hub-process.ts'
import { browserFixture } from './harness.ts'

/** Debian's nginx unless SVC_NGINX names another (CI installs the package: .ci/run). */
const NGINX = process.env.SVC_NGINX || '/usr/sbin/nginx'

/** The nginx site docs/hub.md shows: the first `nginx` block after its wss heading. */
function documentedSite(): string {
  const doc = readFileSync(join(REPO, 'docs', 'hub.md'), 'utf8')
  const at = doc.indexOf('### Web pages: WebSockets behind a TLS reverse proxy (wss)')
  const m = at < 0 ? null : /```nginx[^\n]*\n([\s\S]*?)```/.exec(doc.slice(at))
  if (!m) throw new Error('docs/hub.md has no nginx site under its wss heading')
  return m[1]
}

/** Replaces one exact piece of the documented site; throws if the document no longer has it. */
function substitute(site: string, from: string, to: string): string {
  if (!site.includes(from)) throw new Error(`the documented nginx site no longer contains ${JSON.stringify(from)}`)
  return site.split(from).join(to)
}

async function freePort(): Promise<number> {
  const s = createServer()
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r))
  const { port } = s.address() as { port: number }
  await new Promise<void>((r) => s.close(() => r()))
  return port
}

const hubs = new HubFleet()
let dir: string
let hub: HubProc
let nginx: ChildProcess | undefined
let nginxErr = ''
let port: number
let mnemonic: string
let fx: Awaited<ReturnType<typeof browserFixture>>
let page: Page
let errors: string[] = []

const app = <T>(fn: string, ...args: unknown[]): Promise<T> => page.evaluate(([fn, args]) => (window as any).app[fn](...args), [fn, args] as const) as Promise<T>
const explain = (e: unknown) => {
  throw new Error(`${(e as Error).message}\npage errors:\n${errors.join('\n')}\nnginx:\n${nginxErr.slice(-3000)}\nhub stderr:\n${hub.proc.stderr().slice(-3000)}`)
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'svc-hub-proxy-'))
  mnemonic = newMnemonic(systemEnv)
  const account = identityOf(accountKeyFromMnemonic(mnemonic).publicKey)
  hub = await hubs.start(['--allow', account], { listen: '/ip4/127.0.0.1/tcp/0,/ip4/127.0.0.1/tcp/0/ws' })
  const upstream = /\/ip4\/127\.0\.0\.1\/tcp\/(\d+)\/ws/.exec(hub.ws)?.[1]
  expect(upstream).toBeDefined()

  // A self-signed certificate for localhost; Chromium trusts its key and nothing else.
  const cert = join(dir, 'cert.pem')
  const key = join(dir, 'key.pem')
  const ssl = spawnSync(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:prime256v1',
      '-nodes',
      '-days',
      '2',
      '-subj',
      '/CN=localhost',
      '-addext',
      'subjectAltName=DNS:localhost',
      '-keyout',
      key,
      '-out',
      cert,
    ],
    { encoding: 'utf8' },
  )
  if (ssl.status !== 0) throw new Error(`openssl failed: ${ssl.error?.message ?? ssl.stderr}`)
  const spki = createHash('sha256')
    .update(new X509Certificate(readFileSync(cert)).publicKey.export({ type: 'spki', format: 'der' }))
    .digest('base64')

  // The documented site, inside the smallest nginx.conf that runs it as a foreground process.
  port = await freePort()
  let site = documentedSite()
  site = substitute(site, 'listen 443 ssl;', `listen 127.0.0.1:${port} ssl;`)
  site = substitute(site, '/etc/letsencrypt/live/hub.example.org/fullchain.pem', cert)
  site = substitute(site, '/etc/letsencrypt/live/hub.example.org/privkey.pem', key)
  site = substitute(site, 'http://127.0.0.1:4412', `http://127.0.0.1:${upstream}`)
  mkdirSync(join(dir, 'tmp'))
  const conf = join(dir, 'nginx.conf')
  writeFileSync(
    conf,
    `daemon off;
master_process off;
pid ${dir}/nginx.pid;
error_log stderr warn;
events { worker_connections 64; }
http {
  access_log ${dir}/access.log;
  client_body_temp_path ${dir}/tmp/body;
  proxy_temp_path ${dir}/tmp/proxy;
  fastcgi_temp_path ${dir}/tmp/fastcgi;
  uwsgi_temp_path ${dir}/tmp/uwsgi;
  scgi_temp_path ${dir}/tmp/scgi;
${site}
}
`,
  )
  const args = ['-e', 'stderr', '-p', dir, '-c', conf]
  const check = spawnSync(NGINX, ['-t', ...args], { encoding: 'utf8' })
  if (check.status !== 0) throw new Error(`nginx -t refused the documented site (${NGINX}): ${check.error?.message ?? check.stderr}`)
  nginx = spawn(NGINX, args, { stdio: ['ignore', 'ignore', 'pipe'] })
  nginx.stderr!.on('data', (b: Buffer) => (nginxErr += b.toString()))
  await until(
    'nginx listens',
    () =>
      new Promise<boolean>((resolve) => {
        const s = createServer()
        s.once('error', () => resolve(true))
        s.listen(port, '127.0.0.1', () => s.close(() => resolve(false)))
      }),
    30_000,
    100,
  ).catch((e: unknown) => {
    throw new Error(`${(e as Error).message}: ${nginxErr}`)
  })

  fx = await browserFixture({ chromiumArgs: [`--ignore-certificate-errors-spki-list=${spki}`] })
}, 180_000)

afterAll(async () => {
  if (page) await app('close').catch(() => undefined)
  await fx?.close()
  if (nginx && nginx.exitCode === null) nginx.kill('SIGKILL')
  hubs.close()
  if (dir) rmSync(dir, { recursive: true, force: true })
})

describe('the documented nginx site puts the hub behind wss (real nginx, real Chromium)', () => {
  it('a page that knows only the proxy’s wss address adds the hub there and completes a head-sync round with it', async () => {
    ;({ page, errors } = await fx.page('index.html'))
    await app('restore', mnemonic)
    const spaceId = await app<string>('createSpace', 'Behind the proxy')
    const addr = `/dns4/localhost/tcp/${port}/tls/ws/p2p/${hub.peerId}`
    const t0 = Date.now()
    const added = await app<any>('addHub', addr).catch(explain)
    // The hub proved its identity through the proxy (Noise runs end to end) and admits the account.
    expect(added).toMatchObject({ peerId: hub.peerId, identity: hub.identity, admission: 'ok', connected: true })
    await until(
      'the hub keeps the space and a round about it completed',
      async () => (await app<any[]>('hubs'))[0].spaces.some((s: any) => s.spaceId === spaceId && s.state === 'kept' && s.lastSyncAt !== null),
      30_000,
      100,
    ).catch(async (e: unknown) => explain(new Error(`${(e as Error).message}: ${JSON.stringify(await app('hubs'))}`)))
    const rounds = await app<Array<{ ok: boolean; outcome: string }>>('syncNow', spaceId)
    expect(rounds).toEqual([expect.objectContaining({ ok: true })])
    console.log(`through nginx (wss): hub added, space kept and synced in ${Date.now() - t0} ms`)
    const health = await (await fetch(`${hub.operator}/health`)).json()
    expect(health.changesStored).toBeGreaterThan(0)

    // The socket was nginx's: its access log records the upgrade once the page lets go.
    await app('close')
    await until('nginx logged the WebSocket upgrade', async () => / 101 /.test(readFileSync(join(dir, 'access.log'), 'utf8')), 10_000, 100).catch(explain)
  })
})
