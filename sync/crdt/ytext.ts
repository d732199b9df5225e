import * as Y from 'yjs'
import diff from 'fast-diff'
import { sha256 } from '@noble/hashes/sha2.js'
import { compareStamps, type LogEntry, type Stamp } from './record.ts'
import type { Json } from './ops.ts'
import { coversPath, withPath } from './path.ts'
import { YTEXT_LIMITS } from './ytext-limits.ts'
import { joinSeed, seedBytes } from './ytext-seed-bytes.ts'

/**
 * The text kind (docs/data-model.md, "Text fields"): a path whose string merges as a Yjs
 * `Y.Text`. A `ytext` op carries a Yjs update; every peer folds a path's updates with Yjs's own
 * merge (commutative, idempotent), so arrival order never matters. Beside the record's value
 * merge keeps, per text path, the merged Yjs state and the highest stamp of the updates folded
 * into it. Against `set`/`unset`, stamp order decides: when the latest op covering the path (on
 * it or an ancestor) is a `set`/`unset`, the path holds what that op left; when it is a text
 * update, the path holds the Yjs text. A writer whose Yjs text differs from the path's string
 * (a `set` replaced it) first rewrites the Yjs text to that string, so later updates apply on
 * top of the set.
 */

/** The name of the one `Y.Text` in each path's doc. */
export const YTEXT_ROOT = 't'

/**
 * The Yjs client id of a writer: 48 bits of sha256(author, salt). Changes are signed by the
 * account, so the salt (chosen per writing process) keeps two devices of one account apart;
 * merge checks every inserted item carries this id, so nobody writes under another's.
 */
export function clientIdFor(author: string, salt: string): number {
  const key = `w\u0000${author}\u0000${salt}`
  let id = writerIds.get(key)
  if (id === undefined) {
    // A sync backlog folds many updates of few writers: hash each writer once (bounded cache).
    if (writerIds.size >= 1024) writerIds.clear()
    writerIds.set(key, (id = idFrom(key)))
  }
  return id
}
const writerIds = new Map<string, number>()

/**
 * The client id of a seed: an item that puts a whole string at the start of an empty text. It is
 * content-addressed, so two writers seeding the same string write the very same item (same id,
 * same content, no origins) and Yjs keeps it once; that is what keeps a legacy string or a
 * `set`'s string from being doubled when two replicas start editing it concurrently.
 */
export function seedClientFor(text: string): number {
  // The writer seeds a block's text and its own fold checks the same seed right after: hash once.
  if (text !== lastSeed?.text) lastSeed = { text, id: idFrom(`s\u0000${text}`) }
  return lastSeed.id
}
let lastSeed: { text: string; id: number } | undefined

const enc = new TextEncoder()
function idFrom(s: string): number {
  const h = sha256(enc.encode(s))
  // 48 bits stay exact in a double and in lib0's varuint; 0 is avoided (never a valid hash here).
  return h[0] * 2 ** 40 + h[1] * 2 ** 32 + ((h[2] << 24) >>> 0) + (h[3] << 16) + (h[4] << 8) + h[5] || 1
}

/**
 * A scratch Y.Doc. A guid is given: Yjs would otherwise draw a random UUID, about 30 calls to the
 * platform's CSPRNG, which made a doc cost more than the edit it carries. Docs here are never
 * synced as documents, so their guid is never read.
 */
export const newDoc = (): Y.Doc => new Y.Doc({ gc: true, guid: 'svc-ytext' })

/** Updates a field remembers having folded (YTextField.foldedLog): a writer's kept doc catches up on at most these. */
export const FOLDED_LOG = 64

/**
 * Updates a stored field carries after its base state (`p`) before the state is encoded anew:
 * up to this share of the base's length (base64 characters), so a stored row grows by at most
 * that much, and a long text's state (190 KB for 10,000 characters typed at random places by
 * two writers, 5 ms to encode) is encoded once every few hundred edits instead of every edit.
 */
export const PENDING_SHARE = 1 / 4

/** The stored form of a field: the state `u` (base64), then the updates folded since, in order. */
export interface StoredYText {
  s: Stamp
  u: string
  p?: string[]
}

