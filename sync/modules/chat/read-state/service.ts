import { CHAT_MESSAGES } from '../messages.ts'
import { SvcError } from '../../../core/errors.ts'
import { SerialQueue } from '../../../core/serial-queue.ts'
import { ensureXxh3, propertyIdSync } from '../../../crypto/hash.ts'
import { coversPath, isObject } from '../../../crdt/path.ts'
import type { AccountData } from '../../../space/account-data.ts'
import type { ModuleContext } from '../../../space/module.ts'
import type { Doc } from '../../../space/rows.ts'
import { DATASETS_DS } from '../../../space/schema.ts'
import type { OverlayMoves, SpaceChange, SpaceEngine } from '../../../space/space-engine.ts'
import { typeDatasets } from '../../../space/types/dataset-decls.ts'
import { applyAdds, countersOf, factsOf, flagsOf, isEmpty, reactionsRead, readAll, readUpTo, type ChatMarks, type Counters, type MarkAdds, type MessageFacts } from './compute.ts'
import { chatOfDataset, markOps, marksDataset, marksOf } from './marks.ts'
import { count, counterOps, COUNTERS_GONE, flagOps, sameCounters, setFlags, unionInto, type FrameOps } from './moves.ts'

/** The collection of chat messages (chat.md: `chat_messages`, served by the chat module). */
/** Chat's collection, as the messages service names it. */
export const CHAT_COLLECTION = CHAT_MESSAGES

/** Message facts plus the creating change, for reactions-read's causal ancestry. */
interface HeldMessage extends MessageFacts {
  createdChange: string
}

/** One chat's state on this device: the messages held and the account's marks. */
interface ChatState {
  messages: Map<string, HeldMessage>
  marks: ChatMarks
  counters?: Counters
}

/**
 * Chat read state of one space for this account (chat.md "Chat read state"): the flags on
 * message records and the counters on chat rows, computed by the engine from the messages this
 * device holds and the account's read marks (compute.ts), which live in the account's tech
 * space (marks.ts) and so reach its other devices and nobody else.
 *
 * State per chat is loaded on first use and kept current: by the commit hook (messages arriving
 * or changing) and by the account's marks moving (a read here or on another device). Every
 * move of a flag or counter is announced through the space's commit feed, so live windows get
 * an ordinary `updated` frame whichever device read.
 *
 * Every state update runs in one lane, in order. A lane task never awaits the space's commit
 * feed (the feed awaits the lane: row overlays run inside it); announcements are handed back
 * and awaited outside the lane.
 */
export class ChatReadService {
  private readonly chats = new Map<string, ChatState>()
  /** Whether a type declares the chat collection, per type id (cleared when its declarations move). */
  private readonly chatTypes = new Map<string, boolean>()
  private readonly lane = new SerialQueue()
  private readonly me: string
  private readonly space: SpaceEngine
  private readonly account: AccountData

  constructor(ctx: ModuleContext) {
    this.space = ctx.space
    this.account = ctx.account
    this.me = ctx.space.replica.me
    // Held weakly: the account outlives a space it stops holding (deleted, left), and its
    // emitter must not keep that space's engine alive. The listener goes with the service.
    const self = new WeakRef(this)
    const off = this.account.onChange((touched) => {
      const svc = self.deref()
      if (svc) svc.marksMoved(touched)
      else off()
    })
  }

  /** Told after a read or read-all moved this account's marks (push wakes the account's other devices). */
  private readonly readListeners = new Set<(chatId: string) => void>()
  onRead(listener: (chatId: string) => void): () => void {
    this.readListeners.add(listener)
    return () => void this.readListeners.delete(listener)
  }

  // ------------------------------------------------------------------ routes

  /** `POST {O}/chat/read-all`. */
  readAll(chatId: string): Promise<void> {
    return this.mark(chatId, (st) => readAll(st.messages.values(), this.me, st.marks), true)
  }

  /** `POST {O}/chat/messages/:msgId/read`: this message and every held one at or below it. */
  read(chatId: string, msgId: string): Promise<void> {
    return this.mark(chatId, (st) => readUpTo(st.messages.values(), this.held(st, msgId), this.me, st.marks), true)
  }

