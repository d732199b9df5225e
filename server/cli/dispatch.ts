import { COMMANDS } from './commands/index.ts'
import { EXIT, UsageError, type CliIO } from './io.ts'
import { VERSION } from '../version.ts'

/** The command list; it loads every command for its summary, which only this listing needs. */
const overview = async () =>
  [
    'usage: svc <command> [options]',
    '',
    ...(await Promise.all(COMMANDS.map((c) => c.load()))).map((c) => `  ${c.name.padEnd(12)} ${c.summary}`),
    '',
    "svc <command> --help shows its options; --json prints the API's JSON; svc --version the release.",
    'Paths in filters, sorts and sets may use xKeys (note.status); docs/cli.md has the details.',
  ].join('\n')

/** Runs one `svc` command line; resolves to the exit code. */
export async function main(argv: string[], io: CliIO): Promise<number> {
  const [name, ...args] = argv
  if (name === undefined || name === '--help' || name === '-h' || name === 'help') {
    ;(name === undefined ? io.stderr : io.stdout).write((await overview()) + '\n')
    return name === undefined ? EXIT.user : EXIT.ok
  }
  if (name === '--version' || name === '-V' || name === '-v' || name === 'version') {
    io.stdout.write(`svc ${VERSION}\n`)
    return EXIT.ok
  }
  const entry = COMMANDS.find((c) => c.name === name)
  if (!entry) {
    io.stderr.write(`svc: unknown command "${name}"\n${await overview()}\n`)
    return EXIT.user
  }
  const command = await entry.load()
  if (args.includes('--help') || args.includes('-h')) {
    io.stdout.write(command.usage + '\n')
    return EXIT.ok
  }
  try {
    return await command.run(args, io)
  } catch (err) {
    if (err instanceof UsageError) {
      io.stderr.write(err.message + '\n')
      return EXIT.user
    }
    io.stderr.write(`svc ${name}: ${(err as Error).message}\n`)
    return EXIT.server
  }
}