/**
 * A text path's merge state; stored (JSON) as `{s, u, p?}` (StoredYText), held live as a Y.Doc
 * while cached. A state is the same whichever way it is written down: the doc decoded from `u`
 * and then `p`, in order, holds what the doc that folded them holds.
 */
export class YTextField {
  private doc: Y.Doc | undefined
  private bytes: Uint8Array | undefined
  private text: string | undefined
  /** The updates folded since `u` (base64, in order), and their length in characters. */
  private pending: string[]
  private pendingChars = 0
  /** The last item patchedText placed and its index: finds the next edit near it without a walk to the end. */
  anchor: Anchor | undefined
  /**
   * Updates folded into this instance, and the last FOLDED_LOG of them as their ops carried
   * them, oldest first: a writer's kept doc is used only on the field it was written on, once
   * that folded its update, and it first folds whatever else the field folded since
   * (ytext-writer-docs.ts). Each update is at most YTEXT_LIMITS.maxUpdateBytes, and no more
   * than what it added to the state this field holds anyway.
   */
  folded = 0
  readonly foldedLog: string[] = []
  constructor(
    public s: Stamp,
    private u: string | undefined,
    pending?: readonly string[],
  ) {
    this.pending = u !== undefined && pending ? [...pending] : []
    for (const x of this.pending) this.pendingChars += x.length
  }

  static from(x: YTextField | StoredYText): YTextField {
    return x instanceof YTextField ? x : new YTextField(x.s, x.u, x.p)
  }

  /** A field whose state is `doc` (a doc nothing else holds or writes in any more). */
  static holding(s: Stamp, doc: Y.Doc): YTextField {
    const field = new YTextField(s, undefined)
    field.attach(doc)
    return field
  }

  liveDoc(): Y.Doc {
    if (!this.doc) {
      const doc = newDoc()
      if (this.u) Y.applyUpdate(doc, fromB64(this.u))
      for (const x of this.pending) Y.applyUpdate(doc, fromB64(x))
      this.attach(doc)
    }
    return this.doc!
  }

  private attach(doc: Y.Doc) {
    this.doc = doc
    const text = doc.getText(YTEXT_ROOT)
    text.observe((_e, tr) => {
      if (this.text === undefined) this.anchor = undefined
      else this.text = patchedText(this.text, text, tr, this)
    })
  }

  /** Counts an update folded in (absorb), as its op carried it (base64). */
  noteFolded(update: string) {
    this.folded++
    this.foldedLog.push(update)
    if (this.foldedLog.length > 2 * FOLDED_LOG) this.foldedLog.splice(0, this.foldedLog.length - FOLDED_LOG)
  }

  /** The last `n` updates folded, oldest first, or undefined when the log no longer holds them all. */
  lastFoldedUpdates(n: number): readonly string[] | undefined {
    if (n < 0 || n > this.foldedLog.length || n > FOLDED_LOG) return undefined
    return this.foldedLog.slice(this.foldedLog.length - n)
  }

  /**
   * Folds one update in (Yjs merge) and moves the stamp forward; the text follows (patchedText).
   * `b64`: the update as its op carried it; given, the stored form keeps the state it had and
   * appends the update (while the updates appended stay within PENDING_SHARE of the state).
   */
  absorb(update: Uint8Array, s: Stamp, b64?: string) {
    Y.applyUpdate(this.liveDoc(), update)
    if (compareStamps(s, this.s) > 0) this.s = s
    this.bytes = undefined
    if (this.u !== undefined && b64 !== undefined && this.pendingChars + b64.length <= this.u.length * PENDING_SHARE) {
      this.pending.push(b64)
      this.pendingChars += b64.length
    } else {
      this.u = undefined
      this.pending = []
      this.pendingChars = 0
    }
  }

  value(): string {
    return (this.text ??= this.liveDoc().getText(YTEXT_ROOT).toString())
  }

