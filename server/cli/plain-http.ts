import { connect } from 'node:net'

/** A plain request's answer. */
export interface PlainReply {
  status: number
  statusText: string
  text: string
}

/** Decodes a `transfer-encoding: chunked` body. */
function unchunk(raw: Buffer): Buffer {
  const parts: Buffer[] = []
  let at = 0
  for (;;) {
    const eol = raw.indexOf('\r\n', at)
    if (eol < 0) throw new Error('a chunked body ends early')
    const size = parseInt(raw.subarray(at, eol).toString('latin1').split(';')[0], 16)
    if (!Number.isFinite(size)) throw new Error('a chunked body with a bad chunk size')
    if (size === 0) return Buffer.concat(parts)
    parts.push(raw.subarray(eol + 2, eol + 2 + size))
    at = eol + 2 + size + 2
  }
}

/** Parses a whole HTTP/1.1 response (the server closed the connection after it). */
function parseReply(raw: Buffer): PlainReply {
  const end = raw.indexOf('\r\n\r\n')
  if (end < 0) throw new Error('the connection closed before a whole reply')
  const [statusLine, ...lines] = raw.subarray(0, end).toString('latin1').split('\r\n')
  const m = /^HTTP\/1\.[01] (\d{3}) ?(.*)$/.exec(statusLine)
  if (!m) throw new Error('not an HTTP reply')
  const headers = new Map(lines.map((l) => [l.slice(0, l.indexOf(':')).trim().toLowerCase(), l.slice(l.indexOf(':') + 1).trim()]))
  let body = raw.subarray(end + 4)
  if (headers.get('transfer-encoding')?.toLowerCase() === 'chunked') body = unchunk(body)
  else if (headers.has('content-length')) body = body.subarray(0, Number(headers.get('content-length')))
  return { status: Number(m[1]), statusText: m[2], text: body.toString('utf8') }
}

/**
 * One HTTP/1.1 request with `connection: close`, over a bare TCP socket, for the CLI's plain
 * calls to the daemon (loopback, plain HTTP: spec Authentication 1). Neither fetch nor
 * node:http: loading Node's fetch (undici) costs about 30 ms at a process's start and node:http
 * about 17 ms, as much as the rest of `svc health` together (issue 39: a short command within
 * 3x a bare `node -e 0`); node:net is loaded already. Rejects when the daemon cannot be reached.
 */
export async function plainRequest(url: string, method: string, headers: Record<string, string>, body?: string): Promise<PlainReply> {
  const u = new URL(url)
  if (u.protocol !== 'http:') {
    const res = await fetch(url, { method, headers: body === undefined ? headers : { ...headers, 'content-type': 'application/json' }, body })
    return { status: res.status, statusText: res.statusText, text: await res.text() }
  }
  const payload = body === undefined ? undefined : Buffer.from(body, 'utf8')
  const head = [
    `${method} ${u.pathname}${u.search} HTTP/1.1`,
    `host: ${u.host}`,
    'connection: close',
    ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`),
    ...(payload ? ['content-type: application/json', `content-length: ${payload.length}`] : []),
    '',
    '',
  ].join('\r\n')
  return new Promise((resolve, reject) => {
    const socket = connect({ host: u.hostname.replace(/^\[|\]$/g, ''), port: Number(u.port || 80) })
    const chunks: Buffer[] = []
    // Written, not ended: the server closes the connection once it has answered.
    socket.on('connect', () => socket.write(payload ? Buffer.concat([Buffer.from(head, 'latin1'), payload]) : head))
    socket.on('data', (c: Buffer) => chunks.push(c))
    socket.on('error', reject)
    socket.on('close', (hadError) => {
      if (hadError) return
      let reply: PlainReply
      try {
        reply = parseReply(Buffer.concat(chunks))
      } catch (err) {
        reject(err instanceof Error ? err : new Error(String(err)))
        return
      }
      resolve(reply)
    })
  })
}
