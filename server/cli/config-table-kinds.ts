import { Type, type TOptional, type TSchema } from '@sinclair/typebox'
import type { Source } from './config-table-row.ts'

/**
 * The kinds of value a row of CONFIG_TABLE holds (text, a switch, a port, milliseconds, a list of
 * multiaddrs, one of some words), each a schema with its text conversion and error message, for
 * the rows to spread into themselves.
 */

export const opt = <K extends { schema: TSchema }>(k: K): Omit<K, 'schema'> & { schema: TOptional<K['schema']> } => ({ ...k, schema: Type.Optional(k.schema) })

/** For messages whose text does not name the key: in the file, which key it was (`files.gcInterval`). */
export const at = (s: Source) => (s.from === 'file' ? `${s.where}: ${s.name}` : s.where)

export const digits = (v: unknown) => (typeof v === 'string' && /^\d+$/.test(v) ? Number(v) : v)

/** Comma-separated; empty means the default. */
export const commaList = (t: string) =>
  t
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)

const ON = ['1', 'true', 'yes', 'on']
const OFF = ['0', 'false', 'no', 'off', '']

export const orList = (values: readonly string[]) => (values.length > 1 ? `${values.slice(0, -1).join(', ')} or ${values.at(-1)}` : values.join(''))

export const text = { schema: Type.String(), invalid: (s: Source) => `${s.where}: ${s.name} must be a string` }

export const onOff = {
  schema: Type.Boolean(),
  emptyEnv: true,
  fromText: (t: string) => {
    const s = t.trim().toLowerCase()
    return ON.includes(s) ? true : OFF.includes(s) ? false : t
  },
  // eslint-disable-next-line @typescript-eslint/restrict-template-expressions -- the raw value is shown as given, whatever its type
  invalid: (s: Source, raw: unknown) => (s.from === 'file' ? `${s.where}: ${s.name} must be true or false` : `${s.where}: expected true or false, got "${raw}"`),
}

const PORT = Type.Integer({ minimum: 0, maximum: 65535 })
export const port = { schema: PORT, coerce: digits, invalid: (s: Source) => `${s.where}: the port must be an integer from 0 to 65535` }

/** A port, or -1 (also "-1" or "off"): none at all. */
export const portOrOff = {
  schema: Type.Union([Type.Literal(-1), PORT]),
  coerce: (v: unknown) => (v === -1 || v === '-1' || v === 'off' ? -1 : digits(v)),
  invalid: (s: Source) => `${at(s)}: the port must be an integer from 0 to 65535`,
}

export const millis = {
  schema: Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER }),
  coerce: digits,
  invalid: (s: Source) => `${at(s)}: expected a whole number of milliseconds`,
}

/** Set but empty (flag or env): the default, over a lower layer's list (how a test undoes its env). */
export const multiaddrs = {
  schema: Type.Array(Type.String()),
  emptyEnv: true,
  fromText: commaList,
  invalid: (s: Source) => `${s.where}: ${s.name} must be an array of multiaddr strings`,
}

export const oneOf = <T extends string>(values: readonly T[]) => ({
  schema: Type.Union(values.map((v) => Type.Literal(v))),
  choices: values,
  invalid: (s: Source) => `${s.where}: ${s.name} must be ${orList(values.map((v) => `"${v}"`))}`,
})
