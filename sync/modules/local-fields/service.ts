import { errField } from '../../core/log.ts'
import { SerialQueue } from '../../core/serial-queue.ts'
import type { Json, JsonObject } from '../../crdt/ops.ts'
import { deepEqual } from '../../crdt/path.ts'
import { resolveUserOps, type UserOp } from '../../crdt/resolve.ts'
import { esc } from '../../replica/storage-keys.ts'
import type { WriteRejection, WriteResult } from '../../replica/types.ts'
import type { WriteBatch } from '../../storage/adapter.ts'
import type { ModuleContext } from '../../space/module.ts'
import type { Doc } from '../../space/rows.ts'
import type { ModifyBody, SpaceChange } from '../../space/space-engine.ts'
import { governingDecl, touchedFields } from '../../space/types/declared-writes.ts'
import { localField } from '../../space/types/field-rules.ts'
import { isObj } from '../../space/types/model.ts'

/** Device storage of device-local dataset fields (adapters accept any store name). */
export const LOCAL_FIELDS_STORE = 'localFields'

type FrameOp = { type: '$set' | '$unset'; path: string; value?: unknown }

/**
 * Device-local dataset fields of one space (spec "Modify and upsert bodies": `scope: local` is
 * for device-local fields only): fields a dataset declaration marks `scope: local` (listed as
 * `x-scope: local`), written with `POST {S}/modify` `scope: "local"`, stored on this device only
 * and never put in a change, so neither members nor the account's other devices see them.
 *
 * - Storage: key `<spaceId>/<objectId>/<dataset>/<recordId>` of LOCAL_FIELDS_STORE, the JSON of
 *   the record's local fields `{field: value}`; a put, or a delete once the last field goes.
 * - Reads: the overlay lays them on the record's document wherever a dataset's records become
 *   documents (queries, live windows), before filters and sorts, a local field winning over a
 *   synced value of the same name: merged on read as local property values are on rows.
 * - Writes: the ops of each record are screened (a field the declaration does not mark local is
 *   dropped, `upsert.rejected`), resolved against the stored local fields like a synced modify
 *   (`$inc`, `$addToSet`, `$pull` become sets), stored in one batch, then announced to live
 *   windows as an overlay move. A record must exist here, live: local fields annotate records,
 *   they do not create them.
 * - A record's local fields go when its tombstone (or its object's) is committed here.
 *
 * All of the space's local fields are read in one scan on first use and kept in memory (they
 * are few: marks a device keeps on records), so the overlay is a map lookup.
 */
export class LocalFieldsService {
  private loaded?: Promise<Map<string, JsonObject>>
  private readonly lane = new SerialQueue()
  private static readonly encoder = new TextEncoder()
  private static readonly decoder = new TextDecoder()

  constructor(private readonly ctx: ModuleContext) {}

  /** `POST {S}/modify` with `scope: local`. The write result names no change (`changeId` empty): nothing is synced. */
  modify(body: ModifyBody): Promise<WriteResult> {
    return this.lane.run(async () => {
      const space = this.ctx.space
      const decl = await governingDecl(space, body.objectId, body.dataset)
      const values = await this.values()
      const rejections: WriteRejection[] = []
      const batch: WriteBatch = { puts: [], dels: [] }
      const moved = new Map<string, FrameOp[]>()
      const next = new Map<string, JsonObject | undefined>()
      for (const rec of body.records) {
        const key = recordKey(space.spaceId, body.objectId, body.dataset, rec.id)
        const cur = next.has(key) ? next.get(key) : values.get(key)
        const stored = await space.replica.getRecord(body.objectId, body.dataset, rec.id)
        const live = stored !== undefined && !stored.deleted && stored.value !== undefined
        const ops: UserOp[] = []
        const indices: number[] = []
        const dropped: WriteRejection[] = []
        rec.ops.forEach((op, index) => {
          const problem = live
            ? touchedFields(op, cur).reduce<ReturnType<typeof localField>>((p, f) => p ?? localField(decl, f), undefined)
            : { code: stored?.deleted ? 'upsert.record_deleted' : 'upsert.rejected', reason: `record ${rec.id} is not here: device-local fields annotate existing records` }
          if (problem) dropped.push({ recordId: rec.id, index, ...problem })
          else {
            ops.push(op)
            indices.push(index)
          }
        })
        const res = resolveUserOps(cur, ops)
        for (const r of res.rejections) dropped.push({ recordId: rec.id, index: indices[r.index], code: r.code, reason: r.reason })
        rejections.push(...dropped.sort((a, b) => a.index - b.index))
        if (ops.length === 0) continue
        const after = isObj(res.doc) && Object.keys(res.doc).length ? res.doc : undefined
        const frame = diffFields(cur, after)
        if (frame.length === 0) continue
        next.set(key, after)
        moved.set(rec.id, [...(moved.get(rec.id) ?? []), ...frame])
      }
      for (const [key, after] of next) {
        if (after) batch.puts.push({ store: LOCAL_FIELDS_STORE, key, value: LocalFieldsService.encoder.encode(JSON.stringify(after)) })
        else batch.dels.push({ store: LOCAL_FIELDS_STORE, key })
      }
      if (next.size) {
        await this.ctx.storage.commit(batch)
        for (const [key, after] of next) {
          if (after) values.set(key, after)
          else values.delete(key)
        }
        await space.announceOverlay({ records: new Map([[body.objectId, new Map([[body.dataset, moved]])]]) })
      }
      const result: WriteResult = { versionId: space.replica.versionId(), changeId: '', recordIds: [...moved.keys()] }
      if (rejections.length) result.rejections = rejections
      return result
    })
  }

