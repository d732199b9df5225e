import { homedir } from 'node:os'
import { join, resolve } from 'node:path'
import { Type, type Static, type TOptional, type TSchema } from '@sinclair/typebox'
import { Value } from '@sinclair/typebox/value'
import { isAccountId } from '../../node/account/layout.ts'
import { parsePeerAddress } from '../../node/p2p/peer-address.ts'
import { PushConfigSchema, pushConfigFromEnv, type PushConfig } from '../../node/push/config.ts'
import { LOG_LEVELS, type LogThreshold } from '../../sync/core/log.ts'
import { UsageError } from './io.ts'

/**
 * Every setting of `svc serve`, one row each: its flag, env var, config file key, schema,
 * default and help. The flag parser, the env and file readers, the usage text and the table in
 * docs/operations.md are all made from these rows (server/cli/serve-config.ts resolves them:
 * flags win over env vars, env vars over the config file, that over defaults), so a key is
 * added or changed here and nowhere else.
 */

export const DEFAULT_PORT = 7001
export const DEFAULT_AGENTS_PORT = 7010

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
const row = <S extends TSchema, L extends TSchema = S>(r: Row<S, L>): Row<S, L> => r

const opt = <K extends { schema: TSchema }>(k: K): Omit<K, 'schema'> & { schema: TOptional<K['schema']> } => ({ ...k, schema: Type.Optional(k.schema) })

/** For messages whose text does not name the key: in the file, which key it was (`files.gcInterval`). */
const at = (s: Source) => (s.from === 'file' ? `${s.where}: ${s.name}` : s.where)

const digits = (v: unknown) => (typeof v === 'string' && /^\d+$/.test(v) ? Number(v) : v)

/** Comma-separated; empty means the default. */
const commaList = (t: string) =>
  t
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)

const ON = ['1', 'true', 'yes', 'on']
const OFF = ['0', 'false', 'no', 'off', '']

const orList = (values: readonly string[]) => (values.length > 1 ? `${values.slice(0, -1).join(', ')} or ${values.at(-1)}` : values.join(''))

const text = { schema: Type.String(), invalid: (s: Source) => `${s.where}: ${s.name} must be a string` }

const onOff = {
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
const port = { schema: PORT, coerce: digits, invalid: (s: Source) => `${s.where}: the port must be an integer from 0 to 65535` }

/** A port, or -1 (also "-1" or "off"): none at all. */
const portOrOff = {
  schema: Type.Union([Type.Literal(-1), PORT]),
  coerce: (v: unknown) => (v === -1 || v === '-1' || v === 'off' ? -1 : digits(v)),
  invalid: (s: Source) => `${at(s)}: the port must be an integer from 0 to 65535`,
}

const millis = {
  schema: Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER }),
  coerce: digits,
  invalid: (s: Source) => `${at(s)}: expected a whole number of milliseconds`,
}

/** Set but empty (flag or env): the default, over a lower layer's list (how a test undoes its env). */
const multiaddrs = {
  schema: Type.Array(Type.String()),
  emptyEnv: true,
  fromText: commaList,
  invalid: (s: Source) => `${s.where}: ${s.name} must be an array of multiaddr strings`,
}

const oneOf = <T extends string>(values: readonly T[]) => ({
  schema: Type.Union(values.map((v) => Type.Literal(v))),
  choices: values,
  invalid: (s: Source) => `${s.where}: ${s.name} must be ${orList(values.map((v) => `"${v}"`))}`,
})

const LOG_THRESHOLDS: readonly LogThreshold[] = [...LOG_LEVELS, 'silent']

/** Each a dialable multiaddr with a peer id: the daemon would refuse to boot otherwise. */
function dialable(addrs: string[], s: Source): string[] {
  for (const a of addrs) {
    try {
      parsePeerAddress(a)
    } catch (err) {
      throw new UsageError(`${at(s)}: "${a}": ${(err as Error).message}`)
    }
  }
  return addrs
}

export function defaultDataRoot(env: NodeJS.ProcessEnv): string {
  const xdg = env.XDG_DATA_HOME
  return xdg ? join(xdg, 'svc') : join(homedir(), '.local', 'share', 'svc')
}

/** Loopback only (spec Authentication 1): anything else is refused before binding. */
export function loopbackHost(v: string, source: string): '127.0.0.1' | '::1' {
  const s = v.trim().toLowerCase()
  if (s === '127.0.0.1' || s === 'localhost') return '127.0.0.1'
  if (s === '::1' || s === '[::1]') return '::1'
  throw new UsageError(`${source}: refusing to bind "${v}": the server binds only a loopback address (127.0.0.1, ::1 or localhost)`)
}

