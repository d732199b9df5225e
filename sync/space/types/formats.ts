import { SvcError } from '../../core/errors.ts'
import type { Json, JsonObject } from '../../crdt/ops.ts'
import { compileFilter } from '../../query/filter.ts'
import { ENTRY_KEY_RE, isObj, isReservedKey, PROPERTY_KINDS, type PropertyKind } from './model.ts'

/**
 * Property format slugs (`xFormat.type`) per kind, and the value shape each slug accepts.
 * The spec names `choice`, `relation`, `period`, `money`, `geo` and leaves the rest open
 * (core.md, PropertyDef rule 7); this is svc's table. The first slug of a kind is its default,
 * used when a definition has no `xFormat.type`. A slug moves only within its kind (rule 2).
 * The server checks shape, never membership (rule 3): a `choice` value is any string, a
 * relation's target is not looked up.
 *
 * | kind     | slug        | value                                                                 |
 * |----------|-------------|-----------------------------------------------------------------------|
 * | string   | text        | any string                                                            |
 * |          | email       | `local@domain.tld`, no spaces                                         |
 * |          | url         | absolute URL with a scheme (`https://...`, `mailto:...`)              |
 * |          | phone       | `+`, digits, spaces, `-`, `.`, `(`, `)`; 3 to 20 digits                |
 * |          | choice      | option key (string; not checked against `xFormat.options`)            |
 * |          | relation    | plain `svc://<objectId>` (base58 id, nothing after it)                |
 * | number   | number      | finite number                                                         |
 * |          | integer     | safe integer                                                          |
 * |          | percent     | finite number (a fraction: 0.25 is 25 %)                              |
 * |          | rating      | integer from 0 to `xFormat.config.max` (a positive integer; default 5) |
 * | boolean  | checkbox    | true or false                                                         |
 * | datetime | datetime    | `{$date: "YYYY-MM-DDTHH:MM:SS[.fff]Z"}` (UTC, calendar-valid)           |
 * |          | date        | the same wrapper at midnight UTC                                      |
 * | array    | list        | any array                                                             |
 * |          | tags        | array of strings                                                      |
 * |          | multichoice | array of option keys (strings; not checked against options)           |
 * |          | links       | array of plain `svc://<objectId>` strings                             |
 * | object   | json        | any object                                                            |
 * |          | period      | exactly `{start: instant, end: instant}`, end not before start        |
 * |          | money       | exactly `{amount: finite number, currency: "ISO 4217 code, e.g. EUR"}` |
 * |          | geo         | exactly `{lat: -90..90, lon: -180..180}`                              |
 *
 * `null` is never checked: writing null unsets the value. A definition carrying a slug this
 * release does not know (written by a newer peer) is checked by its kind only.
 */
export const FORMAT_SLUGS: Readonly<Record<PropertyKind, readonly string[]>> = {
  string: ['text', 'email', 'url', 'phone', 'choice', 'relation'],
  number: ['number', 'integer', 'percent', 'rating'],
  boolean: ['checkbox'],
  datetime: ['datetime', 'date'],
  array: ['list', 'tags', 'multichoice', 'links'],
  object: ['json', 'period', 'money', 'geo'],
}

export const defaultSlug = (kind: PropertyKind): string => FORMAT_SLUGS[kind][0]

export const slugFitsKind = (kind: PropertyKind, slug: string): boolean => FORMAT_SLUGS[kind].includes(slug)

const KNOWN_SLUGS = new Set(Object.values(FORMAT_SLUGS).flat())

/** The slug a definition's values are checked against. */
export function currentSlug(kind: PropertyKind, xFormat: JsonObject | undefined): string {
  const t = xFormat?.type
  return typeof t === 'string' && t !== '' ? t : defaultSlug(kind)
}

const formatInvalid = (message: string, details?: Record<string, unknown>) => new SvcError('property.format_invalid', message, details)

export function checkSlug(kind: PropertyKind, slug: unknown, path = 'xFormat.type'): string {
  if (typeof slug !== 'string') throw new SvcError('request.invalid_field', `${path} must be a string`, { field: path, path })
  if (!slugFitsKind(kind, slug)) {
    throw formatInvalid(KNOWN_SLUGS.has(slug) ? `format ${slug} does not fit kind ${kind}` : `unknown format ${slug}`, { path, format: slug, kind, accepted: FORMAT_SLUGS[kind] })
  }
  return slug
}

/** An option, meta, config or vendor key: refused with `property.format_invalid` when reserved or malformed. */
export function checkEntryKey(key: string, path: string): void {
  if (isReservedKey(key) || !ENTRY_KEY_RE.test(key)) throw formatInvalid(`reserved or malformed key ${JSON.stringify(key)}`, { path, key })
}

/** `xFormat.relation.filter` is the JSON text of a query filter; it must parse and compile. */
export function checkRelationFilter(filter: unknown, path = 'xFormat.relation.filter'): void {
  if (typeof filter !== 'string') throw new SvcError('request.invalid_field', `${path} must be a string (the JSON text of a filter)`, { field: path, path })
  let parsed: unknown
  try {
    parsed = JSON.parse(filter)
  } catch {
    throw formatInvalid('relation filter is not JSON', { path })
  }
  try {
    compileFilter(parsed)
  } catch (err) {
    throw formatInvalid(`relation filter does not compile: ${err instanceof Error ? err.message : 'invalid'}`, { path })
  }
}

