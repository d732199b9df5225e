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

/** A message carrying the agent's name in its `agent` group (a claim anyone can write). */
export function isMessageFromAgent(v: JsonObject): boolean {
  const a = v.agent
  return typeof a === 'object' && a !== null && !Array.isArray(a) && a.name === AGENT_NAME
}

/**
 * The agent's own messages never fire a trigger (chat.md: self-authored, by the agent's name):
 * the name and this account's signature. A member's message claiming the agent's name fires
 * like any other.
 */
export const isOwnAgentMessage = (v: JsonObject, accountId: string): boolean => isMessageFromAgent(v) && v.creator === accountId

/**
 * A message read through the space (overlays laid on) that a trigger's run sent with its
 * creator's keys (`agent.verified`, sync/modules/agents/verify.ts). Chat-watch counts only
 * these as the agent's answers: a member's look-alike neither speaks as the assistant to the
 * model nor marks a question as answered.
 */
export function isVerifiedAgentMessage(v: JsonObject): boolean {
  return isMessageFromAgent(v) && (v.agent as JsonObject).verified === true
}
