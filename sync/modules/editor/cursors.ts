import * as Y from 'yjs'
import { Awareness, applyAwarenessUpdate, encodeAwarenessUpdate, removeAwarenessStates } from 'y-protocols/awareness'
import { SvcError } from '../../core/errors.ts'
import type { Env } from '../../core/env.ts'
import { errField, silentLogger, type Logger } from '../../core/log.ts'
import { getPath } from '../../crdt/path.ts'
import { clientIdFor, fromB64, newDoc, seedUpdate, toB64, YTEXT_ROOT, YTextField } from '../../crdt/ytext.ts'
import type { SpaceEngine } from '../../space/space-engine.ts'
import type { EventBus, Subscription } from '../events/bus.ts'
import type { DeliveredEvent } from '../events/envelope.ts'
import { CURSOR_LIMITS } from './cursor-limits.ts'
import { TEXT_FIELD } from './text-deltas.ts'

/** The bus type of cursor presence; the bus maps it into the sender's namespace (events/namespace.ts). */
export const CURSOR_TYPE = 'editor.cursor'

/** A cursor as the awareness state carries it: Yjs relative positions (base64) in one block's text. */
export interface CursorState {
  objectId: string
  collection: string
  blockId: string
  anchor: string
  head: string
  name: string
}

/** A position: the Yjs relative position, and its index in the block's text on this replica (null when it does not resolve here yet). */
export interface CursorPos {
  rel: string
  index: number | null
}

export interface CursorView {
  clientId: number
  identity: string
  self: boolean
  name: string
  objectId: string
  collection: string
  blockId: string
  anchor: CursorPos
  head: CursorPos
  updatedAt: number
}

export type CursorChange = { action: 'set' | 'removed'; cursor: CursorView }

interface Entry {
  state: CursorState
  identity: string
  self: boolean
  clientId: number
  updatedAt: number
}

/** One space's presence: our awareness (what we publish), one per sender we hear, and the live entries. */
interface SpacePresence {
  local: Awareness
  sub: Subscription
  senders: Map<string, Awareness>
  entries: Map<string, Entry>
  watchers: Set<(action: CursorChange['action'], e: Entry) => void>
  stopSweep?: () => void
}

const str = (v: unknown, max: number): v is string => typeof v === 'string' && v.length > 0 && v.length <= max

/** A state as a hostile sender may shape it: checked before it is listed. */
function asCursorState(v: unknown): CursorState | undefined {
  if (typeof v !== 'object' || v === null) return undefined
  const s = v as Record<string, unknown>
  const id = CURSOR_LIMITS.maxIdChars
  if (!str(s.objectId, id) || !str(s.collection, id) || !str(s.blockId, id) || !str(s.anchor, CURSOR_LIMITS.maxPositionChars) || !str(s.head, CURSOR_LIMITS.maxPositionChars))
    return undefined
  if (typeof s.name !== 'string' || s.name.length > CURSOR_LIMITS.maxNameChars) return undefined
  return { objectId: s.objectId, collection: s.collection, blockId: s.blockId, anchor: s.anchor, head: s.head, name: s.name }
}

/** An awareness without y-protocols' own wall-clock timer: expiry runs on the Env clock here. */
function quietAwareness(clientId?: number): Awareness {
  const doc = newDoc()
  if (clientId !== undefined) doc.clientID = clientId
  const a = new Awareness(doc)
  clearInterval(a._checkInterval as ReturnType<typeof setInterval>)
  return a
}

/**
 * Live cursors (docs/editor.md "Cursors"): `editor.cursor` presence on the event bus, space
 * scope, in the sender's namespace, each event's data one y-protocols awareness update (base64).
 * Our own awareness has a client id per device (account and a per-process salt, as text writes);
 * a state holds `{objectId, collection, blockId, anchor, head, name}` with Yjs relative positions
 * of the block's text, so a cursor stays on its character while others type. A cursor vanishes
 * `timeoutMs` after its last update (a client renews by setting it again), and at once when its
 * device clears it (DELETE, or the account closing cleanly: the awareness null state).
 *
 * Senders are kept apart: each sender identity has its own awareness, so nobody can move or
 * remove another account's cursor by reusing its client id. Bounded: senders per space and
 * clients per sender (CURSOR_LIMITS).
 */
export class CursorPresence {
  private readonly spaces = new Map<string, SpacePresence>()
  private bus: EventBus | undefined
  private readonly salt: string

  constructor(
    private readonly accountId: string,
    private readonly env: Env,
    /** Settable, so a test need not wait 30 s. */
    public timeoutMs: number = CURSOR_LIMITS.timeoutMs,
    private readonly log: Logger = silentLogger,
  ) {
    this.salt = toB64(env.randomBytes(8))
  }

  /** The bus to publish on and listen to (the events module's account service). */
  bind(bus: EventBus): this {
    this.bus ??= bus
    return this
  }

