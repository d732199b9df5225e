import type { Env } from '../../core/env.ts'
import type { SpaceChange, SpaceEngine } from '../../space/space-engine.ts'
import { CHAT_MESSAGES } from '../chat/messages.ts'
import { fromBase64 } from '../../core/base64.ts'
import { toHex, utf8 } from '../../core/encoding.ts'
import { sha256 } from '../../crypto/hash.ts'
import { pushKeysOf } from './keys.ts'
import type { PushOutbox } from './outbox.ts'
import { PAYLOAD_NEW_MESSAGE, PAYLOAD_READ, sealEnvelope, truncateRunes, type PushPayload } from './payload.ts'
import { groupIdOf, identityTopic, mentionTopics, sendTopics } from './topics.ts'

type Ops = Array<{ type: '$set' | '$unset'; path: string; value?: unknown }>
const asObj = (v: unknown): Record<string, unknown> | undefined => (typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined)
const strs = (v: unknown): string[] => (Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : [])

/** A chat object's name: its `core.name` (where objects keep their name), or a bare `name`. */
function chatNameOf(row: Record<string, unknown> | undefined): string {
  const name = asObj(row?.core)?.name ?? row?.name
  return typeof name === 'string' ? name : ''
}

/** Mentions remembered per message, so an edit pushes only the ones it adds; bounded (oldest go first). */
const MAX_REMEMBERED = 10_000

/**
 * What a space's own chat writes push (chat.md "Push notifications"): a new message, its full
 * topic set; an edit, only the mentions it added, to mention topics; a read or read-all, a
 * silent notice to the account's own identity topic. Reactions and deletes push nothing; nor
 * does anything received from a peer (its sender pushed it).
 */
export class PushSender {
  private readonly mentions = new Map<string, string[]>()

  constructor(
    private readonly space: SpaceEngine,
    private readonly outbox: PushOutbox,
    private readonly env: Env,
    private readonly enabled: () => boolean,
    /** This device's own token, if it registered one: the node skips it (no push of one's own write). */
    private readonly ownToken: () => string | undefined = () => undefined,
  ) {}

  committed(c: SpaceChange): void {
    for (const [objectId, perDs] of c.records) {
      const msgs = perDs.get(CHAT_MESSAGES)
      if (!msgs) continue
      for (const [msgId, ops] of msgs) this.message(objectId, msgId, ops, c.local === true)
    }
  }

  private message(chatId: string, msgId: string, ops: Ops, local: boolean) {
    const whole = ops.find((o) => o.type === '$set' && o.path === '')
    const created = whole ? asObj(whole.value) : undefined
    const mentionsOp = ops.find((o) => o.path === 'mentions')
    const before = this.mentions.get(msgId)
    const now = created ? strs(created.mentions) : mentionsOp ? (mentionsOp.type === '$set' ? strs(mentionsOp.value) : []) : before
    if (now) this.remember(msgId, now)
    if (!local || !this.enabled()) return
    if (created && typeof created.createdAt !== 'undefined') {
      this.enqueue(sendTopics(chatId, now ?? []), { chatId, msgId, record: created }, false)
      return
    }
    // An edit: only mentions it added. A message whose mentions we never saw (sent before this
    // process started) pushes nothing rather than notify its mentions a second time.
    if (!mentionsOp || before === undefined) return
    const added = (now ?? []).filter((m) => !before.includes(m))
    if (added.length) this.enqueue(mentionTopics(chatId, added), { chatId, msgId }, false)
  }

  /** A read or read-all moved this account's marks: wake its other devices, silently. */
  read(chatId: string): void {
    if (!this.enabled()) return
    this.enqueue([identityTopic(this.space.replica.me)], { chatId }, true)
  }

  private remember(msgId: string, mentions: string[]) {
    this.mentions.delete(msgId)
    this.mentions.set(msgId, mentions)
    if (this.mentions.size > MAX_REMEMBERED) this.mentions.delete(this.mentions.keys().next().value!)
  }

  private enqueue(topics: string[], m: { chatId: string; msgId?: string; record?: Record<string, unknown> }, silent: boolean) {
    const space = this.space
    this.outbox.enqueue(async (link) => {
      const keys = pushKeysOf(space.replica)
      if (!keys) return undefined
      const payload = silent ? this.readPayload() : await this.messagePayload(m.chatId, m.msgId!, m.record)
      const env = sealEnvelope(this.env, keys, payload, { groupId: groupIdOf(m.chatId), silent })
      // A message is never pushed to the device that wrote it; a silent read notice still goes to
      // every token of the identity topic (it wakes the account's devices, this one harmlessly).
      const own = silent ? undefined : this.ownToken()
      const except = own === undefined ? undefined : toHex(sha256(utf8(own)))
      return link.send({
        pushKey: keys.pushKey,
        topics,
        keyId: env.keyId,
        payload: fromBase64(env.payload),
        groupId: env.groupId,
        silent,
        ...(except ? { except } : {}),
        ts: this.env.now(),
      })
    })
  }

  private base(type: number): PushPayload {
    return { spaceId: this.space.spaceId, spaceUxType: 'chat', spaceType: 'svc.space', senderId: this.space.replica.me, type }
  }

  /** The name this account publishes in the space (its profile there), '' before it published one. */
  private senderName(): string {
    const me = this.space.replica.me
    return this.space.replica.profiles().find((p) => p.identity === me)?.profile?.name ?? ''
  }

  private readPayload(): PushPayload {
    return this.base(PAYLOAD_READ)
  }

  private async messagePayload(chatId: string, msgId: string, record?: Record<string, unknown>): Promise<PushPayload> {
    const rec = record ?? (await this.space.recordDoc(chatId, CHAT_MESSAGES, msgId)) ?? {}
    const attachments = Object.values(asObj(rec.attachments) ?? {})
      .map(asObj)
      .filter((a): a is Record<string, unknown> => !!a && typeof a.type === 'string' && typeof a.link === 'string')
      .map((a) => ({ type: a.type as string, link: a.link as string }))
    const row = this.space.objectDoc(chatId) as Record<string, unknown> | undefined
    return {
      ...this.base(PAYLOAD_NEW_MESSAGE),
      newMessage: {
        chatId,
        msgId,
        spaceName: this.space.indexFields().name,
        chatName: chatNameOf(row),
        senderName: this.senderName(),
        text: truncateRunes(typeof rec.text === 'string' ? rec.text : ''),
        hasAttachments: attachments.length > 0,
        attachments,
      },
    }
  }
}
