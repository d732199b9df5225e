/**
 * Key layout of a replica in the StorageAdapter (all under the space id, so a space is one
 * prefix). Dataset names and record ids are caller-chosen, so they are escaped to keep '/'
 * a separator.
 *   changes  <space>/<tree>/<changeId>        raw signed change (the ACL tree is <space>)
 *   trees    <space>/<tree>                   TreeMeta
 *   records  <space>/<tree>/<ds>/<recordId>   RecordState (the object row is ds '' id '')
 *   meta     space/<space>                    SpaceMeta
 *   meta     versionSeq                       local apply counter (versionId source)
 *   meta     rebuild/<space>/<tree>           a tree whose records must be re-derived
 */
export const esc = (s: string) => (s.includes('%') || s.includes('/') ? s.replace(/%/g, '%25').replace(/\//g, '%2F') : s)
export const unesc = (s: string) => s.replace(/%2F/g, '/').replace(/%25/g, '%')

export const changeKey = (space: string, tree: string, id: string) => `${space}/${tree}/${id}`
export const treePrefix = (space: string, tree: string) => `${space}/${tree}/`
export const treeKey = (space: string, tree: string) => `${space}/${tree}`
export const recordKey = (space: string, tree: string, ds: string, id: string) => `${space}/${tree}/${esc(ds)}/${esc(id)}`
export const datasetPrefix = (space: string, tree: string, ds: string) => `${space}/${tree}/${esc(ds)}/`
export const spaceMetaKey = (space: string) => `space/${space}`
export const VERSION_SEQ_KEY = 'versionSeq'
export const rebuildKey = (space: string, tree: string) => `rebuild/${space}/${tree}`