  private presence(spaceId: string): SpacePresence {
    let p = this.spaces.get(spaceId)
    if (p) return p
    if (!this.bus) throw new SvcError('internal', 'cursor presence has no event bus')
    const local = quietAwareness(clientIdFor(this.accountId, this.salt))
    local.setLocalState(null)
    const entries = new Map<string, Entry>()
    const pres: SpacePresence = { local, senders: new Map(), entries, watchers: new Set(), sub: undefined as unknown as Subscription }
    // The daemon's own listener: it leaves the space's interest budget to clients.
    pres.sub = this.bus.subscribe({ scopes: ['space'], spaceIds: [spaceId], types: [`${CURSOR_TYPE}.`] }, (e) => this.receive(pres, e), { internal: true })
    this.spaces.set(spaceId, (p = pres))
    return p
  }

  /**
   * Listens to the cursors of these spaces from now on (the module calls it as spaces open), so
   * a cursor another device sets before anything here asked for cursors is heard: a space's
   * listener made at its first cursor route missed the updates before it (issue 39). A space
   * this account may not listen to yet (a guest, a pending join) is left to its first route.
   */
  follow(spaceIds: readonly string[]): void {
    if (!this.bus) return
    for (const id of spaceIds) {
      try {
        this.presence(id)
      } catch (err) {
        this.log.debug('not listening to cursors of a space yet', { spaceId: id, err: errField(err) })
      }
    }
  }

  /** Sets this device's cursor in a block: `anchor`/`head` are indexes in the block's text. */
  async set(space: SpaceEngine, objectId: string, collection: string, blockId: string, anchor: number, head: number, name: string): Promise<CursorView> {
    const rec = await space.replica.getRecord(objectId, collection, blockId)
    if (!rec || rec.deleted || rec.value === undefined) throw new SvcError('sdk.not_found', 'block not found', { blockId, dataset: collection })
    const text = textOf(rec.value, rec.yt)
    const rel = (i: number) => toB64(Y.encodeRelativePosition(Y.createRelativePositionFromTypeIndex(text.type, Math.max(0, Math.min(i, text.type.length)))))
    const state: CursorState = { objectId, collection, blockId, anchor: rel(anchor), head: rel(head), name }
    text.done()
    const p = this.presence(space.spaceId)
    p.local.setLocalState(state)
    this.publish(space.spaceId, objectId, p)
    return (
      await this.views(
        space,
        [...p.entries.values()].filter((e) => e.self && e.clientId === p.local.clientID),
      )
    )[0]
  }

  /** Clears this device's cursor in the space, at once for everyone (the awareness null state). */
  clear(spaceId: string, objectId: string): boolean {
    const p = this.spaces.get(spaceId)
    const cur = p?.local.getLocalState() as CursorState | null | undefined
    if (!p || !cur || cur.objectId !== objectId) return false
    p.local.setLocalState(null)
    this.publish(spaceId, objectId, p)
    return true
  }

  private publish(spaceId: string, objectId: string, p: SpacePresence) {
    const update = encodeAwarenessUpdate(p.local, [p.local.clientID])
    this.bus!.publish({ type: CURSOR_TYPE, scope: 'space', spaceId, target: objectId, data: { update: toB64(update) } })
  }

  private receive(p: SpacePresence, e: DeliveredEvent) {
    const data = e.data as { update?: unknown } | undefined
    if (typeof data?.update !== 'string' || data.update.length > CURSOR_LIMITS.maxUpdateChars) return
    const who = e.sender.identity
    let aw = p.senders.get(who)
    if (!aw) {
      if (p.senders.size >= CURSOR_LIMITS.maxSendersPerSpace) return
      p.senders.set(who, (aw = quietAwareness()))
      aw.setLocalState(null)
    }
    let changed: number[] = []
    const onChange = ({ added, updated, removed }: { added: number[]; updated: number[]; removed: number[] }) => (changed = [...added, ...updated, ...removed])
    aw.on('change', onChange)
    try {
      applyAwarenessUpdate(aw, fromB64(data.update), who)
    } catch {
      return
    } finally {
      aw.off('change', onChange)
    }
    // Clients a sender ever named are remembered (y-protocols keeps their clocks): past the bound, it is heard no more.
    if (aw.meta.size > CURSOR_LIMITS.maxClientsPerSender + 1) {
      removeAwarenessStates(aw, [...aw.states.keys()], 'bound')
      for (const k of [...p.entries.keys()]) if (k.startsWith(`${who}/`)) this.drop(p, k)
      return
    }
    for (const client of changed) this.settle(p, who, e.sender.self, aw, client)
    this.scheduleSweep(p)
  }

  private settle(p: SpacePresence, who: string, self: boolean, aw: Awareness, client: number) {
    const key = `${who}/${client}`
    const state = aw.states.has(client) ? asCursorState(aw.states.get(client)) : undefined
    if (!state) {
      this.drop(p, key)
      return
    }
    const entry: Entry = { state, identity: who, self, clientId: client, updatedAt: this.env.now() }
    p.entries.set(key, entry)
    for (const w of p.watchers) w('set', entry)
  }