  /** `POST {O}/chat/messages/:msgId/reactions-read`. */
  reactionsRead(chatId: string, msgId: string): Promise<void> {
    return this.mark(chatId, async (st) => {
      const target = this.held(st, msgId)
      return reactionsRead(target, await this.reactionAncestry(chatId, st, target), this.me, st.marks)
    })
  }

  /** The chat's counters as this device computes them now (the row shows them once the chat holds a message). */
  async counters(chatId: string): Promise<Counters> {
    return this.lane.run(async () => this.countersOf(await this.load(chatId)))
  }

  /**
   * Resolves once every state update queued so far ran and what it announced reached live
   * feeds (readers after a sync; the routes' own writes already wait for their announcement).
   */
  async settled(): Promise<void> {
    await this.lane.run(() => undefined)
    await this.space.settled()
  }

  /** A chat of this space, answered like the message routes: 404 `object.not_found`, or `dataset.not_found` for an object holding no chat. */
  async requireChat(chatId: string): Promise<void> {
    const row = this.space.requireObject(chatId)
    if (!(await this.isChatRow(row)))
      throw new SvcError('dataset.not_found', 'this object holds no chat (chat routes take the general-chat root, bundle.rootId)', { objectId: chatId, dataset: CHAT_COLLECTION })
  }

  private held(st: ChatState, msgId: string): HeldMessage {
    const f = st.messages.get(msgId)
    if (!f) throw new SvcError('chat.not_found', 'no such message in this chat', { msgId })
    return f
  }

  /**
   * Writes what `compute` says reading adds to the account's marks, then announces the flags
   * and counters that moved. Idempotent: nothing to add writes nothing. Local only, so it works
   * offline; the marks reach the account's other devices when the tech space syncs.
   */
  private async mark(chatId: string, compute: (st: ChatState) => MarkAdds | Promise<MarkAdds>, isRead = false): Promise<void> {
    await this.requireChat(chatId)
    const announced = await this.lane.run(async () => {
      const st = await this.load(chatId)
      const adds = await compute(st)
      if (isEmpty(adds)) return undefined
      for (const ops of markOps(marksDataset(this.space.spaceId, chatId), adds)) await this.account.write(ops)
      // Wrapped: the lane must not wait for the announcement (the feed may be waiting for the lane).
      return { done: this.moveMarks(chatId, st, (m) => applyAdds(m, adds)) }
    })
    await announced?.done
    if (announced && isRead) for (const l of this.readListeners) l(chatId)
  }

  /**
   * The messages whose creating change is in the causal past of the change that wrote one of
   * the target's unseen reactions (the reactor had read them, so this account has too).
   */
  private async reactionAncestry(chatId: string, st: ChatState, target: HeldMessage): Promise<HeldMessage[]> {
    const seen = st.marks.reactionSeen.get(target.id)
    if (target.reactionKeys.every((k) => seen?.has(k))) return []
    const log = await this.space.replica.recordLog(chatId, CHAT_COLLECTION, target.id)
    const rec = await this.space.replica.getRecord(chatId, CHAT_COLLECTION, target.id)
    const reactions = isObject(rec?.value) && isObject(rec.value.reactions) ? rec.value.reactions : {}
    const writers = new Set<string>()
    for (const [emoji, leaves] of Object.entries(reactions)) {
      if (!isObject(leaves)) continue
      for (const identity of Object.keys(leaves)) {
        if (identity === this.me) continue
        const path = `reactions.${emoji}.${identity}`
        for (let i = log.length - 1; i >= 0; i--) {
          const e = log[i]
          if (e.k === 'set' && coversPath(e.p, path)) {
            writers.add(e.s.c)
            break
          }
        }
      }
    }
    if (writers.size === 0) return []
    const past = (await this.space.replica.treeIndex(chatId)).ancestors([...writers])
    await ensureXxh3()
    const derived = new Set<string>()
    for (const c of past) derived.add(propertyIdSync(c))
    return [...st.messages.values()].filter((m) => past.has(m.createdChange) || derived.has(m.id))
  }

  // ------------------------------------------------------------------ overlays

