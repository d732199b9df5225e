import { readFileSync } from 'node:fs'
import { call, parseClientArgs } from '../client.ts'
import { readAll, UsageError, type Command } from '../io.ts'
import { enc, jsonOption } from './args.ts'

import { controlUrlOf } from '../ports.ts'
import { TRIGGER_OPTIONS, TRIGGER_USAGE, triggerCommand } from './agent-triggers.ts'

const USAGE = `usage: svc agents triggers [ID]               this device's registry, or one trigger
       svc agents runs ID                     its last 20 runs, newest first
       svc agents enable ID | disable ID      flip it (enable resets the breaker)
       svc agents run (--program SPEC | --source FILE|-) [--args JSON] [--space SPACE_ID]
       svc agents election                    whether this device is the active agent
${TRIGGER_USAGE}
  --space picks the space when a trigger id is in several (chat-watch is in each), and binds
  a run's capabilities to that space. Talks to the agent control API (loopback, no token):
  --control URL (default $SVC_AGENTS_URL, else the daemon's URL, --url or $SVC_URL, with its
  port + 9, where svc serve puts it by default: http://127.0.0.1:7010 for http://127.0.0.1:7001).
  Exit: 0 ok, 1 on a 4xx, 2 on a 5xx, 3 when the control API (or, for trigger, the daemon) is
  unreachable.`

const OPTIONS = {
  control: { type: 'string' },
  program: { type: 'string' },
  source: { type: 'string' },
  args: { type: 'string' },
  space: { type: 'string' },
  ...TRIGGER_OPTIONS,
} as const

/** `svc agents`: the agent control API (chat.md "Agent control API") from the shell. */
export const agentsCommand: Command = {
  name: 'agents',
  summary: 'agent triggers: create, edit, list, runs, enable, disable; run a program',
  usage: USAGE,
  async run(args, io) {
    const parsed = parseClientArgs(args, OPTIONS, io, USAGE)
    // Trigger records are data of a space: the main API, not the control API.
    if (parsed.positionals[0] === 'trigger') return triggerCommand(parsed.ctx, parsed.positionals.slice(1), parsed.values, USAGE)
    const stray = Object.keys(TRIGGER_OPTIONS).find((o) => parsed.values[o] !== undefined)
    if (stray !== undefined) throw new UsageError(`--${stray} belongs to svc agents trigger\n${USAGE}`)
    const v = parsed.values as { control?: string; program?: string; source?: string; args?: string; space?: string }
    const ctx = { ...parsed.ctx, url: (v.control ?? io.env.SVC_AGENTS_URL ?? controlUrlOf(parsed.ctx.url)).replace(/\/+$/, '') }
    const [sub, id, ...rest] = parsed.positionals
    if (rest.length > 0) throw new UsageError(USAGE)
    const q = v.space !== undefined ? `?spaceId=${enc(v.space)}` : ''
    const needId = () => {
      if (id === undefined) throw new UsageError(`${sub} needs a trigger id\n${USAGE}`)
      return enc(id)
    }
    switch (sub) {
      case 'election':
        return call(ctx, 'GET', '/election')
      case 'triggers':
        return id === undefined ? call(ctx, 'GET', '/triggers') : call(ctx, 'GET', `/triggers/${enc(id)}${q}`)
      case 'runs':
        return call(ctx, 'GET', `/triggers/${needId()}/runs${q}`)
      case 'enable':
      case 'disable':
        return call(ctx, 'POST', `/triggers/${needId()}/${sub}${q}`)
      case 'run': {
        if (id !== undefined) throw new UsageError(USAGE)
        if ((v.program === undefined) === (v.source === undefined)) throw new UsageError(`run takes one of --program or --source\n${USAGE}`)
        const body: Record<string, unknown> = {}
        if (v.program !== undefined) body.program = v.program
        if (v.source !== undefined) body.source = v.source === '-' ? await readAll(io.stdin) : readSource(v.source)
        const a = jsonOption('args', v.args, USAGE)
        if (a !== undefined) body.args = a
        if (v.space !== undefined) body.spaceId = v.space
        return call(ctx, 'POST', '/run', { body })
      }
      default:
        throw new UsageError(USAGE)
    }
  },
}

function readSource(path: string): string {
  try {
    return readFileSync(path, 'utf8')
  } catch (err) {
    throw new UsageError(`--source ${path}: ${(err as Error).message}`)
  }
}
