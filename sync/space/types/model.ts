import { SvcError } from '../../core/errors.ts'
import type { Json, JsonObject } from '../../crdt/ops.ts'

/**
 * Shapes the types service reads and returns, and the small checks every file of it shares.
 * The data model itself is described at the top of index.ts.
 */

export type PropertyKind = 'string' | 'number' | 'boolean' | 'array' | 'object' | 'datetime'
export const PROPERTY_KINDS: readonly PropertyKind[] = ['string', 'number', 'boolean', 'array', 'object', 'datetime']

export type PropertyScope = 'synced' | 'account' | 'local'
export const PROPERTY_SCOPES: readonly PropertyScope[] = ['synced', 'account', 'local']

/** TypeInfo (spec "Type"). */
export interface TypeInfo {
  id: string
  name: string
  description: string
  iconCid: string
  xKey: string
  weight: number
  layout: string
  hidden: boolean
  meta: JsonObject
}

/** PropertyDef (spec "Property definition"). `xKey` is absent until one is set. */
export interface PropertyDef {
  id: string
  typeId: string
  kind: PropertyKind
  scope: PropertyScope
  name: string
  description: string
  xKey?: string
  meta: JsonObject
  xFormat: JsonObject
  items?: JsonObject
  properties?: JsonObject
}

/** A dataset declaration as stored (record of a type's `datasets` dataset), plus its ids. */
export interface DatasetDecl {
  id: string
  typeId: string
  partId: string
  key: string
  /** Collection name: `<typeId>_<key>`, or the module's canonical collection when shared. */
  collection: string
  module?: string
  shared?: boolean
  displayName?: string
  /** `auto` (server-derived ids, the default) or `user` (caller-chosen ids, upsert). */
  idRule: 'auto' | 'user'
  idPattern?: string
  idMaxLen?: number
  deleteBy?: 'any' | 'author'
  search?: boolean | string[]
  /** Undeclared fields are accepted (and mutable by anyone) when true. */
  dynamic?: boolean
  fields: Record<string, FieldDecl>
}

/**
 * A field of a declared dataset (the spec leaves field declarations open; this is svc's form).
 * `mutableBy` absent means write-once.
 */
export interface FieldDecl {
  type?: FieldType
  required?: boolean
  mutableBy?: 'author' | 'any'
  scope?: 'synced' | 'local'
  description?: string
}
export type FieldType = 'string' | 'number' | 'integer' | 'boolean' | 'array' | 'object' | 'datetime' | 'any'
export const FIELD_TYPES: readonly FieldType[] = ['string', 'number', 'integer', 'boolean', 'array', 'object', 'datetime', 'any']

/** Part (spec "Part and dataset definition"). */
export interface PartDef {
  id: string
  typeId: string
  key: string
  name?: string
  icon?: string
  pos?: number
  hidden?: boolean
  ui?: JsonObject
  uses?: string[]
  datasets: DatasetDecl[]
}

/** `{set: {path: value}, unset: [path]}`: the patch body of properties, parts and datasets. */
export interface SetUnsetBody {
  set?: Record<string, unknown>
  unset?: unknown[]
}

// ------------------------------------------------------------------------------- checks

export const isObj = (v: unknown): v is JsonObject => typeof v === 'object' && v !== null && !Array.isArray(v) && !(v instanceof Uint8Array)

export const invalidField = (field: string, message: string, extra?: Record<string, unknown>) => new SvcError('request.invalid_field', message, { field, ...extra })

/** A code-side handle (type or property xKey). */
export const XKEY_RE = /^[A-Za-z0-9_][A-Za-z0-9_.:/@+-]{0,127}$/

/** Keys that may never name an option, meta, config or vendor entry (they collide with wire or JS names). */
export function isReservedKey(k: string): boolean {
  return k === '' || k.startsWith('$') || k.startsWith('_') || k === 'constructor' || k === 'prototype' || k.includes('.')
}

/** Option, meta and config keys: short slugs, not reserved. */
export const ENTRY_KEY_RE = /^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/

/** Reads a body as a `{set, unset}` patch; same path in both or nothing given is refused. */
export function readSetUnset(body: unknown): { set: Array<[string, unknown]>; unset: string[] } {
  if (!isObj(body)) throw new SvcError('request.invalid_field', 'body must be an object', { field: '' })
  const set = body.set === undefined ? {} : body.set
  const unset = body.unset === undefined ? [] : body.unset
  if (!isObj(set)) throw invalidField('set', 'set must be an object of path to value')
  if (!Array.isArray(unset) || !unset.every((p) => typeof p === 'string')) throw invalidField('unset', 'unset must be an array of paths')
  const setEntries = Object.entries(set) as Array<[string, unknown]>
  if (setEntries.length === 0 && unset.length === 0) throw new SvcError('request.missing_field', 'give at least one path in set or unset')
  for (const p of unset) if (Object.hasOwn(set, p)) throw invalidField(p, 'the same path is in set and unset', { path: p })
  return { set: setEntries, unset: unset }
}

export const jsonClone = <T extends Json>(v: T): T => structuredClone(v)