  /** Lays the account's flags on message records (absent unless set). */
  async overlayRecords(chatId: string, dataset: string, docs: Doc[]): Promise<Doc[]> {
    if (dataset !== CHAT_COLLECTION || docs.length === 0) return docs
    return this.lane.run(async () => {
      const st = await this.load(chatId)
      for (const doc of docs) {
        // Fast path, the common message: another account's, mentioning nobody here, no reactions to judge.
        if (typeof doc.creator === 'string' && doc.creator !== this.me && !Array.isArray(doc.mentions)) {
          setFlags(doc, !st.marks.read.has(doc.id), false, false)
          continue
        }
        const verId = isObject(doc._ver) && typeof doc._ver.id === 'string' ? doc._ver.id : ''
        const f = flagsOf(factsOf(doc.id, verId, doc, st.messages.get(doc.id)?.creator ?? '', this.me), this.me, st.marks)
        setFlags(doc, f.unread, f.unreadMention, f.unreadReactions)
      }
      return docs
    })
  }

  /** Lays the counters on a chat's row, once the chat holds a message (absent before: treat as 0). */
  async overlayRow(objectId: string, doc: Doc): Promise<Doc> {
    if (!(await this.isChatRow(doc))) return doc
    return this.lane.run(async () => {
      const st = await this.load(objectId)
      if (st.messages.size === 0) return doc
      const c = this.countersOf(st)
      const group = isObject(doc.chat) ? doc.chat : {}
      return { ...doc, chat: { ...group, unreadCount: c.unreadCount, unreadMentions: c.unreadMentions, unreadReactionsCount: c.unreadReactionsCount } }
    })
  }

  // ------------------------------------------------------------------ following

  /** Commit hook: messages arrived or moved, or a type's declarations moved. */
  async committed(c: SpaceChange): Promise<void> {
    const typesMoved = new Set<string>()
    for (const [objectId, perDs] of c.records) if (perDs.has(DATASETS_DS)) typesMoved.add(objectId)
    for (const id of c.reloaded) typesMoved.add(id)
    if (typesMoved.size) this.typesMoved(typesMoved)
    const touched: Array<[string, string[] | 'all']> = []
    for (const id of c.reloaded) if (this.chats.has(id)) touched.push([id, 'all'])
    for (const [objectId, perDs] of c.records) {
      const msgs = perDs.get(CHAT_COLLECTION)
      if (msgs && !c.reloaded.has(objectId)) touched.push([objectId, [...msgs.keys()]])
    }
    if (touched.length === 0) return
    // Not awaited: the announcement queues behind this very commit on the feed.
    void this.lane.run(async () => {
      for (const [chatId, ids] of touched) {
        const st = this.chats.get(chatId)
        if (!st) {
          // First message of a chat this device had not loaded: its row gains counters.
          const row = this.space.objectDoc(chatId)
          if (row && (await this.isChatRow(row))) void this.space.announceOverlay({ rows: new Map([[chatId, counterOps(this.countersOf(await this.load(chatId)))]]) })
          continue
        }
        const before = this.countersOf(st)
        const shown = st.messages.size > 0
        if (ids === 'all') {
          st.messages = await this.loadMessages(chatId)
          st.counters = undefined
        } else {
          // Counters move by the touched messages' flags only (a commit touches few of a long chat's).
          const next = { ...before }
          for (const id of ids) {
            const old = st.messages.get(id)
            if (old) count(next, flagsOf(old, this.me, st.marks), -1)
            await this.refreshMessage(chatId, st, id)
            const now = st.messages.get(id)
            if (now) count(next, flagsOf(now, this.me, st.marks), 1)
          }
          st.counters = next
        }
        const after = this.countersOf(st)
        // Counters show once the chat holds a message: the first one lays them on even at 0.
        if (shown !== st.messages.size > 0) void this.space.announceOverlay({ rows: new Map([[chatId, shown ? COUNTERS_GONE : counterOps(after)]]) })
        else if (!sameCounters(before, after)) void this.space.announceOverlay({ rows: new Map([[chatId, counterOps(after, before)]]) })
      }
    })
  }

  /**
   * Declarations of some types moved (a type's chat part may have arrived after the rows that
   * carry it, which were then not chats yet): forget what was cached and lay the counters on
   * the rows that carry them now. The row refresh of this commit ran before this hook.
   */
  private typesMoved(types: Set<string>) {
    for (const t of types) this.chatTypes.delete(t)
    const rows = [...this.space.objectDocs()].filter(
      (row) => isObject(row.core) && Array.isArray(row.core.types) && row.core.types.some((t) => typeof t === 'string' && types.has(t)),
    )
    if (rows.length === 0) return
    void this.lane.run(async () => {
      for (const row of rows) {
        if (!(await this.isChatRow(row))) continue
        const st = await this.load(row.id)
        if (st.messages.size) void this.space.announceOverlay({ rows: new Map([[row.id, counterOps(this.countersOf(st))]]) })
      }
    })
  }

