import type { Json, JsonObject } from '../../sync/crdt/ops.ts'
import { CHAT_SOURCE } from '../../sync/modules/agents/program-ref.ts'
import type { SpaceEngine } from '../../sync/space/space-engine.ts'
import type { Doc } from '../../sync/space/rows.ts'
import { isChatMessage, type ChatMessage } from '../../sync/modules/chat/schema.ts'
import { callModel, type CapabilityContext } from './capabilities.ts'
import { capabilities } from './capabilities.ts'
import { isMessageFromAgent, isVerifiedAgentMessage, type EventInput } from './events.ts'

/** Messages of context sent with each question, and the backlog a takeover answers at most. */
export const CHAT_WATCH_CONTEXT = 12
export const CHAT_WATCH_BACKLOG = 20

const SYSTEM = 'You are the assistant of a shared chat. Answer the last message briefly.'

const createdMs = (m: ChatMessage): number => (m.createdAt ? Date.parse(m.createdAt.$date) || 0 : 0)

/**
 * The chat's messages, oldest first. A document without a message's shape (a member's own
 * client can write one: authorship is the only merge rule) is neither context nor backlog.
 */
async function messagesOf(space: SpaceEngine, chatId: string): Promise<Array<Doc & ChatMessage>> {
  const docs = (await space.datasetDocs(chatId, CHAT_SOURCE)).filter(isChatMessage)
  return docs.sort((a, b) => createdMs(a) - createdMs(b))
}

/**
 * `internal:chat-watch`, the native program of the reserved record: answers a chat message
 * through the configured model, replying in the same chat with the `agent` group. It runs in
 * the host (it is the daemon's own code, not a caller's), under the same cost budget.
 */
export async function chatWatch(ctx: CapabilityContext, event: EventInput): Promise<Json> {
  const docs = await messagesOf(ctx.space, event.objectId)
  const upTo = docs.findIndex((d) => d.id === event.messageId)
  const context = (upTo >= 0 ? docs.slice(0, upTo + 1) : docs).slice(-CHAT_WATCH_CONTEXT)
  const messages = [{ role: 'system', content: SYSTEM }, ...context.map((d) => ({ role: isVerifiedAgentMessage(d) ? 'assistant' : 'user', content: d.text ?? '' }))]
  const answer = await callModel(ctx, messages)
  const sent = await capabilities(ctx).chatSend({ objectId: event.objectId, text: answer.text, replyToMessageId: event.messageId })
  return { answered: event.messageId, ...(sent as JsonObject) }
}

/**
 * The unanswered backlog a device finds when it takes the chat over (chat.md: the reconnect
 * snapshot yields it): messages after the agent's last answer that are not the agent's and have
 * no answer, oldest first, at most CHAT_WATCH_BACKLOG. A chat the agent never answered in has
 * no backlog (the agent starts live).
 */
export async function unansweredBacklog(space: SpaceEngine, chatId: string): Promise<EventInput[]> {
  const docs = await messagesOf(space, chatId)
  const agentDocs = docs.filter(isVerifiedAgentMessage)
  if (agentDocs.length === 0) return []
  const answered = new Set(agentDocs.map((d) => d.replyToMessageId).filter((x) => x !== undefined))
  const lastAnswer = Math.max(...agentDocs.map(createdMs))
  return docs
    .filter((d) => !isMessageFromAgent(d) && !answered.has(d.id) && createdMs(d) >= lastAnswer)
    .slice(-CHAT_WATCH_BACKLOG)
    .map((d) => ({ space: space.spaceId, objectId: chatId, messageId: d.id, text: d.text ?? '' }))
}
