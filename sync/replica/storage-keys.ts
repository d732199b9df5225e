/**
 * Key layout of a replica in the StorageAdapter (every key names its space: one store holds
 * all the spaces of an account, so a value of one space never sits under a key of all).
 * Dataset names and record ids are caller-chosen, so they are escaped to keep '/' a separator.
 *   changes  <space>/<tree>/<changeId>        raw signed change (the ACL tree is <space>)
 *   trees    <space>/<tree>                   TreeMeta
 *   records  <space>/<tree>/<ds>/<recordId>   RecordState (the object row is ds '' id '')
 *   meta     space/<space>                    SpaceMeta
 *   meta     versionSeq/<space>               the space's local apply counter (versionId source)
 *   meta     rebuild/<space>/<tree>           a tree whose records must be re-derived
 *   meta     spaceSummary/<space>             the account's summary of a space it may close
 *                                             (sync/space/residency.ts): this device's own
 *   changeNums <space>/<chunk>               change ids that stored records name by number, a
 *                                             chunk of consecutive numbers each (change-numbers.ts)
 *   meta     versionSeq                       read only: the counter every space shared before
 *                                             issue 42 (a space without its own key starts past it)
 */
export const esc = (s: string) => (s.includes('%') || s.includes('/') ? s.replace(/%/g, '%25').replace(/\//g, '%2F') : s)
export const unesc = (s: string) => s.replace(/%2F/g, '/').replace(/%25/g, '%')

export const changeKey = (space: string, tree: string, id: string) => `${space}/${tree}/${id}`
export const treePrefix = (space: string, tree: string) => `${space}/${tree}/`
export const treeKey = (space: string, tree: string) => `${space}/${tree}`
export const recordKey = (space: string, tree: string, ds: string, id: string) => `${space}/${tree}/${esc(ds)}/${esc(id)}`
export const datasetPrefix = (space: string, tree: string, ds: string) => `${space}/${tree}/${esc(ds)}/`
export const spaceMetaKey = (space: string) => `space/${space}`
export const versionSeqKey = (space: string) => `versionSeq/${space}`
/** The one counter all spaces of a store shared before issue 42; never written any more. */
export const LEGACY_VERSION_SEQ_KEY = 'versionSeq'
export const changeNumPrefix = (space: string) => `${space}/`
/** The chunk index in base 36, 7 digits (78 billion chunks), so key order is number order. */
export const changeNumKey = (space: string, chunk: number) => `${space}/${chunk.toString(36).padStart(7, '0')}`
export const rebuildKey = (space: string, tree: string) => `rebuild/${space}/${tree}`
