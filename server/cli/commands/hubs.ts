import { call, parseClientArgs, type ClientContext } from '../client.ts'
import { EXIT, UsageError, type Command } from '../io.ts'
import { COMMON_HELP, enc } from './args.ts'
import { getJson } from './peers.ts'

const USAGE = `usage: svc hubs [--json]
       svc hubs add MULTIADDR [--token TOKEN]
       svc hubs remove PEER_ID
  Without a subcommand: this account's hubs, whether each is connected and admits us, and where
  every space stands there (kept, pending, over a quota...) with its last sync.
  add: a hub by multiaddr with its peer id (/ip4/HOST/tcp/PORT/p2p/PEER_ID), with the admission
  token its operator gave (svc hub admit); every space of the account is registered with it.
  remove: forget a hub. docs/hub.md.
${COMMON_HELP}`

export const hubsCommand: Command = {
  name: 'hubs',
  summary: "manage the hubs that keep this account's spaces while its devices are off",
  usage: USAGE,
  async run(args, io) {
    const { ctx, values, positionals } = parseClientArgs(args, { json: { type: 'boolean' }, token: { type: 'string' } }, io, USAGE)
    const [sub, ...rest] = positionals
    if (sub === 'add' && rest.length === 1 && !values.json)
      return call(ctx, 'POST', '/v1/hubs', { body: { multiaddr: rest[0], ...(typeof values.token === 'string' ? { token: values.token } : {}) } })
    if (sub === 'remove' && rest.length === 1 && !values.json && values.token === undefined) return call(ctx, 'DELETE', `/v1/hubs/${enc(rest[0])}`)
    if (positionals.length || values.token !== undefined) throw new UsageError(USAGE)
    return list(ctx, values.json === true)
  },
}

async function list(ctx: ClientContext, json: boolean): Promise<number> {
  const r = await getJson(ctx, '/v1/hubs')
  if (!r.ok) return r.code
  if (json) {
    ctx.io.stdout.write(`${JSON.stringify(r.body, null, 2)}\n`)
    return EXIT.ok
  }
  const lines: string[] = []
  if (!r.body.hubs?.length) lines.push('no hubs (svc hubs add MULTIADDR --token TOKEN)')
  for (const h of r.body.hubs ?? []) {
    const usage = h.usage ? `  ${h.usage.spaces}/${h.usage.maxSpaces} spaces, ${h.usage.bytes}/${h.usage.maxBytes} bytes` : ''
    lines.push(`hub  ${h.peerId}  ${h.connected ? 'connected' : 'not connected'}  admission ${h.admission ?? 'not asked yet'}${usage}`)
    if (h.lastError) lines.push(`  last error  ${h.lastError}`)
    for (const s of h.spaces ?? []) lines.push(`  ${s.spaceId}  ${s.state}${s.lastSyncAt ? `  synced ${s.lastSyncAt.$date}` : ''}`)
  }
  ctx.io.stdout.write(`${lines.join('\n')}\n`)
  return EXIT.ok
}
