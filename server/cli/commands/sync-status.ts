import { parseClientArgs } from '../client.ts'
import { EXIT, UsageError, type Command } from '../io.ts'
import { COMMON_HELP, enc } from './args.ts'
import { getJson } from './peers.ts'

const USAGE = `usage: svc sync-status [SPACE_ID] [--watch] [--json]
  The sync state of every space (or one): unknown, offline, syncing, synced or error, with
  connected peers, the last completed round and changes not yet carried.
  --watch keeps printing a line whenever a space's state changes (Ctrl-C to stop).
${COMMON_HELP}`

const line = (s: any) =>
  `${s.spaceId}  ${String(s.state).padEnd(8)}  peers ${s.peers}  pending ${s.pending}  last sync ${s.lastSyncAt?.$date ?? 'never'}${s.lastErr ? `  error ${s.lastErr}` : ''}`

export const syncStatusCommand: Command = {
  name: 'sync-status',
  summary: 'show (or watch) the sync state of spaces',
  usage: USAGE,
  async run(args, io) {
    const { ctx, values, positionals } = parseClientArgs(args, { watch: { type: 'boolean' }, json: { type: 'boolean' } }, io, USAGE)
    if (positionals.length > 1) throw new UsageError(USAGE)
    const only = positionals[0]
    const print = (s: any) => io.stdout.write(values.json ? `${JSON.stringify(s)}\n` : `${line(s)}\n`)
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
      ctx.io.stderr.write(`svc: cannot reach ${ctx.url}\n`)
      return EXIT.unreachable
    }
    if (!res.ok || !res.body) return res.status >= 500 ? EXIT.server : EXIT.user
    const decoder = new TextDecoder()
    let buffer = ''
    try {
      for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
        buffer += decoder.decode(chunk, { stream: true })
        let i
        while ((i = buffer.indexOf('\n\n')) >= 0) {
          const block = buffer.slice(0, i)
          buffer = buffer.slice(i + 2)
          const event = /^event: (.*)$/m.exec(block)?.[1]
          const data = /^data: (.*)$/m.exec(block)?.[1]
          if (event === 'status' && data) {
            const s = JSON.parse(data)
            if (!only || s.spaceId === only) print(s)
          } else if (event === 'lagged' && data) io.stderr.write(`svc: missed ${JSON.parse(data).total} updates\n`)
          else if (event === 'closed') return EXIT.ok
        }
      }
    } catch {
      if (ac.signal.aborted) return EXIT.ok
    } finally {
      process.off('SIGINT', stop)
    }
    return ac.signal.aborted ? EXIT.ok : EXIT.unreachable
  },
}
