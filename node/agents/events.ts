import type { Json, JsonObject } from '../../sync/crdt/ops.ts'
import { AGENT_NAME } from '../../sync/modules/agents/program-ref.ts'

/** What an event trigger's program receives as `args.event` (chat.md "Spec by kind"). */
export interface EventInput {
  space: string
  objectId: string
  messageId: string
  text: string
  agent?: Json
}

/** The agent's own messages never fire a trigger (chat.md: self-authored, by the agent's name). */
export function isMessageFromAgent(v: JsonObject): boolean {
  const a = v.agent
  return typeof a === 'object' && a !== null && !Array.isArray(a) && (a as JsonObject).name === AGENT_NAME
}
