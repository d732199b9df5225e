import { createServer, type IncomingMessage, type Server } from 'node:http'
import { createServer as createH2Server, type Http2Server } from 'node:http2'
import { createVerify, generateKeyPairSync, verify as verifyRaw } from 'node:crypto'
import type { AddressInfo } from 'node:net'

/**
 * Fake push providers on loopback (the only fakes push tests use: the real providers are outside
 * this machine). Each records what it received and can be told to answer a status.
 */
export interface Received {
  path: string
  headers: IncomingMessage['headers'] | Record<string, string | string[] | undefined>
  body: string
  /** Wall-clock ms when it arrived (retry tests check the pause between attempts). */
  at: number
}

/** One scripted answer: its status and extra headers (a `retry-after`). */
export interface Answer {
  status: number
  headers?: Record<string, string>
}

const readBody = (req: IncomingMessage) =>
  new Promise<string>((resolve) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')))
  })

/** Closes a fake, keep-alive sockets too: a node's pooled connection never holds a test open. */
function closeAll(server: Server): Promise<void> {
  server.closeAllConnections()
  return new Promise<void>((r) => server.close(() => r()))
}

async function listen(server: Server | Http2Server): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`
}

export interface FakeHttp {
  url: string
  received: Received[]
  /** Status for the next requests (default 200), once `script` is used up. */
  status: number
  /** Answers for the next requests, first one first; `status` afterwards. */
  script: Answer[]
  waitFor(n: number, timeoutMs?: number): Promise<Received[]>
  close(): Promise<void>
}

function recorder(): Pick<FakeHttp, 'received' | 'status' | 'waitFor' | 'script'> & { answer(): Answer } {
  const r = {
    received: [] as Received[],
    status: 200,
    script: [] as Answer[],
    answer(): Answer {
      return r.script.shift() ?? { status: r.status }
    },
    async waitFor(n: number, timeoutMs = 20_000) {
      const until = Date.now() + timeoutMs
      while (r.received.length < n) {
        if (Date.now() > until) throw new Error(`fake provider got ${r.received.length} of ${n} requests`)
        await new Promise((res) => setTimeout(res, 20))
      }
      return r.received
    },
  }
  return r
}

/** UnifiedPush / ntfy: any POST is a push to the topic in its path. */
export async function fakeNtfy(): Promise<FakeHttp> {
  const rec = recorder()
  const server = createServer(async (req, res) => {
    const body = await readBody(req)
    rec.received.push({ path: req.url ?? '', headers: req.headers, body, at: Date.now() })
    const a = rec.answer()
    res.writeHead(a.status, a.headers ?? {}).end('{}')
  })
  server.keepAliveTimeout = 1000
  const url = await listen(server)
  return Object.assign(rec, { url, close: () => closeAll(server) })
}

export interface FakeFcm extends FakeHttp {
  serviceAccount: { projectId: string; clientEmail: string; privateKey: string; tokenUri: string; endpoint: string }
  tokenRequests: number
}

/**
 * FCM HTTP v1 and its OAuth token endpoint: the token endpoint checks the RS256 assertion against
 * the service account's public key; messages:send checks the bearer it issued.
 */
export async function fakeFcm(): Promise<FakeFcm> {
  const rec = recorder()
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 })
  const issued = new Set<string>()
  let tokenRequests = 0
  let n = 0
  const server = createServer(async (req, res) => {
    const body = await readBody(req)
    if (req.url === '/token') {
      tokenRequests++
      const assertion = new URLSearchParams(body).get('assertion') ?? ''
      const [h, c, s] = assertion.split('.')
      const ok = !!s && createVerify('RSA-SHA256').update(`${h}.${c}`).verify(publicKey, Buffer.from(s, 'base64url'))
      const claims = ok ? JSON.parse(Buffer.from(c, 'base64url').toString()) : {}
      if (!ok || claims.iss !== 'push@test.iam' || !String(claims.scope).includes('firebase.messaging')) return void res.writeHead(400).end('{"error":"invalid_grant"}')
      const token = `ya29.fake${++n}`
      issued.add(token)
      return void res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ access_token: token, expires_in: 3600, token_type: 'Bearer' }))
    }
    const bearer = (req.headers.authorization ?? '').replace(/^Bearer /, '')
    if (!issued.has(bearer)) return void res.writeHead(401).end('{}')
    rec.received.push({ path: req.url ?? '', headers: req.headers, body, at: Date.now() })
    const a = rec.answer()
    res.writeHead(a.status, a.headers ?? {}).end('{"name":"projects/p/messages/1"}')
  })
  server.keepAliveTimeout = 1000
  const url = await listen(server)
  const fake = Object.assign(rec, {
    url,
    serviceAccount: {
      projectId: 'p',
      clientEmail: 'push@test.iam',
      privateKey: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
      tokenUri: `${url}/token`,
      endpoint: url,
    },
    close: () => closeAll(server),
  })
  Object.defineProperty(fake, 'tokenRequests', { get: () => tokenRequests })
  return fake as unknown as FakeFcm
}

export interface FakeApns extends FakeHttp {
  config: { teamId: string; keyId: string; privateKey: string; bundleId: string; endpoint: string }
}

/** APNs over cleartext HTTP/2 (h2c) on loopback, checking the ES256 provider token. */
export async function fakeApns(): Promise<FakeApns> {
  const rec = recorder()
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' })
  const server = createH2Server()
  server.on('stream', (stream, headers) => {
    const chunks: Buffer[] = []
    stream.on('data', (c: Buffer) => chunks.push(c))
    stream.on('end', () => {
      const jwt = (headers.authorization ?? '').replace(/^bearer /, '')
      const [h, c, s] = jwt.split('.')
      const ok = !!s && verifyRaw('sha256', Buffer.from(`${h}.${c}`), { key: publicKey, dsaEncoding: 'ieee-p1363' }, Buffer.from(s, 'base64url'))
      if (!ok) return (stream.respond({ ':status': 403 }), stream.end('{"reason":"InvalidProviderToken"}'))
      rec.received.push({ path: String(headers[':path']), headers: headers, body: Buffer.concat(chunks).toString(), at: Date.now() })
      const a = rec.answer()
      stream.respond({ ':status': a.status, ...(a.headers ?? {}) })
      stream.end()
    })
  })
  const url = await listen(server)
  const fake = Object.assign(rec, {
    url,
    config: { teamId: 'TEAM', keyId: 'KEY', privateKey: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(), bundleId: 'org.svc.app', endpoint: url },
    close: () => new Promise<void>((r) => server.close(() => r())),
  })
  return fake
}