  /**
   * The state bytes: one Yjs update of the whole merged state. Equal sets of updates give equal
   * bytes on every peer (test/ytext/fold.test.ts checks every delivery order); a Y.Doc never
   * writes under its own random client id here, it only applies updates.
   */
  state(): Uint8Array {
    if (this.bytes) return this.bytes
    if (!this.doc && this.u && this.pending.length === 0) return (this.bytes = fromB64(this.u))
    return (this.bytes = Y.encodeStateAsUpdate(this.liveDoc()))
  }

  /** The stored form: the state as last encoded, and the updates folded since (none after a new encode). */
  toJSON(): StoredYText {
    if (this.u === undefined) this.u = toB64(this.state())
    return this.pending.length > 0 ? { s: this.s, u: this.u, p: this.pending.slice() } : { s: this.s, u: this.u }
  }
}

/** An item of the text and its index (visible characters before it) when it was last placed. */
interface Anchor {
  item: Y.Item
  left: number
}

/** Items walked from an insert towards the end, then towards the anchor, before the whole walk. */
const NEAR_END = 32
const NEAR_ANCHOR = 512

const visible = (n: Y.Item) => (n.countable && !n.deleted ? n.length : 0)

/**
 * The string after a transaction, from the string before, without flattening the text: the
 * common edit (one run of characters typed by one writer, nothing deleted) is put at its index.
 * The index comes from the nearest known point: the end of the text (typing happens mostly
 * there), else the anchor, the item the previous edit placed (an edit in the middle is mostly
 * next to the previous one), else a walk to the end. Anything else gives undefined, and the next
 * read takes the whole text from Yjs. Observers run before Yjs merges or collects items, so the
 * transaction's new item is intact here; an anchor merged away since is simply not found.
 */
function patchedText(before: string, text: Y.Text, tr: Y.Transaction, at: { anchor: Anchor | undefined }): string | undefined {
  const anchor = at.anchor
  at.anchor = undefined
  if (tr.deleteSet.clients.size > 0) return deletedText(before, text, tr, anchor, at)
  let added: Y.Item | undefined
  for (const [client, after] of tr.afterState) {
    const from = tr.beforeState.get(client) ?? 0
    if (after === from) continue
    if (added) return undefined
    const st = Y.getItem(tr.doc.store, Y.createID(client, from))
    if (!(st instanceof Y.Item) || st.id.clock !== from || st.length !== after - from) return undefined
    added = st
  }
  if (!added || added.deleted || added.parent !== text || !(added.content instanceof Y.ContentString)) return undefined
  const { index, anchor: next } = place(added, text, anchor)
  if (index < 0 || index > before.length || before.length + added.length !== text.length) return undefined
  at.anchor = next
  return before.slice(0, index) + added.content.str + before.slice(index)
}

/**
 * The index of a just-inserted item: from the end when near it, else from the anchor, else the
 * whole walk. The anchor then follows: an insert found near the end leaves it where it was (moved
 * right when it lies among those last items), any other becomes the anchor.
 */
function place(added: Y.Item, text: Y.Text, anchor: Anchor | undefined): { index: number; anchor: Anchor | undefined } {
  let right = 0
  let anchorRight = false
  let n = added.right
  for (let k = 0; n !== null && k < NEAR_END; k++, n = n.right) {
    if (anchor && n === anchor.item) anchorRight = true
    right += visible(n)
  }
  if (n === null) {
    const index = text.length - added.length - right
    const kept = anchor && !anchor.item.deleted ? { item: anchor.item, left: anchorRight ? anchor.left + added.length : anchor.left } : undefined
    return { index, anchor: kept }
  }
  let index = -1
  if (anchor && !anchor.item.deleted) {
    // The anchor's index was taken before this insert: right of the new item it already counted
    // what is between; left of it, the new item starts after the anchor and what follows it.
    let between = 0
    let r: Y.Item | null = added.right
    let l: Y.Item | null = added.left
    for (let k = 0; k < NEAR_ANCHOR && (r !== null || l !== null) && index < 0; k++) {
      if (r === anchor.item) index = anchor.left - between
      else if (l === anchor.item) index = anchor.left + visible(anchor.item) + betweenLeft(added, anchor.item)
      else {
        if (r !== null) {
          between += visible(r)
          r = r.right
        }
        if (l !== null) l = l.left
      }
    }
  }
  if (index < 0) {
    for (; n !== null; n = n.right) right += visible(n)
    index = text.length - added.length - right
  }
  return { index, anchor: { item: added, left: index } }
}

