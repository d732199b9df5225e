import { createReadStream, createWriteStream, statSync } from 'node:fs'
import { basename } from 'node:path'
import { Readable } from 'node:stream'
import { pipeline } from 'node:stream/promises'
import { call, parseClientArgs, show, type ClientContext } from '../client.ts'
import { table } from '../table.ts'
import { EXIT, UsageError, type Command } from '../io.ts'
import { COMMON_HELP, enc, intOption } from './args.ts'

const USAGE = `usage: svc files attach SPACE_ID OBJECT_ID PATH [--name NAME] [--mime TYPE]
       svc files get SPACE_ID FILE_ID [--out PATH] [--range START-END] [--variant wN]
       svc files ls SPACE_ID [--object OBJECT_ID]
       svc files info|status SPACE_ID FILE_ID
       svc files pin|offload|rm SPACE_ID FILE_ID
       svc files cache [size|sweep|free BYTES]
  attach: streams the file (- for stdin) to POST {O}/files; prints the result (fileId, uri).
  get: the bytes to --out or stdout; --range asks for bytes START-END (inclusive) only.
  cache: the local copy's size (default), a sweep, or an LRU free of BYTES.
${COMMON_HELP}`

/** Streams a local file (or stdin) as the attach body: the CLI never holds a file in memory. */
async function attach(ctx: ClientContext, spaceId: string, objectId: string, path: string, name: string, mime: string): Promise<number> {
  const body = path === '-' ? ctx.io.stdin : createReadStream(path)
  const headers: Record<string, string> = { 'content-type': 'application/octet-stream', accept: 'application/json' }
  if (path !== '-') headers['content-length'] = String(statSync(path).size)
  const q = new URLSearchParams({ name, mime })
  return respond(ctx, () =>
    fetch(`${ctx.url}/v1/spaces/${enc(spaceId)}/objects/${enc(objectId)}/files?${q}`, {
      method: 'POST',
      headers,
      body: Readable.toWeb(body) as unknown as BodyInit,
      duplex: 'half',
    } as RequestInit),
  )
}

async function get(ctx: ClientContext, spaceId: string, fileId: string, out: string | undefined, range: string | undefined, variant: string | undefined): Promise<number> {
  const headers: Record<string, string> = range ? { range: `bytes=${range}` } : {}
  const q = variant ? `?variant=${enc(variant)}` : ''
  let res: Response
  try {
    res = await fetch(`${ctx.url}/v1/spaces/${enc(spaceId)}/files/${enc(fileId)}/content${q}`, { headers })
  } catch {
    ctx.io.stderr.write(`svc: cannot reach ${ctx.url}\n`)
    return EXIT.unreachable
  }
  if (!res.ok) return report(ctx, res)
  const src = Readable.fromWeb(res.body! as import('node:stream/web').ReadableStream)
  await pipeline(src, out ? createWriteStream(out) : ctx.io.stdout)
  return EXIT.ok
}

async function respond(ctx: ClientContext, send: () => Promise<Response>): Promise<number> {
  let res: Response
  try {
    res = await send()
  } catch {
    ctx.io.stderr.write(`svc: cannot reach ${ctx.url}\n`)
    return EXIT.unreachable
  }
  if (!res.ok) return report(ctx, res)
  ctx.io.stdout.write(JSON.stringify(await res.json(), null, 2) + '\n')
  return EXIT.ok
}

async function report(ctx: ClientContext, res: Response): Promise<number> {
  const err = ((await res.json().catch(() => undefined)) as { error?: { code?: string; message?: string } } | undefined)?.error
  ctx.io.stderr.write(`svc: ${res.status} ${err?.code ?? 'error'}: ${err?.message ?? res.statusText}\n`)
  return res.status >= 500 ? EXIT.server : EXIT.user
}

export const filesCommand: Command = {
  name: 'files',
  summary: 'attach, download, list, pin and offload files; the local files cache',
  usage: USAGE,
  async run(args, io) {
    const { ctx, values, positionals } = parseClientArgs(
      args,
      { name: { type: 'string' }, mime: { type: 'string' }, out: { type: 'string' }, range: { type: 'string' }, variant: { type: 'string' }, object: { type: 'string' } },
      io,
      USAGE,
    )
    const [sub, a, b, c, ...rest] = positionals
    if (rest.length > 0) throw new UsageError(USAGE)
    const S = (spaceId: string) => `/v1/spaces/${enc(spaceId)}`
    switch (sub) {
      case 'attach':
        if (!a || !b || !c) break
        return attach(ctx, a, b, c, (values.name as string | undefined) ?? (c === '-' ? 'stdin' : basename(c)), (values.mime as string | undefined) ?? 'application/octet-stream')
      case 'get':
        if (!a || !b || c) break
        if (values.range !== undefined && !/^\d*-\d*$/.test(values.range as string)) throw new UsageError(`--range takes START-END\n${USAGE}`)
        return get(ctx, a, b, values.out as string | undefined, values.range as string | undefined, values.variant as string | undefined)
      case 'ls':
        if (!a || b) break
        // A table (ID, NAME, SIZE, MIME, STATE, CACHED, PINNED, OBJECT); --json prints the API's JSON.
        return show(
          ctx,
          (c) => c.GET('/v1/spaces/{spaceId}/files', { params: { path: { spaceId: a }, query: values.object ? { objectId: values.object as string } : {} } }),
          (d) =>
            table(
              ['ID', 'NAME', 'SIZE', 'MIME', 'STATE', 'CACHED', 'PINNED', 'OBJECT'],
              d.files.map((f) => [f.id, f.name, f.size, f.mime, f.state, f.inline ? 'inline' : `${f.cachedBlocks}/${f.blocks}`, f.pinned ? 'yes' : '', f.objectId]),
            ),
        )
      case 'info':
      case 'status':
        if (!a || !b || c) break
        return call(ctx, 'GET', `${S(a)}/files/${enc(b)}${sub === 'status' ? '/status' : ''}`)
      case 'pin':
      case 'offload':
        if (!a || !b || c) break
        return said(ctx, await call(ctx, 'POST', `${S(a)}/files/${enc(b)}/${sub}`), `${sub === 'pin' ? 'pinned' : 'offloaded'} ${b}`)
      case 'rm':
        if (!a || !b || c) break
        return call(ctx, 'DELETE', `${S(a)}/files/${enc(b)}`)
      case 'cache':
        if ((a === undefined || a === 'size') && !b) return call(ctx, 'GET', '/v1/files/cache')
        if (a === 'sweep' && !b) return said(ctx, await call(ctx, 'POST', '/v1/files/cache/sweep'), 'swept the files cache')
        if (a === 'free' && b && !c) return call(ctx, 'POST', '/v1/files/cache/free', { body: { bytes: intOption('bytes', b, USAGE) } })
        break
    }
    throw new UsageError(USAGE)
  },
}

/** A route that answers 204 says nothing: the human form confirms what was done (--json stays silent, as the API). */
function said(ctx: ClientContext, code: number, what: string): number {
  if (code === 0 && !ctx.json) ctx.io.stdout.write(`${what}\n`)
  return code
}