/** Vendor keys of xFormat: `x-<name>`. */
export const isVendorKey = (k: string) => /^x-[A-Za-z0-9][A-Za-z0-9_-]{0,62}$/.test(k)

const isLeaf = (v: unknown) => v === null || typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean' || Array.isArray(v)

/**
 * Checks a whole xFormat descriptor given on create (or the `format` shorthand folded into it).
 * Malformed descriptors are `property.format_invalid` (the spec's create error).
 */
export function checkXFormat(kind: PropertyKind, x: unknown): JsonObject {
  if (!isObj(x)) throw formatInvalid('xFormat must be an object', { path: 'xFormat' })
  for (const [k, v] of Object.entries(x)) {
    const path = `xFormat.${k}`
    switch (k) {
      case 'type':
        checkSlug(kind, v)
        break
      case 'icon':
        if (typeof v !== 'string') throw formatInvalid('xFormat.icon must be a string', { path })
        break
      case 'pos':
        if (typeof v !== 'number' || !Number.isFinite(v)) throw formatInvalid('xFormat.pos must be a number', { path })
        break
      case 'options':
        if (!isObj(v)) throw formatInvalid('xFormat.options must be an object of option key to option', { path })
        for (const [key, opt] of Object.entries(v)) checkOption(key, opt, `${path}.${key}`)
        break
      case 'relation':
        if (!isObj(v)) throw formatInvalid('xFormat.relation must be an object', { path })
        for (const [rk, rv] of Object.entries(v)) {
          if (rk === 'targetTypes') {
            if (!Array.isArray(rv) || !rv.every((t) => typeof t === 'string'))
              throw formatInvalid('relation.targetTypes must be an array of type ids', { path: `${path}.targetTypes` })
          } else if (rk === 'filter') checkRelationFilter(rv, `${path}.filter`)
          else throw formatInvalid(`unknown key relation.${rk}`, { path: `${path}.${rk}` })
        }
        break
      case 'config':
        if (!isObj(v)) throw formatInvalid('xFormat.config must be an object', { path })
        for (const [ck, cv] of Object.entries(v)) {
          checkEntryKey(ck, `${path}.${ck}`)
          if (!isLeaf(cv)) throw formatInvalid('config values are leaves (no objects)', { path: `${path}.${ck}` })
        }
        break
      default:
        if (!isVendorKey(k)) throw formatInvalid(`unknown xFormat key ${k} (vendor keys start with x-)`, { path })
    }
  }
  return x
}

function checkOption(key: string, opt: unknown, path: string) {
  checkEntryKey(key, path)
  if (!isObj(opt)) throw formatInvalid('an option is an object {name?, color?, pos?, meta?}', { path })
  for (const [k, v] of Object.entries(opt)) {
    if ((k === 'name' || k === 'color') && typeof v === 'string') continue
    if (k === 'pos' && typeof v === 'number' && Number.isFinite(v)) continue
    if (k === 'meta' && isObj(v)) {
      for (const [mk, mv] of Object.entries(v)) {
        checkEntryKey(mk, `${path}.meta.${mk}`)
        if (!isLeaf(mv)) throw formatInvalid('option meta values are leaves', { path: `${path}.meta.${mk}` })
      }
      continue
    }
    throw formatInvalid(`bad option field ${k}`, { path: `${path}.${k}` })
  }
}

// ------------------------------------------------------------------------------- values

const INSTANT_RE = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?Z$/

/** A well-formed instant: `{$date}` alone, ISO 8601 in UTC (`Z`), a real calendar date. */
export function instantMs(v: unknown): number | undefined {
  if (!isObj(v) || Object.keys(v).length !== 1 || typeof v.$date !== 'string') return undefined
  const m = INSTANT_RE.exec(v.$date)
  if (!m) return undefined
  const [Y, M, D, h, mi, s] = m.slice(1, 7).map(Number)
  if (M < 1 || M > 12 || h > 23 || mi > 59 || s > 59) return undefined
  const ms = Date.UTC(Y, M - 1, D, h, mi, s)
  const d = new Date(ms)
  if (d.getUTCFullYear() !== Y || d.getUTCMonth() !== M - 1 || d.getUTCDate() !== D) return undefined
  return ms + (m[7] ? Number(`0.${m[7]}`) * 1000 : 0)
}

const RELATION_RE = /^svc:\/\/[1-9A-HJ-NP-Za-km-z]{1,64}$/
const EMAIL_RE = /^[^\s@]+@[^\s@]+\.[^\s@]+$/
const PHONE_RE = /^\+?[0-9 ().-]+$/

function kindOf(v: Json): PropertyKind | 'null' {
  if (v === null) return 'null'
  if (typeof v === 'string') return 'string'
  if (typeof v === 'number') return 'number'
  if (typeof v === 'boolean') return 'boolean'
  if (Array.isArray(v)) return 'array'
  return instantMs(v) !== undefined ? 'datetime' : 'object'
}

