import { readFileSync } from 'node:fs'
import { envHasPush, pushConfigFromEnv, pushConfigFromFile, type PushConfig } from '../../node/push/config.ts'
import { homedir } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { parseArgs } from 'node:util'
import type { Durability } from '../../node/account/files.ts'
import { isAccountId } from '../../node/account/layout.ts'
import { UsageError } from './io.ts'
import { parsePeerAddress } from '../../node/p2p/peer-address.ts'

/**
 * Settings of `svc serve`: flags win over env vars, env vars over the config file, that over
 * defaults. The only place the daemon's environment variables are read: everything below
 * receives them as options.
 */
export interface ServeConfig {
  data: string
  port: number
  /** The address to bind: 127.0.0.1 or ::1 (`localhost` binds 127.0.0.1). */
  host: '127.0.0.1' | '::1'
  managed: boolean
  noMdns: boolean
  passkey?: string
  passkeyStdin: boolean
  /** Standalone: the account to boot at start and the only one this server accepts. */
  account?: string
  /** libp2p listen multiaddrs; absent: all interfaces, a random port. */
  p2pListen?: string[]
  /** 'full': power-loss durability (SQLite synchronous=FULL, directory fsync after file writes). */
  durability: Durability
  /** Peers to dial by address for this run (multiaddrs with /p2p/<peer id>), besides those added over the API. */
  peers?: string[]
  /** The push node (docs/push.md): config key `push`, env SVC_PUSH_ENABLED, SVC_PUSH_PEER_ID, SVC_PUSH_ADDRS. */
  push?: PushConfig
  /** How long a live cursor lasts unrenewed (docs/editor.md "Cursors"); env only, for tests. */
  cursorTimeoutMs?: number
  /** Agent control API port (chat.md: DEFAULT_AGENTS_PORT when absent; 0 = any free port; -1 = no agents). */
  agentsPort?: number
  /** The agents' model provider (OpenAI-compatible chat completions); absent: chat-watch stays off. */
  modelUrl?: string
  model?: string
  /** Bearer token for the model provider (env SVC_MODEL_API_KEY only: never in a config file). */
  modelApiKey?: string
  /** Request logs (Fastify's pino logger at level info, JSON lines on stderr); else warnings only. */
  log: boolean
  /** `files.gcInterval`: background sweep of the files cache every this many ms (0: off). */
  filesGcInterval?: number
}

export const DEFAULT_PORT = 7001
export const DEFAULT_AGENTS_PORT = 7010

export const SERVE_USAGE = `usage: svc serve [--data DIR] [--port N] [--host ADDR] [--managed] [--no-mdns]
                 [--passkey-stdin] [--account ID] [--durability MODE] [--p2p-listen MA] [--peers MA]
                 [--log] [--agents-port N] [--model-url URL] [--model NAME] [--files-gc-interval MS]
                 [--config FILE]
  --data DIR       data root (default $XDG_DATA_HOME/svc or ~/.local/share/svc)   env SVC_DATA
  --port N         TCP port, 0 = any free port (default ${DEFAULT_PORT})              env SVC_PORT
  --host ADDR      loopback address: 127.0.0.1, ::1 or localhost               env SVC_HOST
  --managed        the account arrives by POST /v1/auth; prints a control token env SVC_MANAGED
  --no-mdns        do not discover peers over multicast DNS                    env SVC_NO_MDNS
  --passkey-stdin  read the wallet passkey from stdin                           env SVC_PASSKEY
  --account ID     standalone: boot this account                                env SVC_ACCOUNT
  --p2p-listen MA  libp2p listen multiaddrs, comma-separated (default all, any port) env SVC_P2P_LISTEN
  --durability M   normal (default) or full: fsync every commit, survive power loss env SVC_DURABILITY
  --peers MA       peers to dial and redial, comma-separated multiaddrs ending /p2p/<peer id>  env SVC_PEERS
  --log            request logs on stderr (JSON lines, one per request and answer)  env SVC_LOG
  --agents-port N  agent control API port on loopback, 0 = any, -1 = off (default ${DEFAULT_AGENTS_PORT}) env SVC_AGENTS_PORT
  --model-url URL  OpenAI-compatible chat-completions base URL for the agents  env SVC_MODEL_URL
  --model NAME     model name sent to it                                        env SVC_MODEL
                   (bearer token: env SVC_MODEL_API_KEY)
  --files-gc-interval MS  sweep the files cache every MS milliseconds (0: off)  env SVC_FILES_GC_INTERVAL
  env SVC_CURSOR_TIMEOUT_MS: how long an unrenewed editor cursor lasts (default 30000)
  --config FILE    JSON file with keys data, port, host, managed, noMdns, passkey, account, durability,
                   p2pListen, peers, log, agentsPort, modelUrl, model, files ({gcInterval})`