/** Visible characters strictly between `from` (an item left of `to`) and `to`. */
function betweenLeft(to: Y.Item, from: Y.Item): number {
  let between = 0
  for (let n = from.right; n !== null && n !== to; n = n.right) between += visible(n)
  return between
}

/**
 * A transaction that only deleted: each deleted item's index in the string before is counted
 * from the end (visible items right of it, plus the ones this transaction deleted), and the
 * items are cut from the right. Undefined when the transaction also added anything, or names
 * something that is not a whole string item. A surviving anchor moves left by what was cut
 * before it.
 */
function deletedText(before: string, text: Y.Text, tr: Y.Transaction, anchor: Anchor | undefined, at: { anchor: Anchor | undefined }): string | undefined {
  for (const [client, after] of tr.afterState) if (after !== (tr.beforeState.get(client) ?? 0)) return undefined
  const gone = new Set<Y.Item>()
  for (const [client, ranges] of tr.deleteSet.clients) {
    for (const r of ranges) {
      for (let clock = r.clock; clock < r.clock + r.len;) {
        const st = Y.getItem(tr.doc.store, Y.createID(client, clock))
        if (!(st instanceof Y.Item) || st.id.clock !== clock || st.parent !== text || !st.countable) return undefined
        gone.add(st)
        clock += st.length
      }
    }
  }
  if (gone.size > 64) return undefined
  const cuts: Array<[number, number]> = []
  for (const d of gone) {
    let right = 0
    for (let n = d.right; n !== null; n = n.right) if (n.countable && (!n.deleted || gone.has(n))) right += n.length
    cuts.push([before.length - right - d.length, d.length])
  }
  cuts.sort((a, b) => b[0] - a[0])
  let out = before
  for (const [i, len] of cuts) {
    if (i < 0 || i + len > out.length) return undefined
    out = out.slice(0, i) + out.slice(i + len)
  }
  if (out.length !== text.length) return undefined
  if (anchor && !gone.has(anchor.item) && !anchor.item.deleted) {
    let left = anchor.left
    for (const [i, len] of cuts) if (i < anchor.left) left -= len
    at.anchor = { item: anchor.item, left }
  }
  return out
}

export type YTextMap = Record<string, YTextField | StoredYText>

// Node's Buffer where there is one (fast for large states), else btoa/atob (pages have no
// Buffer: the browser suite caught `Buffer is not defined`). Both write standard padded base64,
// and read what the other writes alike.
type NodeBuffer = { from(a: ArrayBufferLike | string, o?: number | string, l?: number): Uint8Array & { toString(enc: string): string } }
const NodeBuf = (globalThis as { Buffer?: NodeBuffer }).Buffer
export const toB64 = (b: Uint8Array): string => {
  if (NodeBuf) return NodeBuf.from(b.buffer, b.byteOffset, b.byteLength).toString('base64')
  let bin = ''
  for (let i = 0; i < b.length; i += 0x8000) bin += String.fromCharCode(...b.subarray(i, i + 0x8000))
  return btoa(bin)
}
export const fromB64 = (s: string): Uint8Array => {
  if (NodeBuf) return new Uint8Array(NodeBuf.from(s, 'base64'))
  const bin = atob(s)
  const out = new Uint8Array(bin.length)
  for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i)
  return out
}

/**
 * Whether an update may be folded: it decodes, is within the size limit, and inserts only
 * plain-string items into the root text, each under the writer's client id or as a true seed
 * (content-addressed id, clock 0, no origins). Deletions may name anyone's items (that is
 * what deleting another's word is). Pure, so every peer drops the same ops.
 */