const exactKeys = (v: JsonObject, keys: string[]) => {
  const have = Object.keys(v)
  return have.length === keys.length && keys.every((k) => Object.hasOwn(v, k))
}

/**
 * Why `value` is not of the definition's `kind` at all (undefined when it is): the case of
 * 400 `property.kind_mismatch`, checked before the slug's shape (`property.format_violation`).
 * A `{$date}` wrapper counts as a datetime even when malformed (a badly formed instant is a
 * format violation, spec PropertyDef rule 3), and an `object` property may hold an instant.
 */
export function kindMismatch(kind: PropertyKind, value: Json): string | undefined {
  if (value === null) return undefined
  const k = kindOf(value)
  if (k === kind || (kind === 'object' && k === 'datetime')) return undefined
  if (kind === 'datetime' && k === 'object' && Object.hasOwn(value as JsonObject, '$date')) return undefined
  return `expected a value of kind ${kind}, got ${k}`
}

/**
 * Why `value` does not fit `slug` of `kind` (undefined when it fits). `config` is the
 * definition's `xFormat.config`; `items` its pinned item shape (`{kind}`), checked per element.
 */
export function valueViolation(kind: PropertyKind, slug: string, value: Json, config?: JsonObject, items?: JsonObject): string | undefined {
  if (value === null) return undefined
  const k = kindOf(value)
  // A `{$date}` wrapper is an object too: a `json` property may hold one.
  const kindOk = k === kind || (kind === 'object' && k === 'datetime')
  if (!kindOk) return kind === 'datetime' ? 'expected an instant {$date: ISO 8601 UTC}' : `expected a value of kind ${kind}`
  if (!KNOWN_SLUGS.has(slug) || !slugFitsKind(kind, slug)) return undefined
  switch (slug) {
    case 'email':
      return EMAIL_RE.test(value as string) ? undefined : 'not an email address'
    case 'url':
      return isAbsoluteUrl(value as string) ? undefined : 'not an absolute URL'
    case 'phone': {
      const digits = (value as string).replace(/\D/g, '').length
      return PHONE_RE.test(value as string) && digits >= 3 && digits <= 20 ? undefined : 'not a phone number'
    }
    case 'relation':
      return RELATION_RE.test(value as string) ? undefined : 'expected a plain svc://<objectId>'
    case 'integer':
      return Number.isSafeInteger(value) ? undefined : 'expected an integer'
    case 'rating': {
      const max = typeof config?.max === 'number' && Number.isSafeInteger(config.max) && config.max > 0 ? config.max : 5
      return Number.isSafeInteger(value) && (value as number) >= 0 && (value as number) <= max ? undefined : `expected an integer from 0 to ${max}`
    }
    case 'date': {
      const ms = instantMs(value)!
      return ms % 86_400_000 === 0 ? undefined : 'a date is an instant at midnight UTC'
    }
    case 'tags':
    case 'multichoice':
      if (!(value as Json[]).every((x) => typeof x === 'string')) return 'expected an array of strings'
      break
    case 'links':
      if (!(value as Json[]).every((x) => typeof x === 'string' && RELATION_RE.test(x))) return 'expected an array of plain svc://<objectId> strings'
      break
    case 'period': {
      const v = value as JsonObject
      if (!exactKeys(v, ['start', 'end'])) return 'a period is exactly {start, end}'
      const s = instantMs(v.start)
      const e = instantMs(v.end)
      if (s === undefined || e === undefined) return 'period start and end are instants {$date}'
      return e < s ? 'period end is before its start' : undefined
    }
    case 'money': {
      const v = value as JsonObject
      if (!exactKeys(v, ['amount', 'currency'])) return 'money is exactly {amount, currency}'
      if (typeof v.amount !== 'number' || !Number.isFinite(v.amount)) return 'money amount is a number'
      return typeof v.currency === 'string' && /^[A-Z]{3}$/.test(v.currency) ? undefined : 'money currency is a three-letter ISO 4217 code'
    }
    case 'geo': {
      const v = value as JsonObject
      if (!exactKeys(v, ['lat', 'lon'])) return 'geo is exactly {lat, lon}'
      const ok = typeof v.lat === 'number' && typeof v.lon === 'number' && Math.abs(v.lat) <= 90 && Math.abs(v.lon) <= 180
      return ok ? undefined : 'geo lat is -90..90 and lon -180..180'
    }
  }
  if (kind === 'array' && items && typeof items.kind === 'string' && (PROPERTY_KINDS as readonly string[]).includes(items.kind)) {
    const ik = items.kind as PropertyKind
    if (!(value as Json[]).every((x) => x === null || kindOf(x) === ik)) return `expected items of kind ${ik}`
  }
  return undefined
}

function isAbsoluteUrl(s: string): boolean {
  if (!/^[A-Za-z][A-Za-z0-9+.-]*:\S+$/.test(s)) return false
  try {
    new URL(s)
    return true
  } catch {
    return false
  }
}