export const isPlainObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v)

// The file may leave `enabled` out (null: enabled iff a peer id is set).
const PushFile = Type.Object({ ...PushConfigSchema.properties, enabled: Type.Optional(PushConfigSchema.properties.enabled) }, { additionalProperties: false })
const PUSH_EXPECTED: Record<string, string> = { enabled: 'true, false or null', peerId: 'a string', addrs: 'a list of multiaddr strings' }

function pushFromFile(raw: unknown, s: Source): PushConfig {
  if (!isPlainObject(raw)) throw new UsageError(`${s.where}: push must be an object {enabled?, peerId?, addrs?}`)
  const extra = Object.keys(raw).filter((k) => !(k in PushFile.properties))
  if (extra.length) throw new UsageError(`${s.where}: push: unknown keys ${extra.join(', ')}`)
  if (!Value.Check(PushFile, raw)) {
    const field = Value.Errors(PushFile, raw).First()?.path.split('/')[1] ?? ''
    throw new UsageError(`${s.where}: push.${field} must be ${PUSH_EXPECTED[field] ?? 'valid'}`)
  }
  // An empty peer id or address list is the same as none (pushNodeOf would ignore it anyway).
  return { enabled: raw.enabled ?? null, ...(raw.peerId ? { peerId: raw.peerId } : {}), ...(raw.addrs?.length ? { addrs: raw.addrs } : {}) }
}

