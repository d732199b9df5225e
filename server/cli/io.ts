import type { Readable, Writable } from 'node:stream'

/** What a command may touch: its streams and environment (tests pass their own). */
export interface CliIO {
  stdout: Writable
  stderr: Writable
  stdin: Readable
  env: NodeJS.ProcessEnv
}

/** Exit codes of the bundled client (spec Errors). */
export const EXIT = { ok: 0, user: 1, server: 2, unreachable: 3 } as const

/** A mistake in the command line or configuration: exit 1 with the message. */
export class UsageError extends Error {}

export interface Command {
  name: string
  summary: string
  usage: string
  run(args: string[], io: CliIO): Promise<number>
}

export async function readAll(stream: Readable): Promise<string> {
  const chunks: Buffer[] = []
  for await (const chunk of stream) chunks.push(typeof chunk === 'string' ? Buffer.from(chunk) : (chunk as Buffer))
  return Buffer.concat(chunks).toString('utf8')
}

/** Input read from stdin without its final line break. */
export const stripNewline = (s: string) => s.replace(/\r?\n$/, '')
