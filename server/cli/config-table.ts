import { resolve } from 'node:path'
import { AGENTS_PORT_OFFSET } from './ports.ts'
import { Type, type Static } from '@sinclair/typebox'
import { isAccountId } from '../../node/account/layout.ts'
import { PushConfigSchema, pushConfigFromEnv } from '../../node/push/config.ts'
import { LOG_LEVELS, type LogThreshold } from '../../sync/core/log.ts'
import { UsageError } from './io.ts'
import { defaultDataRoot, dialable, hubSpecs, loopbackHost, pushFromFile } from './config-table-checks.ts'
import { millis, multiaddrs, oneOf, onOff, opt, port, portOrOff, text } from './config-table-kinds.ts'
import { row, type Row } from './config-table-row.ts'

/**
 * Every setting of `svc serve`, one row each: its flag, env var, config file key, schema,
 * default and help. The flag parser, the env and file readers, the usage text and the table in
 * docs/operations.md are all made from these rows (server/cli/serve-config.ts resolves them:
 * flags win over env vars, env vars over the config file, that over defaults), so a key is
 * added or changed here and nowhere else.
 */

export const DEFAULT_PORT = 7001
export const DEFAULT_AGENTS_PORT = DEFAULT_PORT + AGENTS_PORT_OFFSET
export { AGENTS_PORT_OFFSET }

const LOG_THRESHOLDS: readonly LogThreshold[] = [...LOG_LEVELS, 'silent']

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
  hubs: row({
    flag: 'hubs',
    arg: 'MA',
    env: 'SVC_HUBS',
    file: 'hubs',
    ...opt(multiaddrs),
    refine: hubSpecs,
    finish: (v) => (v?.length ? v : undefined),
    help: "hubs that keep this account's spaces while its devices are off: multiaddrs ending in /p2p/ and the hub's peer id, each optionally followed by #TOKEN, an admission token (comma-separated; in the file, an array; docs/hub.md)",
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
    shownDefault: `the API port + ${AGENTS_PORT_OFFSET} (\`${DEFAULT_AGENTS_PORT}\`)`,
    help: `agent control API port on loopback, 0 = any, -1 or off = no agents; default the API port + ${AGENTS_PORT_OFFSET}, any free one if that is taken`,
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
  memoryBudgetMb: row({
    flag: 'memory-budget',
    arg: 'MB',
    env: 'SVC_MEMORY_BUDGET',
    file: 'memoryBudget',
    schema: Type.Integer({ minimum: 16, maximum: 1_048_576 }),
    default: 256,
    fromText: Number,
    invalid: (s) => `${s.where} must be an integer number of MB in 16..1048576`,
    help: 'the estimated heap every open space of the account may hold together (record caches, object rows, tree metas, search indexes, cached query datasets), in MB: idle spaces past it close and reopen on demand',
  }),
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

/** The flag that names the config file: not a row, as it says where the file layer is read from. */
export const CONFIG_FLAG = { flag: 'config', arg: 'FILE' } as const
