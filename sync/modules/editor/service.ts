import { mergeText } from './text-merge.ts'
import { SvcError } from '../../core/errors.ts'
import { SerialQueue } from '../../core/serial-queue.ts'
import { toBase58 } from '../../core/ids.ts'
import type { Json, JsonObject, Op } from '../../crdt/ops.ts'
import {
  appendMarkdown,
  diffMarkdown,
  isValidPos,
  patchMarkdown,
  posGenerator,
  renderBlocks,
  sortBlocks,
  summarize,
  type Block,
  type DiffResult,
  type EditSummary,
  type MarkdownEdit,
  type PosGen,
} from './index.ts'
import type { WriteResult } from '../../replica/types.ts'
import { TEXT_FIELD, withTextDeltas } from './text-deltas.ts'
import { asStringArray, isJsonObject } from '../../space/rows.ts'
import type { SpaceEngine } from '../../space/space-engine.ts'
import type { TypesService } from '../../space/types/index.ts'

/** The shared editor collection; any object (a document) may hold it. */
export const EDITOR_BLOCKS = 'editor_blocks'
/** The `module` value of editor dataset declarations. */
export const EDITOR_KIND = 'editor'

/** Body of `POST /blocks` (spec "Editor block"; `checked` and `rows` are the module's additions). */
export interface BlockCreateBody {
  type: string
  style?: string
  text?: string
  checked?: boolean
  rows?: string[][]
  nav?: { pos?: string; depth?: number }
}

/** Body of `PATCH /blocks/:blockId`: dotted path -> value, and paths to remove. */
export interface BlockPatchBody {
  set?: Record<string, unknown>
  unset?: string[]
  /** The text `set.text` was typed against: the edit is merged onto the text now (text-merge.ts). */
  textBase?: string
}

/** Fields a block must keep (spec: required fields cannot be unset). */
const REQUIRED = new Set(['type'])
/** Paths that are not record fields (the record id, the version stamp of query docs). */
const RESERVED_ROOTS = new Set(['id', '_ver'])

const invalid = (field: string, message: string, extra: Record<string, unknown> = {}) => new SvcError('request.invalid_field', message, { field, ...extra })

/** Random bytes per id and tie-breaker: 12 (base58, about 16 characters). */
const RANDOM_BYTES = 12

/**
 * The editor endpoints (spec "Editor", docs/editor.md) over one space: resolves the editor
 * collection of an object, reads its blocks, and writes what the pure editor module computes as
 * ONE change of per-block merge ops (a changed block is one record touched, never a rewrite).
 */
export class EditorService {
  /** Read-diff-write runs one at a time per space, so a diff is never computed on stale blocks. */
  private readonly queue = new SerialQueue()
  /**
   * Text edits are Yjs updates (text-deltas.ts); off, they are plain sets of the leaf (the
   * behaviour before the text kind, kept for bench/ytext.ts's baseline).
   */
  textDeltas = true
  /** This process's part of its Yjs client id (ytext.ts, clientIdFor): two devices of one account never share one. */
  private readonly textSalt: string

  /** One per space, built by the editor module when the space opens (module.ts). */
  constructor(
    readonly space: SpaceEngine,
    private readonly types: TypesService,
  ) {
    this.textSalt = toBase58(space.env.randomBytes(8))
  }

  /** A new block id: 12 random bytes in base58 (the space's Env, so a simulation is reproducible). */
  private newBlockId = (): string => toBase58(this.space.env.randomBytes(RANDOM_BYTES))

  /** One position generator per change: a random tie-breaker, so concurrent inserts never collide. */
  private changePos(): PosGen {
    return posGenerator(this.space.env.randomBytes(RANDOM_BYTES))
  }

  private serial<T>(fn: () => Promise<T>): Promise<T> {
    return this.queue.run(fn)
  }

  /**
   * Checks that `collection` is an editor dataset the object may hold: `editor_blocks` (shared)
   * or `<typeId>_<key>`, declared with the editor module by a type the object carries (spec
   * "Editor", also for `editor_blocks`). 404 `object.not_found`, 404 `dataset.not_found` (not an
   * editor dataset), 400 `dataset.not_declared` (no carried type declares it).
   */
  async resolve(objectId: string, collection: string): Promise<void> {
    const row = this.space.requireObject(objectId)
    const decls = (await this.types.declarationsOf(collection)).filter((d) => d.module === EDITOR_KIND)
    // The canonical collection is an editor dataset even before any type declares it.
    if (decls.length === 0 && collection !== EDITOR_BLOCKS) throw new SvcError('dataset.not_found', 'not an editor dataset', { dataset: collection })
    const carried = asStringArray((row.core as JsonObject | undefined)?.types)
    if (!decls.some((d) => carried.includes(d.typeId))) {
      throw new SvcError('dataset.not_declared', 'the object carries no type declaring this editor dataset', { dataset: collection, objectId, owners: decls.map((d) => d.typeId) })
    }
  }