export function checkUpdate(bytes: Uint8Array, client: number): boolean {
  if (bytes.length > YTEXT_LIMITS.maxUpdateBytes) return false
  let decoded: ReturnType<typeof Y.decodeUpdate>
  try {
    decoded = Y.decodeUpdate(bytes)
  } catch {
    return false
  }
  for (const st of decoded.structs) {
    if (st instanceof Y.Skip) return false
    if (st instanceof Y.GC) {
      if (st.id.client !== client) return false
      continue
    }
    if (!(st instanceof Y.Item)) return false
    if (st.parentSub !== null) return false
    if (st.parent !== null && (st.parent as unknown) !== YTEXT_ROOT) return false
    const c = st.content
    if (!(c instanceof Y.ContentString) && !(c instanceof Y.ContentDeleted)) return false
    if (st.id.client === client) continue
    const isSeed = c instanceof Y.ContentString && st.id.clock === 0 && st.origin === null && st.rightOrigin === null && st.id.client === seedClientFor(c.str)
    if (!isSeed) return false
  }
  return true
}

/** The stamp of the latest log entry on `path` or an ancestor, if any. */
function coveringStamp(log: readonly LogEntry[], path: string): Stamp | undefined {
  for (let i = log.length - 1; i >= 0; i--) if (coversPath(log[i].p, path)) return log[i].s
  return undefined
}

/** Puts the text of every path whose latest covering op is a text update into `value`. */
export function overlayTexts(value: Json | undefined, log: readonly LogEntry[], yt: YTextMap | undefined, only?: string): Json | undefined {
  if (!yt) return value
  const paths = only !== undefined ? [only] : Object.keys(yt).sort()
  for (const p of paths) {
    const f = yt[p] as YTextField
    const cover = coveringStamp(log, p)
    if (cover && compareStamps(cover, f.s) > 0) continue
    // No comparison with the current string first: it would flatten a long text every op.
    value = withPath(value, p, f.value())
  }
  return value
}

/** What stateDigest compares of a record's text paths: each path's stamp and state bytes. */
export function ytextDigestPart(yt: YTextMap): Array<[string, Stamp, string]> {
  return Object.keys(yt)
    .sort()
    .map((p) => {
      // The state encoded now, never a stored form's state plus updates: peers compare it.
      const f = YTextField.from(yt[p])
      return [p, f.s, toB64(f.state())]
    })
}

/** Every text path's field as a live YTextField (records read from storage hold plain objects). */
export function liveFields(yt: YTextMap): Record<string, YTextField> {
  const out: Record<string, YTextField> = {}
  for (const p of Object.keys(yt)) out[p] = YTextField.from(yt[p])
  return out
}

/**
 * The writer's side: the update that turns the path's text from `current` (the string the record
 * holds now) into `next`, as a minimal character diff (fast-diff) on the path's Yjs text.
 * Undefined when nothing changes. When the Yjs text is not `current` (no text state yet, or a
 * `set` replaced it), the update first deletes the Yjs text and seeds `current`.
 */
export function textUpdate(field: YTextField | undefined, current: string, next: string, client: number): Uint8Array | undefined {
  const written = writeTextUpdate(field, current, next, client)
  written?.doc.destroy()
  return written?.update
}

/** textUpdate's update, with the doc it was written in: the field's state plus the update. */
export interface WrittenText {
  update: Uint8Array
  doc: Y.Doc
  /**
   * Every string the doc was given is well-formed UTF-16, so the doc holds what any peer holds
   * after decoding the field's state and the update. (A lone surrogate stays in the writer's doc
   * but is U+FFFD once encoded: every other peer would hold another text.)
   */
  wellFormed: boolean
  /** The field had no Yjs state and wellFormed: the doc is exactly the fold of `update` into nothing. */
  exactFold: boolean
}

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?:^|[^\uD800-\uDBFF])[\uDC00-\uDFFF]/

/**
 * textUpdate, keeping the doc it wrote in (ytext-own-update.ts keeps it for the fold or the
 * next write). `warm`: a doc holding the field's state already, written in instead of decoding
 * the state into a new one; it is the returned doc, or destroyed when nothing changes.
 */