export const CONFIG_TABLE = {
  data: row({
    flag: 'data',
    arg: 'DIR',
    env: 'SVC_DATA',
    file: 'data',
    ...text,
    defaultFrom: defaultDataRoot,
    shownDefault: '`$XDG_DATA_HOME/svc`, else `~/.local/share/svc`',
    refine: (v, s) => resolve(s.base, v),
    help: 'data root; in the config file, relative to the file',
  }),
  port: row({ flag: 'port', arg: 'N', env: 'SVC_PORT', file: 'port', ...port, default: DEFAULT_PORT, help: 'TCP port of the HTTP API, 0 = any free port' }),
  host: row({
    flag: 'host',
    arg: 'ADDR',
    env: 'SVC_HOST',
    file: 'host',
    ...text,
    // Checked on the value that won, once the layers are merged: an address a higher layer overrides is not an error.
    layer: Type.String(),
    schema: Type.Union([Type.Literal('127.0.0.1'), Type.Literal('::1')]),
    default: '127.0.0.1',
    finish: (v, r) => loopbackHost(v ?? '127.0.0.1', r.from === 'flag' ? '--host' : 'host'),
    help: 'loopback address to bind: 127.0.0.1, ::1 or localhost',
  }),
  managed: row({ flag: 'managed', env: 'SVC_MANAGED', file: 'managed', ...onOff, default: false, help: 'the account arrives by POST /v1/auth; prints a control token' }),
  noMdns: row({ flag: 'no-mdns', env: 'SVC_NO_MDNS', file: 'noMdns', ...onOff, default: false, help: 'do not discover peers over multicast DNS' }),
  passkeyStdin: row({ flag: 'passkey-stdin', ...onOff, default: false, help: 'read the wallet passkey from stdin (replaces a configured passkey)' }),
  passkey: row({ env: 'SVC_PASSKEY', file: 'passkey', ...opt(text), finish: (v, r) => (r.get('passkeyStdin') === true ? undefined : v), help: 'the wallet passkey' }),
  account: row({
    flag: 'account',
    arg: 'ID',
    env: 'SVC_ACCOUNT',
    file: 'account',
    ...opt(text),
    finish: (v, r) => {
      if (v !== undefined && !isAccountId(v)) throw new UsageError(`svc serve: "${v}" is not an account id`)
      if (v !== undefined && r.get('managed') === true) throw new UsageError('svc serve: a managed server takes its account by POST /v1/auth, not --account')
      return v
    },
    help: 'standalone: boot this account, the only one the server accepts',
  }),
  p2pListen: row({
    flag: 'p2p-listen',
    arg: 'MA',
    env: 'SVC_P2P_LISTEN',
    file: 'p2pListen',
    ...opt(multiaddrs),
    finish: (v) => (v?.length ? v : undefined),
    shownDefault: 'all interfaces, any port',
    help: 'libp2p listen multiaddrs (comma-separated; in the file, an array)',
  }),
  durability: row({
    flag: 'durability',
    arg: 'MODE',
    env: 'SVC_DURABILITY',
    file: 'durability',
    ...oneOf(['normal', 'full'] as const),
    default: 'normal',
    help: 'how writes are made durable (full: fsync every commit, survive power loss)',
  }),
  peers: row({
    flag: 'peers',
    arg: 'MA',
    env: 'SVC_PEERS',
    file: 'peers',
    ...opt(multiaddrs),
    refine: dialable,
    finish: (v) => (v?.length ? v : undefined),
    help: 'peers to dial and redial: multiaddrs ending in /p2p/ and the peer id (comma-separated; in the file, an array)',
  }),
  log: row({ flag: 'log', env: 'SVC_LOG', file: 'log', ...onOff, default: false, help: 'request logs on stderr (JSON lines, one per request and answer); else warnings only' }),
  logLevel: row({
    flag: 'log-level',
    arg: 'LEVEL',
    env: 'SVC_LOG_LEVEL',
    file: 'logLevel',
    ...oneOf(LOG_THRESHOLDS),
    default: 'info',
    help: "level of the daemon's component logs (JSON lines on stderr)",
  }),
  agentsPort: row({
    flag: 'agents-port',
    arg: 'N',
    env: 'SVC_AGENTS_PORT',
    file: 'agentsPort',
    ...opt(portOrOff),
    shownDefault: `\`${DEFAULT_AGENTS_PORT}\``,
    help: 'agent control API port on loopback, 0 = any, -1 or off = no agents',
  }),
  modelUrl: row({
    flag: 'model-url',
    arg: 'URL',
    env: 'SVC_MODEL_URL',
    file: 'modelUrl',
    ...opt(text),
    finish: (v) => v || undefined,
    help: 'OpenAI-compatible chat-completions base URL for the agents; none: chat-watch stays off',
  }),
  model: row({
    flag: 'model',
    arg: 'NAME',
    env: 'SVC_MODEL',
    file: 'model',
    ...opt(text),
    finish: (v, r) => (r.get('modelUrl') ? (v ?? 'default') : undefined),
    shownDefault: '`default` when a model URL is set',
    help: 'model name sent to the model URL',
  }),
  // Never from a file: a config file is easily shared or committed.
  modelApiKey: row({ env: 'SVC_MODEL_API_KEY', ...opt(text), help: 'bearer token for the model URL (env only)' }),
  filesGcInterval: row({
    flag: 'files-gc-interval',
    arg: 'MS',
    env: 'SVC_FILES_GC_INTERVAL',
    file: 'files.gcInterval',
    ...opt(millis),
    finish: (v) => v || undefined,
    shownDefault: '`0` (off)',
    help: 'sweep the files cache every MS milliseconds',
  }),
  push: row({
    env: ['SVC_PUSH_ENABLED', 'SVC_PUSH_PEER_ID', 'SVC_PUSH_ADDRS'],
    file: 'push',
    schema: Type.Optional(PushConfigSchema),
    // Any of the variables set replaces the file's whole object.
    emptyEnv: true,
    readEnv: pushConfigFromEnv,
    readFile: pushFromFile,
    invalid: (s) => `${s.where}: push must be an object {enabled?, peerId?, addrs?}`,
    shownDefault: 'none',
    help: 'the push node (docs/push.md): {enabled, peerId, addrs}; enabled null = iff peerId is set; SVC_PUSH_ADDRS comma-separated',
  }),
  // Env only: tests shorten it; nobody else needs to.
  cursorTimeoutMs: row({
    env: 'SVC_CURSOR_TIMEOUT_MS',
    schema: Type.Optional(Type.Integer({ minimum: 100, maximum: 3_600_000 })),
    fromText: Number,
    invalid: (s) => `${s.where} must be an integer number of ms in 100..3600000`,
    shownDefault: '`30000`',
    help: 'how long an unrenewed editor cursor lasts, in ms (env only)',
  }),
}

type Table = typeof CONFIG_TABLE
type ConfigKey = keyof Table

// Row<S> is assignable to Row (its callbacks are methods): what the generic readers iterate.
export const CONFIG_ROWS: ReadonlyArray<readonly [string, Row]> = Object.entries(CONFIG_TABLE)

/** The resolved configuration's schema, from the rows'. */
export const ServeConfigSchema = Type.Object(Object.fromEntries(CONFIG_ROWS.map(([k, r]) => [k, r.schema])) as { [K in ConfigKey]: Table[K]['schema'] })

