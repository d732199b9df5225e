import { SvcError } from '../../core/errors.ts'
import { checkEntryKey, checkRelationFilter, checkSlug, isVendorKey } from './formats.ts'
import { invalidField, isObj, XKEY_RE, type PropertyKind } from './model.ts'

/**
 * The path grammar of `PATCH {T}/properties/:propId` (spec "Property PATCH rules"):
 *
 * - pinned (400 `property.immutable`, `details.path`): `id`, `kind`, `scope`, `items`,
 *   `properties`, `typeId` and anything under them;
 * - leaves (set or unset): `name`, `description` (strings), `xKey` (handle; 409 when taken),
 *   `meta.index` (`props`, `none` or a scope slug), `meta.<k>`, `xFormat.type` (a slug of the
 *   property's kind, else 400 `property.format_invalid`), `xFormat.icon` (string),
 *   `xFormat.pos` (number), `xFormat.options.<key>.name|color` (strings),
 *   `xFormat.options.<key>.pos` (number), `xFormat.options.<key>.meta.<k>`,
 *   `xFormat.relation.targetTypes` (string array), `xFormat.relation.filter` (JSON text of a
 *   query filter; unparseable is `property.format_invalid`), `xFormat.config.<k>`, and vendor
 *   keys `xFormat.x-<name>[.<k>...]`;
 * - containers (unset only; `set` answers 400 `request.invalid_field`): `meta`, `xFormat`,
 *   `xFormat.options`, `xFormat.options.<key>` (unsetting it deletes the option; re-adding the
 *   key later works, it is a field unset, not a tombstone), `xFormat.options.<key>.meta`,
 *   `xFormat.relation`, `xFormat.config`.
 *
 * A `set` value is never an object and never null (use `unset`); generic leaves (`meta.<k>`,
 * `config.<k>`, vendor keys) take strings, numbers, booleans or arrays. Keys of options, meta
 * and config entries that are reserved (`$...`, `_...`, `constructor`, `prototype`) or
 * malformed are 400 `property.format_invalid`. Anything else is an unknown path: 400
 * `request.invalid_field`.
 */
export type PathClass = { type: 'container' } | { type: 'leaf'; check: (value: unknown, kind: PropertyKind) => void; xKey?: boolean }

export const PROPERTY_PINNED_ROOTS = ['id', 'kind', 'scope', 'items', 'properties', 'typeId']

const unknownPath = (path: string) => invalidField(path, `unknown property path ${path}`, { path })
const wrongType = (path: string, what: string) => invalidField(path, `${path} must be ${what}`, { path })

const str = (path: string) => (v: unknown) => {
  if (typeof v !== 'string') throw wrongType(path, 'a string')
}
const num = (path: string) => (v: unknown) => {
  if (typeof v !== 'number' || !Number.isFinite(v)) throw wrongType(path, 'a number')
}
const genericLeaf = (path: string) => (v: unknown) => {
  if (!(typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean' || Array.isArray(v))) throw wrongType(path, 'a string, number, boolean or array')
}
const leaf = (check: (v: unknown, kind: PropertyKind) => void): PathClass => ({ type: 'leaf', check })
const CONTAINER: PathClass = { type: 'container' }

export function classifyPropertyPath(path: string): PathClass {
  if (typeof path !== 'string' || path === '') throw unknownPath(String(path))
  const seg = path.split('.')
  if (seg.some((s) => s === '')) throw unknownPath(path)
  if (PROPERTY_PINNED_ROOTS.includes(seg[0])) throw new SvcError('property.immutable', `${seg[0]} is pinned`, { path })
  const [root, a, b, c, d] = seg
  const n = seg.length
  switch (root) {
    case 'name':
    case 'description':
      if (n === 1) return leaf(str(path))
      break
    case 'xKey':
      if (n === 1) {
        return {
          type: 'leaf',
          xKey: true,
          check: (v) => {
            if (typeof v !== 'string' || !XKEY_RE.test(v)) throw wrongType(path, 'a code handle ([A-Za-z0-9_.:/@+-], up to 128 chars)')
          },
        }
      }
      break
    case 'meta':
      if (n === 1) return CONTAINER
      checkEntryKey(a, path)
      if (n === 2) {
        return a === 'index'
          ? leaf((v) => {
              if (typeof v !== 'string' || !/^[a-z0-9_-]{1,64}$/.test(v)) throw wrongType(path, 'props, none or a scope slug')
            })
          : leaf(genericLeaf(path))
      }
      break
    case 'xFormat':
      if (n === 1) return CONTAINER
      switch (a) {
        case 'type':
          if (n === 2) return leaf((v, kind) => void checkSlug(kind, v, path))
          break
        case 'icon':
          if (n === 2) return leaf(str(path))
          break
        case 'pos':
          if (n === 2) return leaf(num(path))
          break
        case 'options':
          if (n === 2) return CONTAINER
          checkEntryKey(b, path)
          if (n === 3) return CONTAINER
          if (n === 4 && (c === 'name' || c === 'color')) return leaf(str(path))
          if (n === 4 && c === 'pos') return leaf(num(path))
          if (c === 'meta') {
            if (n === 4) return CONTAINER
            checkEntryKey(d, path)
            if (n === 5) return leaf(genericLeaf(path))
          }
          break
        case 'relation':
          if (n === 2) return CONTAINER
          if (n === 3 && b === 'targetTypes') {
            return leaf((v) => {
              if (!Array.isArray(v) || !v.every((t) => typeof t === 'string')) throw wrongType(path, 'an array of type ids')
            })
          }
          if (n === 3 && b === 'filter') return leaf((v) => checkRelationFilter(v, path))
          break
        case 'config':
          if (n === 2) return CONTAINER
          checkEntryKey(b, path)
          if (n === 3) return leaf(genericLeaf(path))
          break
        default:
          if (isVendorKey(a)) {
            for (const s of seg.slice(2)) checkEntryKey(s, path)
            return leaf(genericLeaf(path))
          }
      }
      break
  }
  throw unknownPath(path)
}

/** Checks one `set` entry against its path class; containers and objects are refused. */
export function checkSetEntry(path: string, value: unknown, kind: PropertyKind): PathClass {
  const cls = classifyPropertyPath(path)
  if (cls.type === 'container') throw invalidField(path, `${path} is a container: set its leaves, or unset it`, { path })
  if (value === null || value === undefined) throw invalidField(path, 'set takes a value; use unset to remove a path', { path })
  if (isObj(value)) throw invalidField(path, 'set targets a leaf and never carries an object', { path })
  cls.check(value, kind)
  return cls
}
