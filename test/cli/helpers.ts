import { main } from '../../server/cli/dispatch.ts'
import { memoryIO } from '../server/process.ts'

/** Runs one `svc` command line in process against `url`; stdout, stderr, exit code. */
export async function svcAt(url: string, args: string[], opts: { stdin?: string; env?: NodeJS.ProcessEnv } = {}) {
  const m = memoryIO(opts.stdin ?? '', { SVC_URL: url, ...opts.env })
  const code = await main(args, m.io)
  return { code, out: m.out(), err: m.err(), json: () => JSON.parse(m.out()) }
}