  /**
   * The live blocks of an object's editor collection (unsorted; the module sorts by `nav.pos`),
   * as of every commit so far. Read from the space's dataset cache, which the commit feed keeps
   * current record by record: listing and decoding every block from storage was about half of
   * a one-paragraph PUT on a 1,000-block document.
   */
  async blocks(objectId: string, collection: string): Promise<Block[]> {
    await this.space.settled()
    const out: Block[] = []
    for (const d of await this.space.datasetSource(objectId, collection)) {
      const { _ver: _, ...rest } = d as Record<string, unknown>
      out.push(rest as unknown as Block)
    }
    return out
  }

  /** GET /markdown: the rendering in normal form. */
  async markdown(objectId: string, collection: string): Promise<string> {
    await this.resolve(objectId, collection)
    return renderBlocks(await this.blocks(objectId, collection))
  }

  /** PUT /markdown: parse, diff, per-block ops. */
  put(objectId: string, collection: string, content: string): Promise<EditSummary> {
    return this.serial(async () => {
      await this.resolve(objectId, collection)
      const diff = diffMarkdown(await this.blocks(objectId, collection), content, this.changePos())
      return this.applyDiff(objectId, collection, diff)
    })
  }

  /** PATCH /markdown: exact-text edits of the rendering, all or nothing, then as PUT. */
  patch(objectId: string, collection: string, edits: MarkdownEdit[]): Promise<EditSummary> {
    return this.serial(async () => {
      await this.resolve(objectId, collection)
      const diff = patchMarkdown(await this.blocks(objectId, collection), edits, this.changePos())
      return this.applyDiff(objectId, collection, diff)
    })
  }

  /** POST /markdown/append: inserts only, after the last block. */
  append(objectId: string, collection: string, content: string): Promise<EditSummary> {
    return this.serial(async () => {
      await this.resolve(objectId, collection)
      const diff = appendMarkdown(await this.blocks(objectId, collection), content, this.changePos())
      return this.applyDiff(objectId, collection, diff)
    })
  }

  /** Writes a diff as one change (none when nothing changed) and returns its summary. */
  async applyDiff(objectId: string, collection: string, diff: DiffResult): Promise<EditSummary> {
    const ops = await this.textOps(objectId, diffOps(collection, diff, this.newBlockId))
    if (ops.length > 0) await this.space.write(objectId, ops)
    return summarize(diff)
  }

  /** POST /blocks: one new block, after the last one unless `nav.pos` is given; stored as given. */
  createBlock(objectId: string, collection: string, body: BlockCreateBody): Promise<WriteResult> {
    return this.serial(async () => {
      await this.resolve(objectId, collection)
      if (typeof body.type !== 'string' || body.type === '') throw invalid('type', 'type is a non-empty string')
      let pos = body.nav?.pos
      if (pos !== undefined && !isValidPos(pos)) throw invalid('nav.pos', 'nav.pos is not a valid position key')
      if (pos === undefined) {
        const sorted = sortBlocks(await this.blocks(objectId, collection))
        let last: string | undefined
        for (let i = sorted.length - 1; i >= 0 && last === undefined; i--) last = isValidPos(sorted[i].nav?.pos) ? sorted[i].nav!.pos : undefined
        pos = this.changePos()(last, undefined)
      }
      const value: Record<string, Json> = { type: body.type }
      if (body.style !== undefined) value.style = body.style
      if (body.text !== undefined) value.text = body.text
      if (body.checked !== undefined) value.checked = body.checked
      if (body.rows !== undefined) value.rows = body.rows
      const nav: Record<string, Json> = { pos }
      if (body.nav?.depth !== undefined && body.nav.depth > 0) nav.depth = body.nav.depth
      value.nav = nav
      const id = this.newBlockId()
      const res = await this.space.write(objectId, [{ op: 'set', ds: collection, id, path: '', value }])
      res.recordIds = [id]
      return res
    })
  }

