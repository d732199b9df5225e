import { readFileSync } from 'node:fs'
import type { PushNodeConfig, PushNodeServer } from '../../../node/push-node/server.ts'
import { EXIT, UsageError, type Command } from '../io.ts'

const USAGE = 'usage: svc push-node --config FILE   (JSON: keySeed, listen, providers, healthPort?, store?, dataDir?, rates?, bounds?, retry?; docs/push.md)'

/**
 * `svc push-node`: runs a push node until SIGTERM/SIGINT. stdout: one JSON line
 * `{peerId, addrs, health}` once it listens (what a daemon's `push.peerId`/`push.addrs` take).
 */
export const pushNodeCommand: Command = {
  name: 'push-node',
  summary: 'run a push node (forwards sealed chat notifications to APNs, FCM, UnifiedPush, Web Push)',
  usage: USAGE,
  async run(args, io) {
    const i = args.indexOf('--config')
    if (i < 0 || !args[i + 1] || args.length !== 2) throw new UsageError(USAGE)
    let cfg: PushNodeConfig
    try {
      cfg = JSON.parse(readFileSync(args[i + 1], 'utf8')) as PushNodeConfig
    } catch (err) {
      throw new UsageError(`cannot read ${args[i + 1]}: ${(err as Error).message}`)
    }
    if (typeof cfg.keySeed !== 'string' || !/^[0-9a-f]{64}$/.test(cfg.keySeed) || !Array.isArray(cfg.listen) || typeof cfg.providers !== 'object')
      throw new UsageError(`${USAGE}\nkeySeed must be 64 hex digits, listen a list of multiaddrs`)
    let server: PushNodeServer
    try {
      // Loaded here, not at the top: the push node (pg, web-push) is a workspace of its own that
      // a daemon install leaves out (docs/packages.md); every other command runs without it.
      const { PushNodeServer } = await import('../../../node/push-node/server.ts')
      server = await PushNodeServer.start(cfg)
    } catch (err) {
      io.stderr.write(`svc push-node: cannot start: ${(err as Error).message}\n`)
      return EXIT.user
    }
    io.stdout.write(`${JSON.stringify({ peerId: server.peerId, addrs: server.addrs, health: server.healthUrl })}\n`)
    await new Promise<void>((resolve) => {
      const stop = () => resolve()
      process.once('SIGTERM', stop)
      process.once('SIGINT', stop)
    })
    await server.close()
    return EXIT.ok
  },
}
