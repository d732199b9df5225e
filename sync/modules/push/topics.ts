import { toHex, utf8 } from '../../core/encoding.ts'
import { sha256 } from '../../crypto/hash.ts'

/**
 * Topics (chat.md "Push keys and payload"): `chats`, `chats/<h>`, `chats/<h>/<identity>` and
 * `<identity>`, where `<h>` is the lowercase hex SHA-256 of the chat object id, which is also
 * the notification's collapse key `groupId`.
 */
export const chatHash = (chatObjectId: string): string => toHex(sha256(utf8(chatObjectId)))
export const groupIdOf = chatHash

export const ALL_CHATS_TOPIC = 'chats'
export const chatTopic = (chatObjectId: string) => `chats/${chatHash(chatObjectId)}`
export const chatMentionTopic = (chatObjectId: string, identity: string) => `chats/${chatHash(chatObjectId)}/${identity}`
export const identityTopic = (identity: string) => identity

/** The full topic set of a new message: room-wide, per chat, and each mention both ways. */
export function sendTopics(chatObjectId: string, mentions: readonly string[]): string[] {
  const out = [ALL_CHATS_TOPIC, chatTopic(chatObjectId)]
  for (const m of mentions) out.push(chatMentionTopic(chatObjectId, m), identityTopic(m))
  return [...new Set(out)]
}

/** An edit's topics: only the mentions it added, never room-wide ones. */
export function mentionTopics(chatObjectId: string, added: readonly string[]): string[] {
  const out: string[] = []
  for (const m of added) out.push(chatMentionTopic(chatObjectId, m), identityTopic(m))
  return [...new Set(out)]
}