  /** PATCH /blocks/:blockId: per-path set and unset in one change; `type` cannot be unset. */
  patchBlock(objectId: string, collection: string, blockId: string, body: BlockPatchBody): Promise<WriteResult> {
    return this.serial(async () => {
      await this.resolve(objectId, collection)
      await this.requireBlock(objectId, collection, blockId)
      const set = await this.rebased(objectId, collection, blockId, body)
      const unset = body.unset ?? []
      const ops: Op[] = []
      for (const [path, value] of Object.entries(set)) {
        checkPath(`set.${path}`, path)
        if (path === 'type' && (typeof value !== 'string' || value === '')) throw invalid('set.type', 'type is a non-empty string')
        if (path === 'nav.pos' && !isValidPos(value)) throw invalid('set.nav.pos', 'nav.pos is not a valid position key')
        if (value === undefined) throw invalid(`set.${path}`, 'a set needs a value')
        ops.push({ op: 'set', ds: collection, id: blockId, path, value: value as Json })
      }
      unset.forEach((path, i) => {
        checkPath(`unset.${i}`, path)
        if (REQUIRED.has(path)) throw invalid(`unset.${i}`, `${path} is required and cannot be unset`, { path })
        if (Object.prototype.hasOwnProperty.call(set, path)) throw invalid(`unset.${i}`, 'a path is both set and unset', { path })
        ops.push({ op: 'unset', ds: collection, id: blockId, path })
      })
      if (ops.length === 0) throw new SvcError('request.missing_field', 'give at least one path to set or unset', { field: 'set' })
      const res = await this.space.write(objectId, await this.textOps(objectId, ops))
      res.recordIds = [blockId]
      return res
    })
  }

  /** DELETE /blocks/:blockId: tombstones the block; children are not cascaded. */
  deleteBlock(objectId: string, collection: string, blockId: string): Promise<WriteResult> {
    return this.serial(async () => {
      await this.resolve(objectId, collection)
      await this.requireBlock(objectId, collection, blockId)
      const res = await this.space.write(objectId, [{ op: 'delete', ds: collection, id: blockId }])
      res.recordIds = [blockId]
      return res
    })
  }

  /** `set` with its text merged onto the block's text now, when the client named the text it typed against. */
  private async rebased(objectId: string, collection: string, blockId: string, body: BlockPatchBody): Promise<Record<string, unknown>> {
    const set = body.set ?? {}
    if (body.textBase === undefined) return set
    const mine = set[TEXT_FIELD]
    if (typeof mine !== 'string') throw invalid('textBase', 'textBase goes with a string set.text')
    const doc = await this.space.recordDoc(objectId, collection, blockId)
    const now = doc?.[TEXT_FIELD]
    return { ...set, [TEXT_FIELD]: mergeText(body.textBase, mine, typeof now === 'string' ? now : '') }
  }

  private textOps(objectId: string, ops: Op[]): Promise<Op[]> | Op[] {
    return this.textDeltas ? withTextDeltas(this.space, objectId, ops, this.textSalt) : ops
  }

  private async requireBlock(objectId: string, collection: string, blockId: string): Promise<void> {
    if (!(await this.space.recordDoc(objectId, collection, blockId))) throw new SvcError('sdk.not_found', 'block not found', { blockId, dataset: collection })
  }
}

function checkPath(field: string, path: string) {
  if (path === '') throw invalid(field, 'the whole block cannot be set or unset; name a field')
  const root = path.split('.')[0]
  if (RESERVED_ROOTS.has(root)) throw invalid(field, `${root} is not a block field`, { path })
}

/**
 * The merge ops of a diff (docs/editor.md "Diff"): an insert is one whole-record set of
 * `{...draft, nav: {...draft.nav, pos}}` under a fresh id; an update a set per changed path and
 * an unset per removed path; a delete a tombstone.
 */
export function diffOps(ds: string, diff: DiffResult, newId: () => string): Op[] {
  const ops: Op[] = []
  for (const { draft, pos } of diff.inserts) {
    // JSON round trip drops fields a draft holds as undefined (not storable).
    const value = JSON.parse(JSON.stringify({ ...draft, nav: { ...(draft.nav ?? {}), pos } })) as JsonObject
    if (!isJsonObject(value)) continue
    ops.push({ op: 'set', ds, id: newId(), path: '', value })
  }
  for (const u of diff.updates) {
    for (const [path, value] of Object.entries(u.set)) ops.push({ op: 'set', ds, id: u.id, path, value: value as Json })
    for (const path of u.unset) ops.push({ op: 'unset', ds, id: u.id, path })
  }
  for (const id of diff.deletes) ops.push({ op: 'delete', ds, id })
  return ops
}
