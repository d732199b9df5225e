import { SvcError } from '../../core/errors.ts'
import type { Json, JsonObject } from '../../crdt/ops.ts'
import { isObject } from '../../crdt/path.ts'
import { ATTACHMENT_KEY_PATTERN, CHAT_LIMITS, DEBUG_LINK_PATTERN, FILE_LINK_PATTERN, STAMPED_FIELDS } from './schema.ts'

/** Attachment ids (chat.md "Chat message"). */
export const ATTACHMENT_KEY = new RegExp(ATTACHMENT_KEY_PATTERN)
export const FILE_LINK = new RegExp(FILE_LINK_PATTERN)
export const DEBUG_LINK = new RegExp(DEBUG_LINK_PATTERN)

const enc = new TextEncoder()
/** Over `max` UTF-8 bytes? (A UTF-16 unit is 1 to 3 bytes, so the length alone often tells.) */
const over = (s: string, max: number) => s.length > max || (s.length * 3 > max && enc.encode(s).length > max)

const invalid = (field: string, message: string) => new SvcError('request.invalid_field', message, { field })

/** 400 `request.invalid_field` for a field the server stamps (the message says read-only). */
export function refuseStamped(body: Record<string, unknown>): void {
  for (const f of STAMPED_FIELDS) if (Object.hasOwn(body, f)) throw new SvcError('request.invalid_field', `${f} is read-only: the server stamps it`, { field: f, readOnly: true })
}

/** Message text: a string of at most 32 KiB. */
export function checkText(text: unknown): string | undefined {
  if (text === undefined) return undefined
  if (typeof text !== 'string') throw invalid('text', 'text is a string')
  if (over(text, CHAT_LIMITS.textBytes)) throw invalid('text', `text is at most ${CHAT_LIMITS.textBytes} bytes`)
  return text
}

/**
 * A new message's body (chat.md "Chat message" and Limits): checked here, in the library, so
 * every caller (routes, CLI through them, the simulator) gets the same rules and codes. Returns
 * the client-written fields of the record.
 */
export function checkSend(body: Record<string, unknown>): JsonObject {
  refuseStamped(body)
  const out: JsonObject = {}
  const text = checkText(body.text)
  if (text !== undefined && text !== '') out.text = text
  if (body.replyToMessageId !== undefined) {
    const r = body.replyToMessageId
    if (typeof r !== 'string' || r === '' || over(r, CHAT_LIMITS.replyToBytes))
      throw invalid('replyToMessageId', `replyToMessageId is a string of 1 to ${CHAT_LIMITS.replyToBytes} bytes`)
    out.replyToMessageId = r
  }
  if (body.attachments !== undefined) {
    const a = checkAttachments(body.attachments)
    if (Object.keys(a).length > 0) out.attachments = a
  }
  if (out.text === undefined && out.attachments === undefined) throw new SvcError('chat.text_required', 'a message needs text or at least one attachment')
  if (body.agent !== undefined) out.agent = checkAgent(body.agent)
  return out
}

function checkAttachments(v: unknown): JsonObject {
  if (!isObject(v)) throw invalid('attachments', 'attachments is a map of id to {type, link}')
  const entries = Object.entries(v)
  if (entries.length > CHAT_LIMITS.attachments) throw invalid('attachments', `at most ${CHAT_LIMITS.attachments} attachments`)
  const out: JsonObject = {}
  for (const [key, a] of entries) {
    const field = `attachments.${key}`
    if (!ATTACHMENT_KEY.test(key)) throw invalid(field, 'an attachment id matches [A-Za-z0-9_-]{1,64}')
    if (!isObject(a)) throw invalid(field, 'an attachment is {type, link}')
    for (const k of Object.keys(a)) if (k !== 'type' && k !== 'link') throw invalid(`${field}.${k}`, 'an attachment is {type, link}')
    if (typeof a.type !== 'string' || a.type === '' || over(a.type, CHAT_LIMITS.attachmentTypeBytes))
      throw invalid(`${field}.type`, `type is a string of 1 to ${CHAT_LIMITS.attachmentTypeBytes} bytes`)
    if (typeof a.link !== 'string' || over(a.link, CHAT_LIMITS.attachmentLinkBytes) || !FILE_LINK.test(a.link)) {
      throw invalid(`${field}.link`, `link is svc://f/<spaceId>/<fileId>, at most ${CHAT_LIMITS.attachmentLinkBytes} bytes`)
    }
    // eslint-disable-next-line @typescript-eslint/no-deprecated -- the attachment's link field, not String.prototype.link
    out[key] = { type: a.type, link: a.link }
  }
  return out
}

/** The `agent` group: `{name, debugLink?, done}`; anything else is 400 `chat.agent_invalid`. */
function checkAgent(v: unknown): JsonObject {
  const bad = (message: string) => new SvcError('chat.agent_invalid', message, { field: 'agent' })
  if (!isObject(v)) throw bad('agent is {name, debugLink?, done}')
  for (const k of Object.keys(v)) if (k !== 'name' && k !== 'debugLink' && k !== 'done') throw bad(`agent has no field ${k}`)
  const { name, debugLink, done } = v as Record<string, Json | undefined>
  if (typeof name !== 'string' || name === '' || over(name, CHAT_LIMITS.agentNameBytes)) throw bad(`agent.name is a string of 1 to ${CHAT_LIMITS.agentNameBytes} bytes`)
  if (typeof done !== 'boolean') throw bad('agent.done is a boolean')
  const out: JsonObject = { name, done }
  if (debugLink !== undefined) {
    if (typeof debugLink !== 'string' || over(debugLink, CHAT_LIMITS.agentDebugLinkBytes) || !DEBUG_LINK.test(debugLink)) {
      throw bad(`agent.debugLink is svc://<spaceId>/<objectId>#<anchor>, at most ${CHAT_LIMITS.agentDebugLinkBytes} bytes`)
    }
    out.debugLink = debugLink
  }
  return out
}

/**
 * A reaction key, as it becomes one segment of the leaf path `reactions.<emoji>.<identity>`:
 * 1 to 64 bytes, no dot (a path separator), no whitespace or control characters.
 */
export function checkEmoji(emoji: string): string {
  if (emoji === '' || over(emoji, CHAT_LIMITS.emojiBytes) || /[.\s\p{Cc}]/u.test(emoji) || emoji === '__proto__') {
    throw invalid('emoji', `a reaction is 1 to ${CHAT_LIMITS.emojiBytes} bytes without dots, spaces or control characters`)
  }
  return emoji
}