interface Layer {
  data?: string
  port?: number
  host?: string
  managed?: boolean
  noMdns?: boolean
  passkey?: string
  account?: string
  p2pListen?: string[]
  durability?: Durability
  peers?: string[]
  cursorTimeoutMs?: number
  log?: boolean
  agentsPort?: number
  modelUrl?: string
  model?: string
  filesGcInterval?: number
  push?: PushConfig
}

const CONFIG_KEYS = ['data', 'port', 'host', 'managed', 'noMdns', 'passkey', 'account', 'durability', 'p2pListen', 'peers', 'log', 'agentsPort', 'modelUrl', 'model', 'files', 'push'] as const

function parseAgentsPort(v: unknown, source: string): number {
  if (v === -1 || v === '-1' || v === 'off') return -1
  return parsePort(v, source)
}

function parseInterval(v: unknown, source: string): number {
  const n = typeof v === 'string' && /^\d+$/.test(v) ? Number(v) : v
  if (typeof n !== 'number' || !Number.isSafeInteger(n) || n < 0) throw new UsageError(`${source}: expected a whole number of milliseconds`)
  return n
}

/** Each a dialable multiaddr with a peer id (the daemon would refuse to boot otherwise). */
function checkPeers(addrs: string[], source: string): string[] {
  for (const a of addrs) {
    try {
      parsePeerAddress(a)
    } catch (err) {
      throw new UsageError(`${source}: "${a}": ${(err as Error).message}`)
    }
  }
  return addrs
}

function parseDurability(v: unknown, source: string): Durability {
  if (v === 'normal' || v === 'full') return v
  throw new UsageError(`${source}: durability must be "normal" or "full"`)
}

export function defaultDataRoot(env: NodeJS.ProcessEnv): string {
  const xdg = env.XDG_DATA_HOME
  return xdg ? join(xdg, 'svc') : join(homedir(), '.local', 'share', 'svc')
}

function parsePort(v: unknown, source: string): number {
  const n = typeof v === 'string' && /^\d+$/.test(v) ? Number(v) : v
  if (typeof n !== 'number' || !Number.isInteger(n) || n < 0 || n > 65535) {
    throw new UsageError(`${source}: the port must be an integer from 0 to 65535`)
  }
  return n
}

function parseBool(v: string, source: string): boolean {
  const s = v.trim().toLowerCase()
  if (['1', 'true', 'yes', 'on'].includes(s)) return true
  if (['0', 'false', 'no', 'off', ''].includes(s)) return false
  throw new UsageError(`${source}: expected true or false, got "${v}"`)
}

/** Comma-separated multiaddrs; empty means the default (all interfaces). */
function parseListen(v: string): string[] | undefined {
  const addrs = v.split(',').map((s) => s.trim()).filter(Boolean)
  return addrs.length > 0 ? addrs : undefined
}

/** Loopback only (spec Authentication 1): anything else is refused before binding. */
export function loopbackHost(v: string, source: string): '127.0.0.1' | '::1' {
  const s = v.trim().toLowerCase()
  if (s === '127.0.0.1' || s === 'localhost') return '127.0.0.1'
  if (s === '::1' || s === '[::1]') return '::1'
  throw new UsageError(`${source}: refusing to bind "${v}": the server binds only a loopback address (127.0.0.1, ::1 or localhost)`)
}

