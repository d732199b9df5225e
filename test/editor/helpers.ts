import type { Block, BlockDraft, DiffResult } from '../../sync/modules/editor/index.ts'
import { positionsBetween, posGenerator, sortBlocks } from '../../sync/modules/editor/index.ts'

/** A block store keyed by id, as the engine's dataset would hold it. */
export type Store = Map<string, Block>

let nextId = 0
export const freshId = (prefix = 'b'): string => `${prefix}${(nextId++).toString(36)}`

/** Blocks for drafts, with ids and positions from one generator. */
export function materialize(drafts: BlockDraft[], token = 'seed'): Block[] {
  const keys = positionsBetween(posGenerator(token), undefined, undefined, drafts.length)
  return drafts.map((d, i) => ({ ...structuredClone(d), id: freshId(), nav: { ...(d.nav ?? {}), pos: keys[i] } }))
}

export const storeOf = (blocks: Block[]): Store => new Map(blocks.map((b) => [b.id, structuredClone(b)]))

function setPath(obj: Record<string, unknown>, path: string, value: unknown): void {
  const parts = path.split('.')
  let o = obj
  for (const p of parts.slice(0, -1)) {
    if (typeof o[p] !== 'object' || o[p] === null) o[p] = {}
    o = o[p] as Record<string, unknown>
  }
  o[parts[parts.length - 1]] = structuredClone(value)
}

function unsetPath(obj: Record<string, unknown>, path: string): void {
  const parts = path.split('.')
  let o: Record<string, unknown> | undefined = obj
  for (const p of parts.slice(0, -1)) o = o?.[p] as Record<string, unknown> | undefined
  if (o) delete o[parts[parts.length - 1]]
}

/**
 * Apply a diff's ops to a store, record by record and path by path, the way the dataset merges
 * them: an insert creates a record, an update sets/unsets paths, a delete removes the record.
 * Ops on a record that no longer exists are dropped (delete wins), as tombstones do.
 */
export function applyDiff(store: Store, diff: DiffResult, idPrefix = 'n'): Store {
  for (const ins of diff.inserts) {
    const id = freshId(idPrefix)
    store.set(id, { ...structuredClone(ins.draft), id, nav: { ...(ins.draft.nav ?? {}), pos: ins.pos } })
  }
  for (const up of diff.updates) {
    const b = store.get(up.id) as unknown as Record<string, unknown> | undefined
    if (!b) continue
    for (const [path, value] of Object.entries(up.set)) setPath(b, path, value)
    for (const path of up.unset) unsetPath(b, path)
  }
  for (const id of diff.deletes) store.delete(id)
  return store
}

export const blocksOf = (store: Store): Block[] => sortBlocks([...store.values()])

/** A block without identity or position, with keys in a stable order (for comparisons). */
export function contentOf(b: Block | BlockDraft): BlockDraft {
  const out: BlockDraft = { type: b.type }
  if (b.style !== undefined) out.style = String(b.style)
  if (b.text !== undefined) out.text = b.text
  if (b.checked !== undefined) out.checked = b.checked
  if (b.rows !== undefined) out.rows = b.rows
  const depth = b.nav?.depth
  if (depth) out.nav = { depth }
  return out
}

/** Drafts of an n-block document of mixed constructs. */
export function bigDrafts(n = 1000): BlockDraft[] {
  const out: BlockDraft[] = []
  for (let i = 0; i < n; i++) {
    const k = i % 10
    if (k === 0) out.push({ type: 'heading', style: '2', text: `Section ${i}` })
    else if (k < 5) out.push({ type: 'paragraph', text: `Paragraph ${i} with **bold**, *italic*, \`code\`, a [link](https://example.com/${i}) and [a page](svc://obj${i}).` })
    else if (k < 7) out.push({ type: 'bullet', text: `item ${i} with ~~strike~~` })
    else if (k === 7) out.push({ type: 'task', text: `task ${i}`, checked: i % 20 === 7 })
    else out.push({ type: 'quote', text: `quote ${i} for [@Ada](svc://m/space1/ada${i})` })
  }
  return out
}
