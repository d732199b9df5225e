import { decodeCanonical, encodeCanonical } from '../core/encoding.ts'
import { STORES, type StorageAdapter } from '../storage/adapter.ts'
import { storedVersionOf } from './record-codec.ts'
import { LEGACY_VERSION_SEQ_KEY, versionSeqKey } from './storage-keys.ts'

/**
 * The space's local apply counter as stored: its own key (`versionSeq/<space>`), written in the
 * same atomic batch as every commit that bumps it, so it never goes back across restarts.
 *
 * A space without its own key was last written before issue 42, when every space of the store
 * shared one counter (`versionSeq`) and reloaded at open whatever space wrote last: its own
 * versions then could be above that value (issue 42: A handed out 31, B then wrote 13). It
 * starts from the highest number the store can show it handed out: the shared value, and the
 * highest `v` of its records (each record keeps the version of the last change that touched
 * it). The versions of commits that touched no record after its last record write (ACL records,
 * void changes) leave no trace and are the one thing this cannot see. The value is written
 * under the space's own key at once, so the migration runs once per space. A store made after
 * issue 42 has no shared key and every new space starts at 0.
 */
export async function loadVersionSeq(storage: StorageAdapter, spaceId: string): Promise<number> {
  const own = await storage.get(STORES.meta, versionSeqKey(spaceId))
  if (own) return decodeCanonical<number>(own)
  const shared = await storage.get(STORES.meta, LEGACY_VERSION_SEQ_KEY)
  if (!shared) return 0
  const records = await storage.scan(STORES.records, { prefix: `${spaceId}/` })
  // Nothing of the space is stored (it is being created, or waits for sync): nothing to carry.
  if (records.length === 0 && (await storage.scan(STORES.trees, { prefix: `${spaceId}/`, limit: 1 })).length === 0) return 0
  let seq = decodeCanonical<number>(shared)
  for (const [, raw] of records) seq = Math.max(seq, storedVersionOf(raw))
  await storage.commit({ puts: [{ store: STORES.meta, key: versionSeqKey(spaceId), value: encodeCanonical(seq) }], dels: [] })
  return seq
}