/** Settings of `svc serve`, one per row of CONFIG_TABLE. */
export type ServeConfig = Static<typeof ServeConfigSchema>

/** The file keys at the top level of the config file, in table order (`files` for `files.gcInterval`). */
export const fileTopKeys = (): string[] => [...new Set(CONFIG_ROWS.flatMap(([, r]) => (r.file ? [r.file.split('.')[0]] : [])))]

export const envNames = (r: Row): readonly string[] => (r.env === undefined ? [] : typeof r.env === 'string' ? [r.env] : r.env)

const flagOf = (r: Row) => (r.flag ? `--${r.flag}${r.arg ? ` ${r.arg}` : ''}` : '')

/** The default as docs show it (markdown); usage drops the backticks. */
function shownDefault(r: Row): string {
  if (r.shownDefault !== undefined) return r.shownDefault
  // eslint-disable-next-line @typescript-eslint/no-base-to-string -- defaults are scalars
  return r.default === undefined ? '' : `\`${String(r.default)}\``
}

const helpOf = (r: Row) => (r.choices ? `${r.help}; ${orList(r.choices)}` : r.help)

export const CONFIG_FLAG = { flag: 'config', arg: 'FILE' } as const

const WIDTH = 100

/** Words in lines of at most WIDTH, the first line after `first`, the others indented by `indent`. */
function wrap(first: string, words: string[], indent: number): string {
  const lines = [first]
  for (const word of words) {
    const last = lines[lines.length - 1]
    const width = last.length - (last.lastIndexOf('\n') + 1)
    if (last.trim() !== '' && width + word.length + 1 > WIDTH) lines.push(`${' '.repeat(indent)}${word}`)
    else lines[lines.length - 1] = last.endsWith(' ') ? `${last}${word}` : `${last} ${word}`
  }
  return lines.join('\n')
}

/** `svc serve`'s usage text: the flags, then a line per row, then the config file. */
export function serveUsage(): string {
  const flags = [...CONFIG_ROWS.flatMap(([, r]) => (r.flag ? [`[${flagOf(r)}]`] : [])), `[--${CONFIG_FLAG.flag} ${CONFIG_FLAG.arg}]`]
  const pad = 26
  const line = (left: string, words: string[]) => wrap(left.length < pad - 2 ? `  ${left.padEnd(pad - 2)}` : `  ${left}\n${' '.repeat(pad)}`, words, pad)
  const lines = CONFIG_ROWS.map(([, r]) => {
    // A switch is off unless given: "(default false)" says nothing.
    const def = r.arg || !r.flag ? shownDefault(r).replaceAll('`', '') : ''
    const help = `${helpOf(r)}${def ? ` (default ${def})` : ''}`.split(' ')
    const env = envNames(r).join(', ')
    // The env var stays on one line with its "env".
    return r.flag ? line(flagOf(r), env ? [...help.slice(0, -1), `${help.at(-1)};`, `env ${env}`] : help) : line(`env ${env}`, help)
  })
  const fileKeys = fileTopKeys().map((k) => {
    const nested = CONFIG_ROWS.flatMap(([, r]) => (r.file?.startsWith(`${k}.`) ? [r.file.slice(k.length + 1)] : []))
    return nested.length ? `${k} ({${nested.join(', ')}})` : k
  })
  lines.push(line(`--${CONFIG_FLAG.flag} ${CONFIG_FLAG.arg}`, `JSON file with the keys ${fileKeys.join(', ')}`.split(' ')))
  lines.push('  Flags win over env vars, env vars over the config file, that over the defaults.')
  return `${wrap('usage: svc serve', flags, 17)}\n${lines.join('\n')}`
}

const cell = (s: string) => s.replaceAll('|', '\\|')
const code = (s: string) => (s ? `\`${s}\`` : '')

/** The table of docs/operations.md "Configuration", between its marker comments. */
export function configTableMarkdown(): string {
  const rows = CONFIG_ROWS.map(
    ([, r]) => `| ${r.file ? code(r.file) : 'not in the file'} | ${code(flagOf(r))} | ${envNames(r).map(code).join(', ')} | ${cell(shownDefault(r))} | ${cell(helpOf(r))} |`,
  )
  const config = `| | \`--${CONFIG_FLAG.flag} ${CONFIG_FLAG.arg}\` | | | the JSON config file; unknown keys are refused |`
  return ['| Config file key | Flag | Env var | Default | Meaning |', '|---|---|---|---|---|', ...rows, config].join('\n')
}