  /** The account's marks moved (written here or synced from another device). */
  private marksMoved(touched: ReadonlyMap<string, readonly string[]> | 'reloaded') {
    const chats =
      touched === 'reloaded' ? [...this.chats.keys()] : [...touched.keys()].map((ds) => chatOfDataset(this.space.spaceId, ds)).filter((id): id is string => id !== undefined)
    for (const chatId of chats) {
      if (!this.chats.has(chatId)) continue
      void this.lane.run(async () => {
        const st = this.chats.get(chatId)
        if (!st) return
        const next = marksOf(await this.account.list(marksDataset(this.space.spaceId, chatId)))
        // Marks only grow; what this device wrote and has not seen come back yet is kept too.
        void this.moveMarks(chatId, st, (m) => unionInto(m, next))
      })
    }
  }

  /** Applies a move of the marks to a loaded chat and announces the flags and counters that moved. */
  private moveMarks(chatId: string, st: ChatState, move: (m: ChatMarks) => void): Promise<void> {
    const before = new Map([...st.messages.values()].map((f) => [f.id, flagsOf(f, this.me, st.marks)]))
    const countersBefore = this.countersOf(st)
    move(st.marks)
    st.counters = undefined
    const recs = new Map<string, FrameOps>()
    for (const f of st.messages.values()) {
      const ops = flagOps(before.get(f.id)!, flagsOf(f, this.me, st.marks))
      if (ops.length) recs.set(f.id, ops)
    }
    const countersAfter = this.countersOf(st)
    const moves: OverlayMoves = {}
    if (recs.size) moves.records = new Map([[chatId, new Map([[CHAT_COLLECTION, recs]])]])
    if (!sameCounters(countersBefore, countersAfter)) moves.rows = new Map([[chatId, counterOps(countersAfter, countersBefore)]])
    return moves.records || moves.rows ? this.space.announceOverlay(moves) : Promise.resolve()
  }

  // ------------------------------------------------------------------ state

  /** A chat's state, loaded on first use (call in the lane). */
  private async load(chatId: string): Promise<ChatState> {
    let st = this.chats.get(chatId)
    if (st) return st
    const messages = await this.loadMessages(chatId)
    const marks = marksOf(await this.account.list(marksDataset(this.space.spaceId, chatId)))
    st = { messages, marks }
    this.chats.set(chatId, st)
    return st
  }

  private async loadMessages(chatId: string): Promise<Map<string, HeldMessage>> {
    const out = new Map<string, HeldMessage>()
    for (const r of await this.space.replica.listRecords(chatId, CHAT_COLLECTION)) {
      if (r.deleted || r.value === undefined) continue
      out.set(r.id, { ...factsOf(r.id, r.verId, r.value, r.created.a, this.me), createdChange: r.created.c })
    }
    return out
  }

  private async refreshMessage(chatId: string, st: ChatState, id: string) {
    const r = await this.space.replica.getRecord(chatId, CHAT_COLLECTION, id)
    if (!r || r.deleted || r.value === undefined) st.messages.delete(id)
    else st.messages.set(id, { ...factsOf(r.id, r.verId, r.value, r.created.a, this.me), createdChange: r.created.c })
  }

  private countersOf(st: ChatState): Counters {
    return (st.counters ??= countersOf(st.messages.values(), this.me, st.marks))
  }

  /** Whether an object row carries a type declaring the chat collection. */
  async isChatRow(row: Doc): Promise<boolean> {
    const types = isObject(row.core) && Array.isArray(row.core.types) ? row.core.types : []
    for (const t of types) {
      if (typeof t !== 'string') continue
      let yes = this.chatTypes.get(t)
      if (yes === undefined) {
        yes = (await typeDatasets(this.space, t)).some((d) => d.collection === CHAT_COLLECTION)
        this.chatTypes.set(t, yes)
      }
      if (yes) return true
    }
    return false
  }
}