export function writeTextUpdate(field: YTextField | undefined, current: string, next: string, client: number, warm?: Y.Doc): WrittenText | undefined {
  if ((field && field.value() === current && current === next) || (!field && current === next)) {
    warm?.destroy()
    return undefined
  }
  const doc = warm ?? newDoc()
  const ownId = doc.clientID
  if (field && !warm) Y.applyUpdate(doc, field.state())
  const fromEmpty = doc.store.clients.size === 0
  let wellFormed = !LONE_SURROGATE.test(current)
  const text = doc.getText(YTEXT_ROOT)
  // A text without Yjs state (a block's first edit) takes the seed as an insert, not as an update
  // decoded from bytes; the update then carries the seed's bytes, written without a doc.
  let seed: Uint8Array | undefined
  if (fromEmpty && current !== '') {
    seed = seedUpdate(current)
    writeSeed(doc, current)
  }
  const parts: Uint8Array[] = []
  const collect = (u: Uint8Array) => parts.push(u)
  doc.on('update', collect)
  // A writer's kept doc holds the field's state, whose string the field keeps: when that is
  // `current`, no walk of the whole text. (A split's doc holds more, and its text is `current`.)
  if (!(warm && field && field.value() === current) && text.toString() !== current) {
    // Set the writer's id only after every foreign update: Yjs renews a doc's client id when a
    // remote update touches its own.
    if (text.length > 0) {
      doc.clientID = client
      text.delete(0, text.length)
    }
    const seeded = seedUpdate(current)
    if (seeded) Y.applyUpdate(doc, seeded)
    if (text.toString() !== current) {
      // The seed was there already (deleted since): write the string as the writer's own.
      doc.clientID = client
      text.delete(0, text.length)
      text.insert(0, current)
    }
  }
  doc.clientID = client
  let at = 0
  doc.transact(() => {
    for (const [kind, s] of characterDiff(current, next)) {
      if (kind === diff.EQUAL) at += s.length
      else if (kind === diff.DELETE) text.delete(at, s.length)
      else {
        if (wellFormed && LONE_SURROGATE.test(s)) wellFormed = false
        text.insert(at, s)
        at += s.length
      }
    }
  })
  doc.off('update', collect)
  // Back to the doc's own random id: folded into, it must not take the writer's next update
  // for its own (Yjs would then pick itself a new id, with a warning).
  doc.clientID = ownId
  const edit = parts.length === 0 ? undefined : parts.length === 1 ? parts[0] : Y.mergeUpdates(parts)
  const update = seed && edit ? joinSeed(seed, edit) : (seed ?? edit)
  if (!update) {
    doc.destroy()
    return undefined
  }
  return { update, doc, wellFormed, exactFold: fromEmpty && wellFormed }
}

/**
 * fast-diff's edit script from `current` to `next`, or, when it cannot compute one, the whole
 * text replaced: on some pairs holding lone surrogates ("😀" to "😁\uDE00") it recurses until
 * the stack overflows, and an edit must never fail for that (test/routes/editor.test.ts "PUT lands an edit whose character diff cannot be computed").
 */
export function characterDiff(current: string, next: string): diff.Diff[] {
  try {
    return diff(current, next)
  } catch (err) {
    if (!(err instanceof RangeError)) throw err
    const whole: diff.Diff[] = []
    if (current !== '') whole.push([diff.DELETE, current])
    if (next !== '') whole.push([diff.INSERT, next])
    return whole
  }
}

/** The seed of a string (seedClientFor): the one update every writer makes for it. */
export function seedUpdate(s: string): Uint8Array | undefined {
  return s === '' ? undefined : seedBytes(seedClientFor(s), YTEXT_ROOT, s)
}

/**
 * Writes the seed of `s` into a doc that holds no item yet: inserted at the start of an empty
 * text, it has no origins, so it is the very item seedUpdate encodes.
 */
function writeSeed(doc: Y.Doc, s: string) {
  const writer = doc.clientID
  doc.clientID = seedClientFor(s)
  doc.getText(YTEXT_ROOT).insert(0, s)
  doc.clientID = writer
}
