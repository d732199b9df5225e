import { spawnSvc } from '../server/process.ts'
import type { ChildProcess } from 'node:child_process'

/** True inside `scripts/netns-run.sh` or CI's runner (both set NETNS_RUN_INSIDE=1): the only place a daemon may run mDNS. */
export const IN_NETNS = process.env.NETNS_RUN_INSIDE === '1'

export interface Daemon {
  dir: string
  url: string
  proc: ChildProcess
  exited: Promise<number | null>
  stderr: () => string
}

/**
 * Starts a real `svc serve`. By default mDNS is on and P2P listens on every interface of the
 * namespace; `{ mdns: false }` turns discovery off and listens on loopback only, so the daemon
 * meets peers only through addresses it is given (`POST /v1/peers`).
 */
export async function startDaemon(dir: string, opts: { mdns?: boolean; nodeArgs?: string[]; built?: boolean } = {}): Promise<Daemon> {
  const mdns = opts.mdns ?? true
  const env = mdns ? { SVC_NO_MDNS: '0', SVC_P2P_LISTEN: '' } : { SVC_NO_MDNS: '1', SVC_P2P_LISTEN: '/ip4/127.0.0.1/tcp/0' }
  const s = spawnSvc(['serve', '--port', '0', '--data', dir, ...(mdns ? [] : ['--no-mdns'])], { env, nodeArgs: opts.nodeArgs, built: opts.built })
  let timer: NodeJS.Timeout | undefined
  await new Promise<void>((resolve, reject) => {
    const check = () => s.stdout().includes('\n') && resolve()
    s.proc.stdout.on('data', check)
    check()
    void s.exited.then((code) => reject(new Error(`svc serve exited ${code}: ${s.stderr()}`)))
    // Only while it starts: a daemon that started runs as long as its test needs it.
    timer = setTimeout(() => {
      s.proc.kill('SIGKILL')
      reject(new Error(`svc serve did not start: ${s.stderr()}`))
    }, 90_000)
    timer.unref()
  }).finally(() => clearTimeout(timer))
  return { dir, url: s.stdout().split('\n')[0], proc: s.proc, exited: s.exited, stderr: s.stderr }
}

export async function stopDaemon(d: Daemon, signal: NodeJS.Signals = 'SIGTERM'): Promise<number | null> {
  if (d.proc.exitCode === null && d.proc.signalCode === null) d.proc.kill(signal)
  return d.exited
}

export async function api<T = any>(d: Daemon, method: string, path: string, body?: unknown): Promise<{ status: number; json: T }> {
  const res = await fetch(`${d.url}${path}`, {
    method,
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  })
  const text = await res.text()
  return { status: res.status, json: (text ? JSON.parse(text) : undefined) as T }
}

/** A GET answering text (an editor's `GET .../markdown`, markdown text as the spec says). */
export async function text(d: Daemon, path: string): Promise<string> {
  const res = await fetch(`${d.url}${path}`)
  const body = await res.text()
  if (res.status >= 300) throw new Error(`GET ${path} -> ${res.status} ${body}`)
  return body
}

export async function ok<T = any>(d: Daemon, method: string, path: string, body?: unknown): Promise<T> {
  const r = await api<T>(d, method, path, body)
  if (r.status >= 300) throw new Error(`${method} ${path} -> ${r.status} ${JSON.stringify(r.json)}`)
  return r.json
}

export async function until<T>(what: string, fn: () => Promise<T | undefined | false>, ms = 60_000, every = 200): Promise<T> {
  const end = Date.now() + ms
  for (;;) {
    const v = await fn().catch(() => undefined)
    if (v) return v
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`)
    await new Promise((r) => setTimeout(r, every))
  }
}

/** Every record of a dataset, sorted by id, as a comparable string. */
export async function datasetState(d: Daemon, spaceId: string, objectId: string, dataset: string): Promise<string> {
  const r = await ok(d, 'POST', `/v1/spaces/${spaceId}/query`, { objectId, dataset, sort: ['id'], limit: 10_000 })
  return JSON.stringify(r.records.map((x: any) => ({ ...x, _ver: undefined })))
}
