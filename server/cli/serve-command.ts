import { readAll, stripNewline, UsageError, type Command } from './io.ts'
import { resolveServeConfig, SERVE_USAGE } from './serve-config.ts'

/**
 * `svc serve`. The daemon (serve.ts: the engine, Fastify, libp2p, SQLite) is loaded when the
 * command runs, so that every other command starts without it (issue 39: `svc --version` and
 * `svc health` within 3x a bare `node -e 0`).
 */
export const serveCommand: Command = {
  name: 'serve',
  summary: 'run the daemon',
  usage: SERVE_USAGE,
  async run(args, io) {
    const config = resolveServeConfig(args, io.env)
    if (config.passkeyStdin) {
      const passkey = stripNewline(await readAll(io.stdin))
      if (passkey === '') throw new UsageError('svc serve: --passkey-stdin read an empty passkey')
      config.passkey = passkey
    }
    const { serve } = await import('./serve.ts')
    return serve(config, io)
  },
}
