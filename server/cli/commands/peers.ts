import { parseClientArgs, type ClientContext } from '../client.ts'
import { EXIT, UsageError, type Command } from '../io.ts'
import { COMMON_HELP } from './args.ts'

const USAGE = `usage: svc peers [--json]
  This device's peer id and listen addresses, and the peers it is connected to on the LAN
  with the spaces synced with each. --json prints the raw /v1/debug/p2p snapshot.
${COMMON_HELP}`

/** GETs a JSON document; on failure writes the envelope to stderr and returns the exit code. */
export async function getJson(ctx: ClientContext, path: string): Promise<{ ok: true; body: any } | { ok: false; code: number }> {
  let res: Response
  try {
    res = await fetch(ctx.url + path, { headers: { accept: 'application/json' } })
  } catch {
    ctx.io.stderr.write(`svc: cannot reach ${ctx.url}\n`)
    return { ok: false, code: EXIT.unreachable }
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
