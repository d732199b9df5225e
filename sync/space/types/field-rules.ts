import type { DatasetDecl } from './model.ts'

/**
 * The per-field write rules of a declared dataset, one place for every write path (upsert.ts,
 * declared-writes.ts). Codes are upsert's (spec "Upsert per-record rules" 5).
 */
export type FieldRuleCode = 'upsert.rejected' | 'upsert.immutable_field' | 'upsert.not_author'
export type FieldProblem = { code: FieldRuleCode; reason: string } | undefined

/** Fields the server stamps (`id`, `_ver`, `_traces`, `_deletedAt`, ...): never written by a caller. */
export const isStampedField = (name: string) => name === 'id' || name.startsWith('_')

/**
 * May a caller write this field in a synced write at all: not stamped, declared unless the
 * dataset is dynamic, and not device-local (those are written with `/modify` `scope: local`
 * and never enter a change; sync/modules/local-fields).
 */
export function writableField(decl: DatasetDecl, name: string): FieldProblem {
  if (isStampedField(name)) return { code: 'upsert.rejected', reason: `${name} is stamped by the server` }
  if (!decl.fields[name] && !decl.dynamic) return { code: 'upsert.rejected', reason: `undeclared field ${name}` }
  if (decl.fields[name]?.scope === 'local') return { code: 'upsert.rejected', reason: `${name} is a device-local field: write it with scope local` }
  return undefined
}

/** May a caller write this field with `/modify` `scope: local`: only a field the declaration marks `scope: local`. */
export function localField(decl: DatasetDecl | undefined, name: string): FieldProblem {
  if (decl?.fields[name]?.scope === 'local') return undefined
  return { code: 'upsert.rejected', reason: `${name} is not a device-local field of this dataset (declare it with scope local)` }
}

/**
 * May `writer` change a field of an existing record: a write-once field (declared without
 * `mutableBy`) only while it holds no value, a `mutableBy: author` field only by the record's
 * creator. Undeclared fields of a dynamic dataset are mutable by anyone.
 */
export function mutableField(decl: DatasetDecl, name: string, holdsValue: boolean, creator: string | undefined, writer: string): FieldProblem {
  const f = decl.fields[name]
  if (!f) return undefined
  if (f.mutableBy === undefined && holdsValue) return { code: 'upsert.immutable_field', reason: `${name} is write-once` }
  if (f.mutableBy === 'author' && creator !== writer) return { code: 'upsert.not_author', reason: `only the record's creator may change ${name}` }
  return undefined
}