function readConfigFile(path: string): Layer {
  let raw: unknown
  try {
    raw = JSON.parse(readFileSync(path, 'utf8'))
  } catch (err) {
    throw new UsageError(`--config ${path}: ${(err as Error).message}`)
  }
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) throw new UsageError(`--config ${path}: expected a JSON object`)
  const cfg = raw as Record<string, unknown>
  const unknown = Object.keys(cfg).filter((k) => !(CONFIG_KEYS as readonly string[]).includes(k))
  if (unknown.length > 0) throw new UsageError(`--config ${path}: unknown keys ${unknown.join(', ')} (accepted: ${CONFIG_KEYS.join(', ')})`)
  const out: Layer = {}
  for (const k of ['data', 'host', 'passkey', 'account', 'modelUrl', 'model'] as const) {
    if (cfg[k] === undefined) continue
    if (typeof cfg[k] !== 'string') throw new UsageError(`--config ${path}: ${k} must be a string`)
    out[k] = cfg[k] as string
  }
  for (const k of ['managed', 'noMdns', 'log'] as const) {
    if (cfg[k] === undefined) continue
    if (typeof cfg[k] !== 'boolean') throw new UsageError(`--config ${path}: ${k} must be true or false`)
    out[k] = cfg[k] as boolean
  }
  if (cfg.port !== undefined) out.port = parsePort(cfg.port, `--config ${path}`)
  if (cfg.agentsPort !== undefined) out.agentsPort = parseAgentsPort(cfg.agentsPort, `--config ${path}: agentsPort`)
  if (cfg.p2pListen !== undefined) {
    if (!Array.isArray(cfg.p2pListen) || !cfg.p2pListen.every((a) => typeof a === 'string')) throw new UsageError(`--config ${path}: p2pListen must be an array of multiaddr strings`)
    out.p2pListen = cfg.p2pListen as string[]
  }
  if (cfg.durability !== undefined) out.durability = parseDurability(cfg.durability, `--config ${path}`)
  if (cfg.peers !== undefined) {
    if (!Array.isArray(cfg.peers) || !cfg.peers.every((a) => typeof a === 'string')) throw new UsageError(`--config ${path}: peers must be an array of multiaddr strings`)
    out.peers = checkPeers(cfg.peers as string[], `--config ${path}: peers`)
  }
  if (cfg.files !== undefined) {
    const f = cfg.files as Record<string, unknown>
    if (typeof f !== 'object' || f === null || Array.isArray(f) || Object.keys(f).some((k) => k !== 'gcInterval')) throw new UsageError(`--config ${path}: files must be an object with the key gcInterval`)
    if (f.gcInterval !== undefined) out.filesGcInterval = parseInterval(f.gcInterval, `--config ${path}: files.gcInterval`)
  }
  if (cfg.push !== undefined) {
    const push = pushConfigFromFile(cfg.push)
    if (typeof push === 'string') throw new UsageError(`--config ${path}: ${push}`)
    out.push = push
  }
  // A relative data root is relative to the file that names it.
  if (out.data !== undefined) out.data = resolve(dirname(path), out.data)
  return out
}

function envLayer(env: NodeJS.ProcessEnv): Layer {
  const out: Layer = {}
  if (env.SVC_DATA) out.data = resolve(env.SVC_DATA)
  if (env.SVC_PORT !== undefined && env.SVC_PORT !== '') out.port = parsePort(env.SVC_PORT, 'SVC_PORT')
  if (env.SVC_HOST) out.host = env.SVC_HOST
  if (env.SVC_MANAGED !== undefined) out.managed = parseBool(env.SVC_MANAGED, 'SVC_MANAGED')
  if (env.SVC_NO_MDNS !== undefined) out.noMdns = parseBool(env.SVC_NO_MDNS, 'SVC_NO_MDNS')
  if (env.SVC_LOG !== undefined) out.log = parseBool(env.SVC_LOG, 'SVC_LOG')
  if (env.SVC_PASSKEY) out.passkey = env.SVC_PASSKEY
  if (env.SVC_ACCOUNT) out.account = env.SVC_ACCOUNT
  // Set but empty: the default listen addresses (a layer below may not override that).
  if (env.SVC_P2P_LISTEN !== undefined) out.p2pListen = parseListen(env.SVC_P2P_LISTEN) ?? []
  if (env.SVC_DURABILITY) out.durability = parseDurability(env.SVC_DURABILITY, 'SVC_DURABILITY')
  if (env.SVC_FILES_GC_INTERVAL) out.filesGcInterval = parseInterval(env.SVC_FILES_GC_INTERVAL, 'SVC_FILES_GC_INTERVAL')
  if (env.SVC_PEERS !== undefined) out.peers = checkPeers(parseListen(env.SVC_PEERS) ?? [], 'SVC_PEERS')
  if (envHasPush(env)) out.push = pushConfigFromEnv(env)
  if (env.SVC_CURSOR_TIMEOUT_MS) {
    const ms = Number(env.SVC_CURSOR_TIMEOUT_MS)
    if (!Number.isInteger(ms) || ms < 100 || ms > 3_600_000) throw new UsageError('SVC_CURSOR_TIMEOUT_MS must be an integer number of ms in 100..3600000')
    out.cursorTimeoutMs = ms
  }
  if (env.SVC_AGENTS_PORT !== undefined && env.SVC_AGENTS_PORT !== '') out.agentsPort = parseAgentsPort(env.SVC_AGENTS_PORT, 'SVC_AGENTS_PORT')
  if (env.SVC_MODEL_URL) out.modelUrl = env.SVC_MODEL_URL
  if (env.SVC_MODEL) out.model = env.SVC_MODEL
  return out
}

