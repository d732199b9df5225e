import { SvcError } from '../../core/errors.ts'
import { SerialQueue } from '../../core/serial-queue.ts'
import { propertyIdSync } from '../../crypto/hash.ts'
import { CHANGE_DERIVED_ID, type Json, type JsonObject, type Op } from '../../crdt/ops.ts'
import { getPath, isObject } from '../../crdt/path.ts'
import type { WriteResult } from '../../replica/types.ts'
import { asStringArray, instant } from '../../space/rows.ts'
import type { SpaceEngine } from '../../space/space-engine.ts'
import type { TypesService } from '../../space/types/index.ts'
import { REACTIONS } from './authorship.ts'
import { deriveMentions } from './mentions.ts'
import { checkEmoji, checkSend, checkText, refuseStamped } from './validate.ts'

/** The chat dataset kind (`module: chat` in a part's declaration) and its one collection. */
export const CHAT_KIND = 'chat'
export const CHAT_MESSAGES = 'chat_messages'

/**
 * The chat write endpoints over one space (chat.md "Endpoints / Chat", "Message lifecycle"):
 * checks, server stamps and mentions here; authorship is also the dataset's merge rule
 * (authorship.ts), so what these methods refuse with 403 is dropped on every peer as well.
 * Read-check-write runs one at a time per space: a reaction toggle reads the caller's leaf, and
 * two toggles must not both read "absent".
 */
export class ChatMessages {
  private readonly queue = new SerialQueue()

  constructor(
    readonly space: SpaceEngine,
    private readonly types: TypesService,
  ) {}

  private get me(): string {
    return this.space.replica.me
  }

  private now(): Json {
    return instant(this.space.env.now())
  }

  /**
   * The object holds a chat: it carries a type whose part declares the chat dataset (only the
   * general-chat root can). 404 `object.not_found` for an unknown object, 404
   * `dataset.not_found` for an object that holds no chat (docs/chat.md "Messages").
   */
  async resolve(objectId: string): Promise<void> {
    const row = this.space.requireObject(objectId)
    const carried = asStringArray((row.core as JsonObject | undefined)?.types)
    const decls = await this.types.declarationsOf(CHAT_MESSAGES)
    if (!decls.some((d) => d.module === CHAT_KIND && carried.includes(d.typeId))) {
      throw new SvcError('dataset.not_found', 'this object holds no chat', { objectId, dataset: CHAT_MESSAGES })
    }
  }

  /** POST {O}/chat/messages: a new message under the id its own change derives (`recordIds[0]`). */
  send(objectId: string, body: Record<string, unknown>): Promise<WriteResult> {
    const fields = checkSend(body)
    return this.queue.run(async () => {
      await this.resolve(objectId)
      const reply = typeof fields.replyToMessageId === 'string' ? await this.creatorOf(objectId, fields.replyToMessageId) : undefined
      const mentions = deriveMentions(this.space.spaceId, fields.text as string | undefined, reply)
      const now = this.now()
      const value: JsonObject = { ...fields, creator: this.me, createdAt: now, modifiedAt: now }
      if (mentions.length) value.mentions = mentions
      const res = await this.space.write(objectId, [{ op: 'set', ds: CHAT_MESSAGES, id: CHANGE_DERIVED_ID, path: '', value }])
      return { ...res, recordIds: [propertyIdSync(res.changeId)] }
    })
  }

  /** PATCH {O}/chat/messages/:msgId: the author replaces the text; modifiedAt and mentions follow. */
  edit(objectId: string, msgId: string, body: Record<string, unknown>): Promise<WriteResult> {
    refuseStamped(body)
    const text = checkText(body.text)
    if (text === undefined) throw new SvcError('request.missing_field', 'text is required', { field: 'text' })
    return this.queue.run(async () => {
      const msg = await this.ownMessage(objectId, msgId)
      const hasAttachments = isObject(msg.attachments) && Object.keys(msg.attachments).length > 0
      if (text === '' && !hasAttachments) throw new SvcError('chat.text_required', 'a message needs text or at least one attachment')
      const reply = typeof msg.replyToMessageId === 'string' ? await this.creatorOf(objectId, msg.replyToMessageId) : undefined
      const mentions = deriveMentions(this.space.spaceId, text, reply)
      const set = (path: string, value: Json): Op => ({ op: 'set', ds: CHAT_MESSAGES, id: msgId, path, value })
      const unset = (path: string): Op => ({ op: 'unset', ds: CHAT_MESSAGES, id: msgId, path })
      const ops: Op[] = [text === '' ? unset('text') : set('text', text), set('modifiedAt', this.now())]
      if (mentions.length) ops.push(set('mentions', mentions))
      else if (msg.mentions !== undefined) ops.push(unset('mentions'))
      return this.space.write(objectId, ops)
    })
  }

  /** DELETE {O}/chat/messages/:msgId: the author tombstones the message. */
  remove(objectId: string, msgId: string): Promise<WriteResult> {
    return this.queue.run(async () => {
      await this.ownMessage(objectId, msgId)
      const res = await this.space.write(objectId, [{ op: 'delete', ds: CHAT_MESSAGES, id: msgId }])
      return { ...res, recordIds: [msgId] }
    })
  }

  /** POST {O}/chat/messages/:msgId/reactions/:emoji: sets or unsets the caller's own leaf. */
  toggleReaction(objectId: string, msgId: string, emoji: string): Promise<WriteResult> {
    checkEmoji(emoji)
    return this.queue.run(async () => {
      const msg = await this.message(objectId, msgId)
      const path = `${REACTIONS}.${emoji}.${this.me}`
      const op: Op = getPath(msg, path) === undefined ? { op: 'set', ds: CHAT_MESSAGES, id: msgId, path, value: this.now() } : { op: 'unset', ds: CHAT_MESSAGES, id: msgId, path }
      return this.space.write(objectId, [op])
    })
  }

  /** A live message of this chat, or 404 `chat.not_found`. */
  private async message(objectId: string, msgId: string): Promise<JsonObject> {
    await this.resolve(objectId)
    const doc = await this.space.recordDoc(objectId, CHAT_MESSAGES, msgId)
    if (!doc) throw new SvcError('chat.not_found', 'no such message in this chat', { objectId, msgId })
    return doc
  }

  /** A live message the caller wrote, or 404 `chat.not_found` / 403 `chat.not_author`. */
  private async ownMessage(objectId: string, msgId: string): Promise<JsonObject> {
    const msg = await this.message(objectId, msgId)
    if (msg.creator !== this.me) throw new SvcError('chat.not_author', "only a message's author may edit or delete it", { msgId })
    return msg
  }

  /** The creator of a replied-to message, if this chat holds it (the reference is soft). */
  private async creatorOf(objectId: string, msgId: string): Promise<string | undefined> {
    const doc = await this.space.recordDoc(objectId, CHAT_MESSAGES, msgId)
    return typeof doc?.creator === 'string' ? doc.creator : undefined
  }
}
