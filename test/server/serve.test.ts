import { spawn } from 'node:child_process'
import { existsSync, readFileSync, rmSync } from 'node:fs'
import { createServer, request, type Server } from 'node:http'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { main } from '../../server/cli/dispatch.ts'
import { decodeWallet } from '../../sync/crypto/wallet.ts'
import { tempRoot } from './helpers.ts'
import { memoryIO, REPO, serve, spawnSvc, stop, type Served } from './process.ts'

const running: Served[] = []
const roots: string[] = []
afterEach(async () => {
  for (const s of running.splice(0)) await stop(s)
  for (const r of roots.splice(0)) rmSync(r, { recursive: true, force: true })
})

function root(): string {
  const r = tempRoot()
  roots.push(r)
  return r
}

async function start(args: string[], opts: { stdin?: string } = {}): Promise<Served> {
  const s = await serve(args, opts)
  running.push(s)
  return s
}

function listen(port: number): Promise<Server> {
  return new Promise((resolve, reject) => {
    const srv = createServer()
    srv.once('error', reject)
    srv.listen(port, '127.0.0.1', () => resolve(srv))
  })
}

/** A free port whose +9 is free too (the API's and its agent control API's). */
async function freePortPair(): Promise<number> {
  for (;;) {
    const s = await listen(0)
    const port = (s.address() as { port: number }).port
    s.close()
    if (port + 9 > 65535) continue
    const other = await listen(port + 9).catch(() => undefined)
    if (!other) continue
    other.close()
    return port
  }
}

async function waitFor(cond: () => boolean, ms = 20_000): Promise<void> {
  const end = Date.now() + ms
  while (!cond()) {
    if (Date.now() > end) throw new Error('timed out')
    await new Promise((r) => setTimeout(r, 50))
  }
}

/** Runs the bundled client in-process: exit code and output. */
async function svc(args: string[], stdin = '') {
  const m = memoryIO(stdin)
  const code = await main(args, m.io)
  return { code, out: m.out(), err: m.err(), json: () => JSON.parse(m.out()) }
}

