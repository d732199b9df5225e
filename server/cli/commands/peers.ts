import { call, parseClientArgs, unreachable, type ClientContext } from '../client.ts'
import { EXIT, UsageError, type Command } from '../io.ts'
import { COMMON_HELP, enc } from './args.ts'

const USAGE = `usage: svc peers [--json]
       svc peers add MULTIADDR
       svc peers list [--json]
       svc peers remove PEER_ID
  Without a subcommand: this device's peer id and listen addresses, and the peers it is
  connected to with the spaces synced with each (--json: the raw /v1/debug/p2p snapshot).
  add: a peer beyond the LAN, by multiaddr with its peer id (/ip4/HOST/tcp/PORT/p2p/PEER_ID);
  it is kept and redialled with backoff. list: the added peers and their state. remove: forget one.
${COMMON_HELP}`

/** GETs a JSON document; on failure writes the envelope to stderr and returns the exit code. */
export async function getJson(ctx: ClientContext, path: string): Promise<{ ok: true; body: any } | { ok: false; code: number }> {
  let res: Response
  try {
    res = await fetch(ctx.url + path, { headers: { accept: 'application/json' } })
  } catch {
    return { ok: false, code: unreachable(ctx) }
  }
  const body = await res.json().catch(() => undefined)
  if (!res.ok) {
    ctx.io.stderr.write(`svc: ${res.status} ${body?.error?.code ?? 'error'}: ${body?.error?.message ?? res.statusText}\n`)
    return { ok: false, code: res.status >= 500 ? EXIT.server : EXIT.user }
  }
  return { ok: true, body }
}

export const peersCommand: Command = {
  name: 'peers',
  summary: 'show this device on the LAN and the peers it syncs with',
  usage: USAGE,
  async run(args, io) {
    const { ctx, values, positionals } = parseClientArgs(args, { json: { type: 'boolean' } }, io, USAGE)
    const [sub, ...rest] = positionals
    if (sub === 'add' && rest.length === 1 && !values.json) return call(ctx, 'POST', '/v1/peers', { body: { multiaddr: rest[0] } })
    if (sub === 'remove' && rest.length === 1 && !values.json) return call(ctx, 'DELETE', `/v1/peers/${enc(rest[0])}`)
    if (sub === 'list' && rest.length === 0) return listAdded(ctx, values.json === true)
    if (positionals.length) throw new UsageError(USAGE)
    const r = await getJson(ctx, '/v1/debug/p2p')
    if (!r.ok) return r.code
    const p = r.body
    if (values.json) {
      io.stdout.write(`${JSON.stringify(p, null, 2)}\n`)
      return EXIT.ok
    }
    const lines = [`this device  ${p.peerId}  (LAN discovery ${p.mdns ? 'on' : 'off'})`]
    for (const a of p.listen ?? []) lines.push(`  listening  ${a}`)
    if (!p.peers?.length) lines.push('no connected peers')
    for (const peer of p.peers ?? []) {
      lines.push(`peer  ${peer.peerId}${peer.identity ? `  account ${peer.identity}` : ''}`)
      for (const a of peer.addresses ?? []) lines.push(`  via  ${a}`)
      lines.push(`  spaces  ${peer.spaces?.length ? peer.spaces.join(', ') : '(none synced yet)'}`)
    }
    const waiting = (p.discovered ?? []).filter((d: any) => !d.connected)
    for (const d of waiting) lines.push(`discovered, not connected  ${d.peerId}`)
    io.stdout.write(`${lines.join('\n')}\n`)
    return EXIT.ok
  },
}

/** `svc peers list`: one line per added peer (or the JSON body). */
async function listAdded(ctx: ClientContext, json: boolean): Promise<number> {
  const r = await getJson(ctx, '/v1/peers')
  if (!r.ok) return r.code
  if (json) {
    ctx.io.stdout.write(`${JSON.stringify(r.body, null, 2)}\n`)
    return EXIT.ok
  }
  const peers = r.body.peers ?? []
  const lines = peers.length ? [] : ['no peers added']
  for (const p of peers) {
    const state = p.connected ? `connected${p.identity ? `  account ${p.identity}` : ''}` : `not connected (${p.failures} failed dials${p.lastError ? `: ${p.lastError}` : ''})`
    lines.push(`${p.peerId}  ${p.multiaddr}  ${p.source}  ${state}`)
  }
  ctx.io.stdout.write(`${lines.join('\n')}\n`)
  return EXIT.ok
}
