import type { JsonObject } from '../../crdt/ops.ts'
import type { Doc } from '../../space/rows.ts'
import type { SpaceChange, SpaceEngine } from '../../space/space-engine.ts'
import { CHAT_SOURCE } from './program-ref.ts'
import { TRIGGERS_DS } from './record.ts'
import { anchorIdOf } from './store.ts'

/**
 * Whether a chat message's `agent` group is vouched for (docs/agents.md "Agent messages"). The
 * group is a client-written hint (chat.md), so a member can post `agent: {name: "svc-agent"}`
 * and look like the agent. What a reader can check, on every peer alike, is authorship: a
 * message is `agent.verified` when its `debugLink` names a trigger of this space
 * (`svc://<spaceId>/<agents anchor>#<trigger id>`, which the agent runtime sets on every
 * message a trigger's run sends) and that trigger's record was created by the message's own
 * creator (both stamps come from signatures: chat's write rule ties `creator` to the signer,
 * the agents datasets' rule ties the record to its creator). So a verified message was sent
 * with the keys of the account that runs that trigger, and names which trigger; a message
 * claiming another account's agent, or no trigger, reads `verified: false`.
 *
 * The flag is an overlay (computed on read, never synced, never written by a client). A
 * message read before its trigger's record arrived reads unverified and is announced again
 * when the record lands.
 */

const isObj = (v: unknown): v is JsonObject => typeof v === 'object' && v !== null && !Array.isArray(v)

/** The `debugLink` the runtime writes for a trigger's messages. */
export const triggerLink = (spaceId: string, triggerId: string) => `svc://${spaceId}/${anchorIdOf(spaceId)}#${encodeURIComponent(triggerId)}`

/** Messages read unverified because their trigger's record was missing, kept to announce them again (bounded). */
const WAITING_MAX = 10_000

export class AgentMessageVerifier {
  private readonly prefix: string
  /** The anchor's id (derived: a hash, not worth computing again on every commit). */
  private readonly anchor: string
  /** Creator of each trigger record looked up (null: no such record), until a commit touches it. */
  private readonly creators = new Map<string, string | null>()
  /** Trigger id -> messages (chat id, message id) read while its record was missing. */
  private readonly waiting = new Map<string, Map<string, Set<string>>>()
  private waitingCount = 0

  constructor(private readonly space: SpaceEngine) {
    this.anchor = anchorIdOf(space.spaceId)
    this.prefix = `svc://${space.spaceId}/${this.anchor}#`
  }

  /** The trigger a message's `debugLink` names in this space, if it names one. */
  private triggerOf(agent: JsonObject): string | undefined {
    const link = agent.debugLink
    if (typeof link !== 'string' || !link.startsWith(this.prefix)) return undefined
    try {
      return decodeURIComponent(link.slice(this.prefix.length))
    } catch {
      return undefined
    }
  }

  private async creatorOf(triggerId: string): Promise<string | null> {
    const known = this.creators.get(triggerId)
    if (known !== undefined) return known
    const anchor = this.anchor
    // A deleted trigger keeps its creator stamp: what it sent stays verified.
    const r = this.space.objectDoc(anchor) ? await this.space.replica.getRecord(anchor, TRIGGERS_DS, triggerId) : undefined
    const creator = r ? r.created.a : null
    this.creators.set(triggerId, creator)
    return creator
  }

  async overlay(objectId: string, dataset: string, docs: Doc[]): Promise<Doc[]> {
    if (dataset !== CHAT_SOURCE) return docs
    for (let i = 0; i < docs.length; i++) {
      const doc = docs[i]
      const agent = doc.agent
      if (!isObj(agent)) continue
      const triggerId = this.triggerOf(agent)
      let verified = false
      if (triggerId !== undefined) {
        const creator = await this.creatorOf(triggerId)
        verified = creator !== null && creator === doc.creator
        if (creator === null && typeof doc.id === 'string') this.wait(triggerId, objectId, doc.id)
      }
      // A new group: the document shares the stored value's objects.
      docs[i] = { ...doc, agent: { ...agent, verified } }
    }
    return docs
  }

  private wait(triggerId: string, chatId: string, msgId: string): void {
    if (this.waitingCount >= WAITING_MAX) return
    let perChat = this.waiting.get(triggerId)
    if (!perChat) {
      perChat = new Map()
      this.waiting.set(triggerId, perChat)
    }
    let ids = perChat.get(chatId)
    if (!ids) perChat.set(chatId, (ids = new Set()))
    if (ids.has(msgId)) return
    ids.add(msgId)
    this.waitingCount++
  }

  /** Commit hook: trigger records that moved are looked up again; messages waiting for one are announced. */
  committed(change: SpaceChange): void {
    const anchor = this.anchor
    if (change.reloaded.has(anchor)) this.creators.clear()
    const touched = change.records.get(anchor)?.get(TRIGGERS_DS)
    if (!touched) return
    const arrived: Array<[string, Map<string, Set<string>>]> = []
    for (const triggerId of touched.keys()) {
      this.creators.delete(triggerId)
      const perChat = this.waiting.get(triggerId)
      if (!perChat) continue
      this.waiting.delete(triggerId)
      for (const ids of perChat.values()) this.waitingCount -= ids.size
      arrived.push([triggerId, perChat])
    }
    // Not awaited: a commit hook must not wait for the commit feed (SpaceEngine.announceOverlay).
    if (arrived.length) void this.announce(arrived)
  }

  private async announce(arrived: Array<[string, Map<string, Set<string>>]>): Promise<void> {
    const moves: SpaceChange['records'] = new Map()
    for (const [triggerId, perChat] of arrived) {
      const creator = await this.creatorOf(triggerId)
      for (const [chatId, ids] of perChat) {
        const recs = new Map<string, Array<{ type: '$set'; path: string; value: unknown }>>()
        for (const id of ids) {
          const msg = await this.space.replica.getRecord(chatId, CHAT_SOURCE, id)
          const verified = creator !== null && isObj(msg?.value) && msg.value.creator === creator
          recs.set(id, [{ type: '$set', path: 'agent.verified', value: verified }])
        }
        moves.set(chatId, new Map([[CHAT_SOURCE, recs]]))
      }
    }
    await this.space.announceOverlay({ records: moves })
  }
}