export function resolveServeConfig(args: string[], env: NodeJS.ProcessEnv): ServeConfig {
  let parsed
  try {
    parsed = parseArgs({
      args,
      strict: true,
      allowPositionals: false,
      options: {
        data: { type: 'string' },
        port: { type: 'string' },
        host: { type: 'string' },
        managed: { type: 'boolean' },
        'no-mdns': { type: 'boolean' },
        'passkey-stdin': { type: 'boolean' },
        account: { type: 'string' },
        'p2p-listen': { type: 'string' },
        durability: { type: 'string' },
        peers: { type: 'string' },
        'agents-port': { type: 'string' },
        'model-url': { type: 'string' },
        model: { type: 'string' },
        log: { type: 'boolean' },
        'files-gc-interval': { type: 'string' },
        config: { type: 'string' },
      },
    })
  } catch (err) {
    throw new UsageError(`svc serve: ${(err as Error).message}\n${SERVE_USAGE}`)
  }
  const v = parsed.values
  const flags: Layer = {}
  if (v.data !== undefined) flags.data = resolve(v.data)
  if (v.port !== undefined) flags.port = parsePort(v.port, '--port')
  if (v.host !== undefined) flags.host = v.host
  if (v.managed) flags.managed = true
  if (v['no-mdns']) flags.noMdns = true
  if (v.log) flags.log = true
  if (v.account !== undefined) flags.account = v.account
  if (v['p2p-listen'] !== undefined) flags.p2pListen = parseListen(v['p2p-listen']) ?? []
  if (v.durability !== undefined) flags.durability = parseDurability(v.durability, '--durability')
  if (v.peers !== undefined) flags.peers = checkPeers(parseListen(v.peers) ?? [], '--peers')
  if (v['agents-port'] !== undefined) flags.agentsPort = parseAgentsPort(v['agents-port'], '--agents-port')
  if (v['model-url'] !== undefined) flags.modelUrl = v['model-url']
  if (v.model !== undefined) flags.model = v.model
  if (v['files-gc-interval'] !== undefined) flags.filesGcInterval = parseInterval(v['files-gc-interval'], '--files-gc-interval')

  const fileLayer = v.config !== undefined ? readConfigFile(resolve(v.config)) : {}
  const merged: Layer = { ...fileLayer, ...envLayer(env), ...flags }

  const managed = merged.managed ?? false
  if (merged.account !== undefined && !isAccountId(merged.account)) throw new UsageError(`svc serve: "${merged.account}" is not an account id`)
  if (merged.account !== undefined && managed) throw new UsageError('svc serve: a managed server takes its account by POST /v1/auth, not --account')
  const passkeyStdin = v['passkey-stdin'] === true
  return {
    data: merged.data ?? defaultDataRoot(env),
    port: merged.port ?? DEFAULT_PORT,
    host: loopbackHost(merged.host ?? '127.0.0.1', flags.host !== undefined ? '--host' : 'host'),
    managed,
    noMdns: merged.noMdns ?? false,
    log: merged.log ?? false,
    durability: merged.durability ?? 'normal',
    passkeyStdin,
    ...(merged.passkey !== undefined && !passkeyStdin ? { passkey: merged.passkey } : {}),
    ...(merged.account !== undefined ? { account: merged.account } : {}),
    ...(merged.p2pListen !== undefined && merged.p2pListen.length > 0 ? { p2pListen: merged.p2pListen } : {}),
    ...(merged.peers !== undefined && merged.peers.length > 0 ? { peers: merged.peers } : {}),
    ...(merged.push !== undefined ? { push: merged.push } : {}),
    ...(merged.cursorTimeoutMs !== undefined ? { cursorTimeoutMs: merged.cursorTimeoutMs } : {}),
    ...(merged.agentsPort !== undefined ? { agentsPort: merged.agentsPort } : {}),
    ...(merged.modelUrl ? { modelUrl: merged.modelUrl, model: merged.model ?? 'default' } : {}),
    ...(env.SVC_MODEL_API_KEY ? { modelApiKey: env.SVC_MODEL_API_KEY } : {}),
    ...(merged.filesGcInterval ? { filesGcInterval: merged.filesGcInterval } : {}),
  }
}