describe('svc serve (real processes)', () => {
  it('standalone: prints the URL, runs the auth lifecycle, stops on SIGTERM, boots the account at the next start', async () => {
    const data = root()
    const s = await start(['--data', data])
    expect(s.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/)

    const health = await svc(['health', '--url', s.url])
    expect(health.code).toBe(0)
    expect(health.json()).toMatchObject({ status: 'ok', account: '' })

    const created = await svc(['auth', 'create', '--url', s.url])
    expect(created.code).toBe(0)
    const { accountId, mnemonic } = created.json()
    expect(mnemonic.split(' ')).toHaveLength(12)
    expect((await svc(['auth', 'status', '--url', s.url])).json()).toMatchObject({ authorized: true, accountId, mode: 'standalone' })

    // standalone refuses logout and HTTP shutdown: 4xx is exit 1
    const logout = await svc(['auth', 'logout', '--url', s.url])
    expect(logout.code).toBe(1)
    expect(logout.err).toContain('auth.not_managed')
    expect((await svc(['shutdown', '--url', s.url])).code).toBe(1)

    const lock = join(data, 'accounts', accountId, 'lock')
    expect(existsSync(lock)).toBe(true)
    expect(await stop(s)).toBe(0)
    expect(existsSync(lock)).toBe(false)

    const again = await start(['--data', data])
    expect(again.stderr()).toContain(`account ${accountId} booted`)
    expect((await svc(['health', '--url', again.url])).json().account).toBe(accountId)
    const restored = await svc(['auth', 'restore', '--url', again.url], `${mnemonic}\n`)
    expect(restored.code).toBe(0)
    expect(restored.json()).toEqual({ accountId, created: false, alreadyAuthorized: true })
  })

  it('a second svc serve on the data directory of a running one exits 1 naming auth.account_in_use and the pid (issue 39)', async () => {
    const data = root()
    const a = await start(['--data', data])
    const { mnemonic } = (await svc(['auth', 'create', '--url', a.url])).json()

    // Standalone, it would take the account on disk: it cannot, and says so instead of running
    // unauthorized on another port.
    const b = spawnSvc(['serve', '--port', '0', '--no-mdns', '--data', data])
    expect(await b.exited).toBe(1)
    expect(b.stdout()).toBe('')
    expect(b.stderr()).toContain('auth.account_in_use')
    expect(b.stderr()).toContain(`pid ${a.proc.pid}`)
    expect(b.stderr()).not.toContain('auth create')

    // Two servers share a data root when they serve different accounts (spec Authentication 6):
    // a managed one starts, is refused the running account (409, details.pid), takes a new one.
    const m = await start(['--data', data, '--managed'])
    const res = await fetch(`${m.url}/v1/auth`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-svc-control-token': m.token! },
      body: JSON.stringify({ mnemonic }),
    })
    expect(res.status).toBe(409)
    expect(await res.json()).toEqual({ error: { code: 'auth.account_in_use', message: expect.any(String), details: { pid: a.proc.pid } } })
    expect((await svc(['auth', 'create', '--url', m.url, '--token', m.token!])).code).toBe(0)
  })

  it('two daemons get agent control ports of their own: the API port + 9, any free one when that is taken (issue 39)', async () => {
    const [p1, p2] = [await freePortPair(), await freePortPair()]
    const a = await start(['--data', root(), '--port', String(p1)])
    await waitFor(() => a.stderr().includes('agent control API on'))
    expect(a.stderr()).toContain(`agent control API on http://127.0.0.1:${p1 + 9}`)
    // svc agents finds it from the daemon's URL: reachable (401 until an account boots), not exit 3
    const election = await svc(['agents', 'election', '--url', a.url])
    expect(election.err).toContain('auth.required')
    expect(election.code).toBe(1)

    const squatter = await listen(p2 + 9)
    try {
      const b = await start(['--data', root(), '--port', String(p2)])
      await waitFor(() => b.stderr().includes('agent control API on'))
      expect(b.stderr()).toContain(`agent control port ${p2 + 9} is taken`)
      const cport = Number(/agent control API on http:\/\/127\.0\.0\.1:(\d+)/.exec(b.stderr())![1])
      expect([p1 + 9, p2 + 9]).not.toContain(cport)
      expect((await svc(['agents', 'election', '--control', `http://127.0.0.1:${cport}`])).err).toContain('auth.required')
    } finally {
      squatter.close()
    }
  })

  it('managed: prints a control token; auth and shutdown need it; shutdown stops the process with 0', async () => {
    const data = root()
    const s = await start(['--data', data, '--managed'])
    expect(s.token).toMatch(/^[0-9a-f]{64}$/)

    const noToken = await svc(['auth', 'create', '--url', s.url])
    expect(noToken.code).toBe(1)
    expect(noToken.err).toContain('control.forbidden')
    const created = await svc(['auth', 'create', '--url', s.url, '--token', s.token!])
    expect(created.code).toBe(0)
    const { accountId } = created.json()

    expect((await svc(['auth', 'logout', '--url', s.url, '--token', 'wrong'])).code).toBe(1)
    expect((await svc(['auth', 'logout', '--url', s.url, '--token', s.token!])).code).toBe(0)
    expect((await svc(['auth', 'status', '--url', s.url])).json()).toMatchObject({ authorized: false, mode: 'managed' })
    expect(existsSync(join(data, 'accounts', accountId, 'lock'))).toBe(false)

    expect((await fetch(`${s.url}/v1/shutdown`, { method: 'POST' })).status).toBe(403)
    expect((await svc(['shutdown', '--url', s.url, '--token', s.token!])).code).toBe(0)
    expect(await s.exited).toBe(0)
  })

  it('SIGTERM drains an open stream: it receives closed server_shutdown, the process exits 0', async () => {
    const data = root()
    const s = await start(['--data', data])
    const { accountId } = (await svc(['auth', 'create', '--url', s.url])).json()
    let text = ''
    const ended = new Promise<void>((resolve, reject) => {
      request(`${s.url}/v1/identities/subscribe`, (res) => {
        res.setEncoding('utf8')
        res.on('data', (c: string) => {
          const first = !text.includes('event: ready')
          text += c
          if (first && text.includes('event: ready')) s.proc.kill('SIGTERM')
        })
        res.on('end', resolve)
      })
        .on('error', reject)
        .end()
    })
    await ended
    expect(text).toBe('event: ready\ndata: {}\n\nevent: closed\ndata: {"reason":"server_shutdown"}\n\n')
    expect(await s.exited).toBe(0)
    expect(existsSync(join(data, 'accounts', accountId, 'lock'))).toBe(false)
  })

  it('--passkey-stdin seals the wallet with the passkey read from stdin', async () => {
    const data = root()
    const s = await start(['--data', data, '--passkey-stdin'], { stdin: 'correct horse\n' })
    const { accountId } = (await svc(['auth', 'create', '--url', s.url])).json()
    const wallet = readFileSync(join(data, 'accounts', accountId, 'wallet.json'), 'utf8')
    expect(() => decodeWallet(wallet)).toThrow(/passkey/)
    expect(decodeWallet(wallet, 'correct horse').index).toBe(1)
  })

  it('--host 0.0.0.0 is refused with exit 1 and a message, before binding', async () => {
    const p = spawnSvc(['serve', '--host', '0.0.0.0', '--port', '0', '--data', root()])
    expect(await p.exited).toBe(1)
    expect(p.stdout()).toBe('')
    expect(p.stderr()).toMatch(/refusing to bind "0\.0\.0\.0".*loopback/)
  })

  it('the client exits 3 when the daemon is unreachable, 1 on usage errors', async () => {
    const down = await svc(['health', '--url', 'http://127.0.0.1:9'])
    expect(down.code).toBe(3)
    expect(down.err).toContain('cannot reach')
    expect((await svc(['auth', 'frobnicate'])).code).toBe(1)
    expect((await svc(['nope'])).code).toBe(1)
    expect((await svc(['auth', 'restore', '--url', 'http://127.0.0.1:9'], '')).code).toBe(1)
    // the package bin launcher, from another directory
    const launcher = spawn(process.execPath, [join(REPO, 'server/cli/svc.mjs'), 'health', '--url', 'http://127.0.0.1:9'], { cwd: tmpdir(), stdio: 'ignore' })
    expect(await new Promise((r) => launcher.on('exit', r))).toBe(3)
  })
})
