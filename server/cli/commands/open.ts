import { spawn } from 'node:child_process'
import { fetchApi, parseClientArgs } from '../client.ts'
import { EXIT, UsageError, type Command } from '../io.ts'

const USAGE = 'usage: svc open [--print] [--url URL]'

/**
 * The program that opens a URL in the user's browser: `$BROWSER` when set (the convention
 * many tools share, and how a test sees what was opened), else the platform's opener.
 */
function opener(env: NodeJS.ProcessEnv): [string, string[]] {
  if (env.BROWSER) return [env.BROWSER, []]
  if (process.platform === 'darwin') return ['open', []]
  if (process.platform === 'win32') return ['cmd', ['/c', 'start', '""']]
  return ['xdg-open', []]
}

export const openCommand: Command = {
  name: 'open',
  summary: 'open the web app of the running daemon in the browser (`--print`: only print its address)',
  usage: USAGE,
  async run(args, io) {
    const { ctx, values, positionals } = parseClientArgs(args, { print: { type: 'boolean' } }, io, USAGE)
    if (positionals.length > 0) throw new UsageError(USAGE)
    // The daemon must answer first: opening a page that cannot load helps nobody.
    const health = await fetchApi(ctx, (client) => client.GET('/v1/health'))
    if (!health.ok) return health.code
    const url = `${ctx.url}/`
    if (values.print === true) {
      io.stdout.write(`${url}\n`)
      return EXIT.ok
    }
    const [cmd, pre] = opener(io.env)
    const opened = await new Promise<boolean>((resolve) => {
      const child = spawn(cmd, [...pre, url], { stdio: 'ignore', detached: true, env: io.env })
      child.once('error', () => resolve(false))
      child.once('spawn', () => {
        child.unref()
        resolve(true)
      })
    })
    io.stdout.write(opened ? `opened ${url}\n` : `open ${url} in your browser (no browser opener found: set BROWSER)\n`)
    return EXIT.ok
  },
}
