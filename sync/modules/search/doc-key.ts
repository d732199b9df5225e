/**
 * Every indexed document has one key: `<objectId>/<scope>` for what an object row holds (its
 * name and description, its property values of a scope), `<objectId>/<scope>/<collection>/
 * <recordId>` for a record (a block, a message, a declared dataset's record). Object ids,
 * scope slugs and collection names never hold a `/`; a record id may, so it comes last.
 */
export interface DocRef {
  objectId: string
  scope: string
  collection?: string
  recordId?: string
}

export function docKey(r: DocRef): string {
  return r.collection === undefined ? `${r.objectId}/${r.scope}` : `${r.objectId}/${r.scope}/${r.collection}/${r.recordId}`
}

export function parseDocKey(key: string): DocRef {
  const a = key.indexOf('/')
  const b = key.indexOf('/', a + 1)
  if (b < 0) return { objectId: key.slice(0, a), scope: key.slice(a + 1) }
  const c = key.indexOf('/', b + 1)
  return { objectId: key.slice(0, a), scope: key.slice(a + 1, b), collection: key.slice(b + 1, c), recordId: key.slice(c + 1) }
}

/** The scope of a key without allocating a DocRef (the search filter runs it per candidate). */
export function scopeOfKey(key: string): string {
  const a = key.indexOf('/')
  const b = key.indexOf('/', a + 1)
  return b < 0 ? key.slice(a + 1) : key.slice(a + 1, b)
}

export function objectOfKey(key: string): string {
  return key.slice(0, key.indexOf('/'))
}
