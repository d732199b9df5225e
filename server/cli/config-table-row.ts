import { type Static, type TSchema } from '@sinclair/typebox'

/**
 * The shape of one row of CONFIG_TABLE (config-table.ts): where a setting's value comes from and
 * how it is checked, and the types its callbacks see.
 */

/** Where a value came from, as its error message names it. */
export interface Source {
  from: 'flag' | 'env' | 'file'
  /** `--port`, `SVC_PORT`, `--config /etc/svc.json` */
  where: string
  /** The key as the message names it: the file key for the file, else the config key. */
  name: string
  /** A relative path in a config file is relative to that file's directory; elsewhere to the working directory. */
  base: string
}

/** What a row's `finish` sees of the others. */
export interface Resolved {
  /** The value a key resolved to before its own `finish`: the winning layer's, else the default. */
  get(key: string): unknown
  /** The layer this row's value came from; undefined: the default. */
  from?: Source['from']
}

/**
 * One setting. `S` is the schema of its value in ServeConfig (Type.Optional when it may be
 * absent), `L` that of a layer's value when it is not yet the config value (host: any string,
 * until `finish` binds it to a loopback address).
 */
export interface Row<S extends TSchema = TSchema, L extends TSchema = S> {
  /** The option `--<flag>`. */
  flag?: string
  /** The flag's argument as usage shows it; absent: a switch, true when given. */
  arg?: string
  env?: string | readonly string[]
  /** The config file key; `a.b` is key b of the object a. */
  file?: string
  schema: S
  layer?: L
  default?: Static<S>
  defaultFrom?(env: NodeJS.ProcessEnv): Static<S>
  /** The default as usage and docs show it, where it is computed or applied by the daemon. */
  shownDefault?: string
  /** The values the schema accepts, for usage and docs. */
  choices?: readonly string[]
  help: string
  /** A flag's or env var's text to the schema's type; what does not convert is left for the check to refuse. */
  fromText?(text: string): unknown
  /** Applied to every source's value: a port may be "7100" in the file too. */
  coerce?(raw: unknown): unknown
  /** An empty env var is a value (a switch off, the default list) rather than unset. */
  emptyEnv?: boolean
  invalid(src: Source, raw: unknown): string
  /** Checks beyond the schema's, or a checked value made absolute. */
  refine?(value: Static<L>, src: Source): Static<L>
  /** Reads the environment where a setting spans several variables. */
  readEnv?(env: NodeJS.ProcessEnv): Static<L>
  /** Reads the file's value where it is an object with messages of its own. */
  readFile?(raw: unknown, src: Source): Static<L>
  /** The resolved value to the config value; undefined: absent. */
  finish?(value: Static<L> | Static<S> | undefined, resolved: Resolved): Static<S> | undefined
}

// Gives each row's callbacks the types of its own schema.
export const row = <S extends TSchema, L extends TSchema = S>(r: Row<S, L>): Row<S, L> => r

export const envNames = (r: Row): readonly string[] => (r.env === undefined ? [] : typeof r.env === 'string' ? [r.env] : r.env)
