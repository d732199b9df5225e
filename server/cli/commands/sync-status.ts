import { PassThrough } from 'node:stream'
import { parseClientArgs, unreachable } from '../client.ts'
import { EXIT, UsageError, type Command } from '../io.ts'
import { COMMON_HELP, enc } from './args.ts'
import { getJson } from './peers.ts'
import { readSseFrames } from '../sse-frames.ts'
import { terminalSafe } from '../table.ts'

const USAGE = `usage: svc sync-status [SPACE_ID] [--watch] [--json]
  The sync state of every space (or one), by name and id (the account's internal space, which
  syncs only between its own devices, is labelled so): unknown, offline, syncing, synced or error, with
  connected peers, the last completed round and changes not yet carried; below a space, each of
  the account's hubs with where the space stands there (svc hubs for more).
  --watch keeps printing a line whenever a space's state changes (Ctrl-C to stop).
${COMMON_HELP}`

/**
 * Names by space id. A held space that `GET /v1/spaces` does not list is the account's own
 * (tech) space, which syncs only between the account's devices: it is labelled, not hidden, so
 * its state stays visible.
 */
async function spaceNames(ctx: Parameters<typeof getJson>[0]): Promise<Map<string, string>> {
  const r = await getJson({ ...ctx, io: { ...ctx.io, stderr: new PassThrough() } }, '/v1/spaces?status=all')
  return new Map(r.ok && Array.isArray(r.body) ? r.body.map((s: { id: string; name: string }) => [s.id, s.name] as const) : [])
}

const label = (names: Map<string, string>, id: string) => (names.has(id) ? terminalSafe(names.get(id) || '(unnamed)') : "(internal: this account's devices)")

const line = (names: Map<string, string>, s: any) =>
  `${label(names, s.spaceId).padEnd(24)}  ${s.spaceId}  ${String(s.state).padEnd(8)}  peers ${s.peers}  pending ${s.pending}  last sync ${s.lastSyncAt?.$date ?? 'never'}${s.lastErr ? `  error ${s.lastErr}` : ''}` +
  ((s.hubs ?? []) as any[]).map((h) => `\n  hub ${h.peerId}  ${h.connected ? 'connected' : 'not connected'}  ${h.state}  last sync ${h.lastSyncAt?.$date ?? 'never'}`).join('')

export const syncStatusCommand: Command = {
  name: 'sync-status',
  summary: 'show (or watch) the sync state of spaces',
  usage: USAGE,
  async run(args, io) {
    const { ctx, values, positionals } = parseClientArgs(args, { watch: { type: 'boolean' }, json: { type: 'boolean' } }, io, USAGE)
    if (positionals.length > 1) throw new UsageError(USAGE)
    const only = positionals[0]
    const names = values.json ? new Map<string, string>() : await spaceNames(ctx)
    const print = (s: any) => io.stdout.write(values.json ? `${JSON.stringify(s)}\n` : `${line(names, s)}\n`)
    if (!values.watch) {
      const r = await getJson(ctx, only ? `/v1/spaces/${enc(only)}/sync-status` : '/v1/sync-status')
      if (!r.ok) return r.code
      for (const s of only ? [r.body] : r.body.spaces) print(s)
      return EXIT.ok
    }
    const ac = new AbortController()
    const stop = () => ac.abort()
    process.once('SIGINT', stop)
    let res: Response
    try {
      res = await fetch(`${ctx.url}/v1/sync-status/subscribe`, { headers: { accept: 'text/event-stream' }, signal: ac.signal })
    } catch {
      return unreachable(ctx)
    }
    if (!res.ok || !res.body) return res.status >= 500 ? EXIT.server : EXIT.user
    let closed = false
    try {
      await readSseFrames(res.body, (event, data: any) => {
        if (event === 'status' && (!only || data.spaceId === only)) print(data)
        else if (event === 'lagged') io.stderr.write(`svc: missed ${data.total} updates\n`)
        else if (event === 'closed') return (closed = true)
      })
      if (closed) return EXIT.ok
    } catch {
      if (ac.signal.aborted) return EXIT.ok
    } finally {
      process.off('SIGINT', stop)
    }
    return ac.signal.aborted ? EXIT.ok : EXIT.unreachable
  },
}
