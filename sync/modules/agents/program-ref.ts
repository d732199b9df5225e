import { SvcError } from '../../core/errors.ts'

/** The only event source (chat.md "Spec by kind"). */
export const CHAT_SOURCE = 'chat_messages'

/** The reserved floating record and its native program (chat.md "Agent trigger"). */
export const CHAT_WATCH_ID = 'chat-watch'
export const CHAT_WATCH_PROGRAM = 'internal:chat-watch'
/** The name the agent signs its chat messages with (`agent.name`); messages carrying it never fire triggers. */
export const AGENT_NAME = 'svc-agent'

/**
 * A program spec (chat.md "Agent trigger record"):
 * - `<name>@v<N>`: a version of the space's synced registry (`agent_programs` on the anchor,
 *   record id `<name>@v<N>`, immutable once written: its fields are merge-pinned);
 * - `agent:<name>@v<N>`: a program shipped with the daemon (node/agents/builtins.ts);
 * - `internal:chat-watch`: the native chat agent, reserved.
 */
export type ProgramRef =
  { scope: 'registry'; name: string; version: number; id: string } | { scope: 'agent'; name: string; version: number; id: string } | { scope: 'internal'; name: string; id: string }

const NAME = '[A-Za-z0-9][A-Za-z0-9_.-]{0,63}'
const REF = new RegExp(`^(agent:)?(${NAME})@v([1-9][0-9]{0,8})$`)

export function parseProgram(spec: string): ProgramRef | undefined {
  if (spec === CHAT_WATCH_PROGRAM) return { scope: 'internal', name: 'chat-watch', id: spec }
  const m = REF.exec(spec)
  if (!m) return undefined
  const version = Number(m[3])
  return m[1] ? { scope: 'agent', name: m[2], version, id: spec } : { scope: 'registry', name: m[2], version, id: spec }
}

export function requireProgram(spec: unknown, field = 'program'): ProgramRef {
  const ref = typeof spec === 'string' ? parseProgram(spec) : undefined
  if (!ref) throw new SvcError('request.invalid_field', 'program is <name>@v<N>, agent:<name>@v<N> or internal:chat-watch', { field })
  return ref
}
