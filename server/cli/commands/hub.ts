import { EXIT, UsageError, type Command } from '../io.ts'

const SUMMARY = 'run a hub (keeps the ciphertext of admitted accounts\u2019 spaces while their devices are off), or mint an admission token'

/**
 * `svc hub`: runs a hub until SIGTERM/SIGINT, then shuts down gracefully (docs/hub.md).
 * `svc hub admit ACCOUNT`: prints an admission token. The hub is a workspace of its own
 * (node/hub: pg, better-sqlite3), loaded only by this command.
 */
export const hubCommand: Command = {
  name: 'hub',
  summary: SUMMARY,
  usage: 'usage: svc hub --data DIR [...]   (svc hub --help for every flag)',
  async run(args, io) {
    const m = await import('../../../node/hub/hub-main.ts')
    if (args.includes('--help')) {
      io.stdout.write(`${m.HUB_USAGE}\n`)
      return EXIT.ok
    }
    try {
      if (args[0] === 'admit') {
        io.stdout.write(`${await m.admitCommand(args.slice(1))}\n`)
        return EXIT.ok
      }
      const hub = await m.startHubProcess(m.parseHubArgs(args))
      io.stdout.write(`${JSON.stringify(hub.summary)}\n`)
      await new Promise<void>((resolve) => {
        const stop = () => resolve()
        process.once('SIGTERM', stop)
        process.once('SIGINT', stop)
      })
      await hub.close()
      return EXIT.ok
    } catch (err) {
      if (err instanceof m.HubUsageError) throw new UsageError(`${err.message}\n${m.HUB_USAGE}`)
      io.stderr.write(`svc hub: ${(err as Error).message}\n`)
      return EXIT.user
    }
  },
}
