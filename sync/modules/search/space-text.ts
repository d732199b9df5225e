import { ROW_DS, ROW_ID } from '../../space/schema.ts'
import { objectRowDoc, type Doc } from '../../space/rows.ts'
import type { SpaceEngine } from '../../space/space-engine.ts'
import { recordText, rowTexts, type Catalog } from './catalog.ts'
import { docKey, parseDocKey } from './doc-key.ts'

/**
 * What text a space holds, read from it for the index (service.ts): the index's own lifecycle
 * (start, drain, compaction, close) stays there, reading the space here.
 */

/**
 * An object's row read from the replica (a build, a reload, or a search answered while the
 * object index still loads). Without module overlays: those hold account- and device-scope
 * values, which are never indexed text.
 */
export async function storedRow(space: SpaceEngine, objectId: string): Promise<Doc | undefined> {
  const replica = space.replica
  const meta = replica.treeMeta(objectId)
  if (!meta || meta.deleted) return undefined
  const rec = await replica.getRecord(objectId, ROW_DS, ROW_ID)
  return rec && !rec.deleted && rec.value !== undefined ? objectRowDoc(objectId, space.spaceId, rec) : undefined
}

/** Every indexed document of one object, as [key, text], read from the replica. */
export async function objectTexts(space: SpaceEngine, objectId: string, catalog: Catalog): Promise<Array<[string, string]>> {
  const row = await storedRow(space, objectId)
  if (!row) return []
  const out: Array<[string, string]> = [...rowTexts(row, catalog)]
  for (const [ds, spec] of catalog.collections) {
    for (const r of await space.replica.listRecords(objectId, ds)) {
      if (r.deleted || r.value === undefined) continue
      const t = recordText(r.value as Doc, spec)
      if (t) out.push([docKey({ objectId, scope: spec.scope, collection: ds, recordId: r.id }), t])
    }
  }
  return out
}

/** The current text of one indexed document (snippets, embeddings), or '' when it is gone. */
export async function documentText(space: SpaceEngine, catalog: Catalog, key: string): Promise<string> {
  const ref = parseDocKey(key)
  if (ref.collection === undefined) {
    const row = space.rowsReady ? space.objectDoc(ref.objectId) : await storedRow(space, ref.objectId)
    return row ? (rowTexts(row, catalog).get(key) ?? '') : ''
  }
  const spec = catalog.collections.get(ref.collection)
  const rec = spec ? await space.replica.getRecord(ref.objectId, ref.collection, ref.recordId!) : undefined
  return rec && !rec.deleted && spec ? recordText(rec.value as Doc, spec) : ''
}