  /** Lays each record's local fields on its document (a copy; documents without any pass through). */
  async overlayRecords(objectId: string, dataset: string, docs: Doc[]): Promise<Doc[]> {
    const values = await this.values()
    if (values.size === 0) return docs
    const prefix = `${esc(this.ctx.space.spaceId)}/${esc(objectId)}/${esc(dataset)}/`
    return docs.map((d) => {
      const local = values.get(prefix + esc(d.id))
      return local ? { ...d, ...structuredClone(local) } : d
    })
  }

  /**
   * Drops the local fields of records (or whole objects) a committed tombstone removed. Not
   * awaited by the commit: `modify` waits, in this service's lane, for its overlay move to be
   * announced, which waits for the commit feed this hook runs in.
   */
  committed(change: SpaceChange): void {
    void this.lane
      .run(async () => {
        const values = await this.values()
        if (values.size === 0) return
        const space = this.ctx.space
        const gone: string[] = []
        for (const objectId of change.objects) {
          if (!space.replica.treeMeta(objectId)?.deleted) continue
          const prefix = `${esc(space.spaceId)}/${esc(objectId)}/`
          for (const key of values.keys()) if (key.startsWith(prefix)) gone.push(key)
        }
        for (const [objectId, perDs] of change.records) {
          for (const [dataset, perRecord] of perDs) {
            for (const id of perRecord.keys()) {
              const key = recordKey(space.spaceId, objectId, dataset, id)
              if (!values.has(key)) continue
              const r = await space.replica.getRecord(objectId, dataset, id)
              if (r?.deleted) gone.push(key)
            }
          }
        }
        if (gone.length === 0) return
        await this.ctx.storage.commit({ puts: [], dels: gone.map((key) => ({ store: LOCAL_FIELDS_STORE, key })) })
        for (const key of gone) values.delete(key)
      })
      .catch((err: unknown) => this.ctx.log.warn('dropping the local fields of deleted records failed', { spaceId: this.ctx.space.spaceId, err: errField(err) }))
  }

  /** The local fields of one record, `{field: value}` (tests and tools). */
  async fieldsOf(objectId: string, dataset: string, recordId: string): Promise<JsonObject | undefined> {
    const v = (await this.values()).get(recordKey(this.ctx.space.spaceId, objectId, dataset, recordId))
    return v === undefined ? undefined : structuredClone(v)
  }

  /** Every local field of the space, by storage key: one scan, then kept current by `modify` and `committed`. */
  private values(): Promise<Map<string, JsonObject>> {
    this.loaded ??= (async () => {
      const out = new Map<string, JsonObject>()
      const prefix = `${esc(this.ctx.space.spaceId)}/`
      for (const [k, v] of await this.ctx.storage.scan(LOCAL_FIELDS_STORE, { prefix })) {
        const parsed = JSON.parse(LocalFieldsService.decoder.decode(v)) as Json
        if (isObj(parsed)) out.set(k, parsed)
      }
      return out
    })()
    this.loaded.catch(() => (this.loaded = undefined))
    return this.loaded
  }
}

const recordKey = (spaceId: string, objectId: string, dataset: string, recordId: string) => `${esc(spaceId)}/${esc(objectId)}/${esc(dataset)}/${esc(recordId)}`

/** Top-level frame ops from one local part to the next (a whole-part `$set` becomes per-field ops). */
function diffFields(before: JsonObject | undefined, after: JsonObject | undefined): FrameOp[] {
  const ops: FrameOp[] = []
  for (const [k, v] of Object.entries(after ?? {})) if (!deepEqual(before?.[k], v)) ops.push({ type: '$set', path: k, value: v })
  for (const k of Object.keys(before ?? {})) if (after?.[k] === undefined) ops.push({ type: '$unset', path: k })
  return ops
}
