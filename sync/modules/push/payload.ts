import { fromUtf8, utf8 } from '../../core/encoding.ts'
import type { Env } from '../../core/env.ts'
import { toBase64, fromBase64 } from '../../core/base64.ts'
import { PUSH_LIMITS } from './limits.ts'
import { openPayload, sealPayload } from './seal.ts'

/** `type` 1: a new chat message, the only loud payload. 2: a read on another device (silent). */
export const PAYLOAD_NEW_MESSAGE = 1
export const PAYLOAD_READ = 2

/** The pre-encryption payload, exactly the spec's fields (chat.md "Push keys and payload"). */
export interface PushPayload {
  spaceId: string
  spaceUxType: string
  spaceType: string
  senderId: string
  type: number
  newMessage?: {
    chatId: string
    msgId: string
    spaceName: string
    chatName: string
    senderName: string
    text: string
    hasAttachments: boolean
    attachments: Array<{ type: string; link: string }>
  }
}

/** Keeps the first `max` runes (code points), never splitting a surrogate pair. */
export function truncateRunes(text: string, max: number = PUSH_LIMITS.payloadTextRunes): string {
  let i = 0
  let runes = 0
  while (i < text.length && runes < max) {
    const c = text.codePointAt(i)!
    i += c > 0xffff ? 2 : 1
    runes++
  }
  return text.slice(0, i)
}

/**
 * What the node forwards and the provider carries: the sealed payload with the key id that opens
 * it and the collapse key. The node sees these four fields and never the plaintext.
 */
export interface PushEnvelope {
  /** base58 space push key (the node's space identifier). */
  spaceKey: string
  keyId: string
  /** base64 of nonce || ciphertext. */
  payload: string
  groupId?: string
  silent: boolean
}

export function sealEnvelope(
  env: Env,
  keys: { spaceKey: string; encKey: Uint8Array; encKeyId: string },
  payload: PushPayload,
  opts: { groupId?: string; silent: boolean },
): PushEnvelope {
  const sealed = sealPayload(env, keys.encKey, utf8(JSON.stringify(payload)))
  const out: PushEnvelope = { spaceKey: keys.spaceKey, keyId: keys.encKeyId, payload: toBase64(sealed), silent: opts.silent }
  if (opts.groupId) out.groupId = opts.groupId
  return out
}

/** Opens an envelope's payload with a known key; throws on a wrong key or tampered bytes. */
export function openEnvelope(encKey: Uint8Array, envelope: Pick<PushEnvelope, 'payload'>): PushPayload {
  return JSON.parse(fromUtf8(openPayload(encKey, fromBase64(envelope.payload)))) as PushPayload
}