  private drop(p: SpacePresence, key: string) {
    const entry = p.entries.get(key)
    if (!entry) return
    p.entries.delete(key)
    const aw = p.senders.get(entry.identity)
    if (aw?.states.has(entry.clientId)) removeAwarenessStates(aw, [entry.clientId], 'timeout')
    for (const w of p.watchers) w('removed', entry)
  }

  /** One timer per space while it lists cursors: removes those not renewed within the timeout. */
  private scheduleSweep(p: SpacePresence) {
    if (p.stopSweep || p.entries.size === 0) return
    const tick = Math.max(10, Math.floor(this.timeoutMs / 4))
    p.stopSweep = this.env.setTimer(tick, () => {
      p.stopSweep = undefined
      const cutoff = this.env.now() - this.timeoutMs
      for (const [k, e] of [...p.entries]) if (e.updatedAt <= cutoff) this.drop(p, k)
      this.scheduleSweep(p)
    })
  }

  /** The cursors in one object, each resolved against the block's text on this replica. */
  async list(space: SpaceEngine, objectId: string): Promise<CursorView[]> {
    const p = this.presence(space.spaceId)
    return this.views(
      space,
      [...p.entries.values()].filter((e) => e.state.objectId === objectId),
    )
  }

  /** Changes of the cursors in one object, as they happen (the stream route). */
  watch(space: SpaceEngine, objectId: string, fn: (c: CursorChange) => void): () => void {
    const p = this.presence(space.spaceId)
    const w = (action: CursorChange['action'], e: Entry) => {
      if (e.state.objectId !== objectId) return
      void this.views(space, [e]).then(
        ([cursor]) => fn({ action, cursor }),
        () => undefined,
      )
    }
    p.watchers.add(w)
    return () => p.watchers.delete(w)
  }

  private async views(space: SpaceEngine, entries: Entry[]): Promise<CursorView[]> {
    const out: CursorView[] = []
    for (const e of entries) {
      const s = e.state
      const rec = await space.replica.getRecord(s.objectId, s.collection, s.blockId).catch((err: unknown) => {
        // Shown without its text, like a cursor in a block not synced yet.
        space.log.debug("reading a cursor's block failed", { objectId: s.objectId, err: errField(err) })
        return undefined
      })
      const text = rec && !rec.deleted && rec.value !== undefined ? textOf(rec.value, rec.yt) : undefined
      const at = (rel: string): CursorPos => {
        let index: number | null = null
        if (text) {
          try {
            index = Y.createAbsolutePositionFromRelativePosition(Y.decodeRelativePosition(fromB64(rel)), text.doc)?.index ?? null
          } catch {
            index = null
          }
        }
        return { rel, index }
      }
      out.push({
        clientId: e.clientId,
        identity: e.identity,
        self: e.self,
        name: s.name,
        objectId: s.objectId,
        collection: s.collection,
        blockId: s.blockId,
        anchor: at(s.anchor),
        head: at(s.head),
        updatedAt: e.updatedAt,
      })
      text?.done()
    }
    return out.sort((a, b) => (a.identity < b.identity ? -1 : a.identity > b.identity ? 1 : a.clientId - b.clientId))
  }

  /** Clean disconnect: our cursors are cleared for everyone at once; nothing is heard after. */
  close(): void {
    for (const [spaceId, p] of this.spaces) {
      const cur = p.local.getLocalState() as CursorState | null
      if (cur) {
        p.local.setLocalState(null)
        try {
          this.publish(spaceId, cur.objectId, p)
        } catch (err) {
          // The bus may be closed already; the timeout then does it.
          this.log.debug('clearing our cursors on close failed', { spaceId, err: errField(err) })
        }
      }
      p.sub.close()
      p.stopSweep?.()
    }
    this.spaces.clear()
  }
}

/**
 * The block's text as a Y.Text to anchor positions in: the merged text state when the block has
 * one (read only), else a doc holding the seed of its plain string, whose items are the very ones
 * the first edit will seed on every replica (ytext.ts), so positions taken now resolve later.
 */
function textOf(value: unknown, yt: Record<string, unknown> | undefined): { doc: Y.Doc; type: Y.Text; done: () => void } {
  if (yt && Object.prototype.hasOwnProperty.call(yt, TEXT_FIELD)) {
    const doc = YTextField.from(yt[TEXT_FIELD] as YTextField).liveDoc()
    return { doc, type: doc.getText(YTEXT_ROOT), done: () => undefined }
  }
  const doc = newDoc()
  const s = getPath(value as never, TEXT_FIELD)
  const seed = typeof s === 'string' ? seedUpdate(s) : undefined
  if (seed) Y.applyUpdate(doc, seed)
  return { doc, type: doc.getText(YTEXT_ROOT), done: () => doc.destroy() }
}
