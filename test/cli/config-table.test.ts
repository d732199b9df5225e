import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { TypeGuard } from '@sinclair/typebox'
import { afterAll, describe, expect, expectTypeOf, it } from 'vitest'
import type { Durability } from '../../node/account/files.ts'
import type { PushConfig } from '../../node/push/config.ts'
import { isLogThreshold, type LogThreshold } from '../../sync/core/log.ts'
import { CONFIG_ROWS } from '../../server/cli/config-table.ts'
import { envNames, type Row } from '../../server/cli/config-table-row.ts'
import { configTableMarkdown } from '../../server/cli/config-table-usage.ts'
import { UsageError } from '../../server/cli/io.ts'
import { resolveServeConfig, SERVE_USAGE, type ServeConfig } from '../../server/cli/serve-config.ts'

const dir = mkdtempSync(join(tmpdir(), 'svc-config-table-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

let files = 0
function configFile(content: unknown): string {
  const path = join(dir, `c${files++}.json`)
  writeFileSync(path, typeof content === 'string' ? content : JSON.stringify(content))
  return path
}

/** `{a: {b: v}}` for the file key `a.b`. */
const nested = (key: string, v: unknown): unknown => key.split('.').reduceRight<unknown>((inner, k) => ({ [k]: inner }), v)

const A1 = 'B3oRL5qkn7FE93u9p3FxSgt2fTLy6ukc9tx3BvGNADB5'
const A2 = 'C3oRL5qkn7FE93u9p3FxSgt2fTLy6ukc9tx3BvGNADB5'
const PEER = '12D3KooWCaX7ZmKUcXwR5DdgqMmMb1PV6LNtXnnkZNVUYdfbdSgJ'

/** A value as a flag or env var spells it (`text`, or `env` for several variables), as the file does (`json`), and what it resolves to. */
interface Sample {
  text?: string
  env?: Record<string, string>
  json?: unknown
  value: unknown
}

/**
 * Two different values per row (`a` given as the flag where there is one, `b` different, so a
 * precedence test can tell them apart), and env vars a row needs to show (a model needs a URL).
 */
const SAMPLES: Record<string, { a: Sample; b: Sample; needs?: Record<string, string> }> = {
  data: { a: { text: '/a/data', json: '/a/data', value: '/a/data' }, b: { text: '/env/data', json: '/env/data', value: '/env/data' } },
  port: { a: { text: '7100', json: 7100, value: 7100 }, b: { text: '0', json: 0, value: 0 } },
  host: { a: { text: '::1', json: '::1', value: '::1' }, b: { text: 'localhost', json: 'localhost', value: '127.0.0.1' } },
  managed: { a: { text: 'yes', json: true, value: true }, b: { text: 'off', json: false, value: false } },
  noMdns: { a: { text: '1', json: true, value: true }, b: { text: '0', json: false, value: false } },
  passkeyStdin: { a: { value: true }, b: { value: false } },
  passkey: { a: { text: 'pk-a', json: 'pk-a', value: 'pk-a' }, b: { text: 'pk-b', json: 'pk-b', value: 'pk-b' } },
  account: { a: { text: A1, json: A1, value: A1 }, b: { text: A2, json: A2, value: A2 } },
  p2pListen: {
    a: { text: '/ip4/127.0.0.1/tcp/1', json: ['/ip4/127.0.0.1/tcp/1'], value: ['/ip4/127.0.0.1/tcp/1'] },
    b: { text: '/ip4/127.0.0.1/tcp/2,/ip6/::1/tcp/2', json: ['/ip4/127.0.0.1/tcp/2', '/ip6/::1/tcp/2'], value: ['/ip4/127.0.0.1/tcp/2', '/ip6/::1/tcp/2'] },
  },
  durability: { a: { text: 'full', json: 'full', value: 'full' }, b: { text: 'normal', json: 'normal', value: 'normal' } },
  peers: {
    a: { text: `/ip4/127.0.0.1/tcp/4001/p2p/${PEER}`, json: [`/ip4/127.0.0.1/tcp/4001/p2p/${PEER}`], value: [`/ip4/127.0.0.1/tcp/4001/p2p/${PEER}`] },
    b: { text: `/ip4/127.0.0.1/tcp/4002/p2p/${PEER}`, json: [`/ip4/127.0.0.1/tcp/4002/p2p/${PEER}`], value: [`/ip4/127.0.0.1/tcp/4002/p2p/${PEER}`] },
  },
  hubs: {
    a: { text: `/ip4/127.0.0.1/tcp/4410/p2p/${PEER}`, json: [`/ip4/127.0.0.1/tcp/4410/p2p/${PEER}`], value: [`/ip4/127.0.0.1/tcp/4410/p2p/${PEER}`] },
    b: {
      text: `/ip4/127.0.0.1/tcp/4411/p2p/${PEER}#3mJr7AoUXx2Wqd`,
      json: [`/ip4/127.0.0.1/tcp/4411/p2p/${PEER}#3mJr7AoUXx2Wqd`],
      value: [`/ip4/127.0.0.1/tcp/4411/p2p/${PEER}#3mJr7AoUXx2Wqd`],
    },
  },
  log: { a: { text: 'true', json: true, value: true }, b: { text: 'false', json: false, value: false } },
  logLevel: { a: { text: 'debug', json: 'debug', value: 'debug' }, b: { text: 'silent', json: 'silent', value: 'silent' } },
  agentsPort: { a: { text: '0', json: 0, value: 0 }, b: { text: 'off', json: -1, value: -1 } },
  modelUrl: { a: { text: 'http://a', json: 'http://a', value: 'http://a' }, b: { text: 'http://b', json: 'http://b', value: 'http://b' } },
  model: { a: { text: 'm-a', json: 'm-a', value: 'm-a' }, b: { text: 'm-b', json: 'm-b', value: 'm-b' }, needs: { SVC_MODEL_URL: 'http://m' } },
  modelApiKey: { a: { text: 'key-a', value: 'key-a' }, b: { text: 'key-b', value: 'key-b' } },
  filesGcInterval: { a: { text: '5000', json: 5000, value: 5000 }, b: { text: '60000', json: 60000, value: 60000 } },
  push: {
    a: {
      env: { SVC_PUSH_PEER_ID: PEER, SVC_PUSH_ADDRS: '/ip4/127.0.0.1/tcp/4001' },
      json: { peerId: PEER, addrs: ['/ip4/127.0.0.1/tcp/4001'] },
      value: { enabled: null, peerId: PEER, addrs: ['/ip4/127.0.0.1/tcp/4001'] },
    },
    b: { env: { SVC_PUSH_ENABLED: 'false' }, json: { enabled: false }, value: { enabled: false } },
  },
  memoryBudgetMb: { a: { text: '64', json: 64, value: 64 }, b: { text: '2048', json: 2048, value: 2048 } },
  cursorTimeoutMs: { a: { text: '500', value: 500 }, b: { text: '1000', value: 1000 } },
}

const flagArgs = (r: Row, s: Sample): string[] => (r.arg ? [`--${r.flag}`, s.text ?? ''] : s.value === true ? [`--${r.flag}`] : [])
const envOf = (r: Row, s: Sample): Record<string, string> => s.env ?? (s.text === undefined ? {} : { [envNames(r)[0]]: s.text })
const fileArgs = (r: Row, s: Sample): string[] => ['--config', configFile(nested(r.file ?? '', s.json))]
const resolved = (key: string, args: string[], env: Record<string, string>) => (resolveServeConfig(args, { ...SAMPLES[key].needs, ...env }) as Record<string, unknown>)[key]

describe('the svc serve configuration table', () => {
  it('has two samples for every row, and they differ', () => {
    expect(Object.keys(SAMPLES).sort()).toEqual(CONFIG_ROWS.map(([k]) => k).sort())
    for (const [key, { a, b }] of Object.entries(SAMPLES)) expect(a.value, key).not.toEqual(b.value)
  })

  it.each(CONFIG_ROWS.map(([key, r]) => [key, r] as const))('%s: its flag, env var and file key are each read', (key, r) => {
    const { a, b } = SAMPLES[key]
    if (r.flag) expect(resolved(key, flagArgs(r, a), {})).toEqual(a.value)
    for (const s of [a, b]) {
      if (r.env) expect(resolved(key, [], envOf(r, s))).toEqual(s.value)
      if (r.file) expect(resolved(key, fileArgs(r, s), {})).toEqual(s.value)
    }
  })

  it.each(CONFIG_ROWS.map(([key, r]) => [key, r] as const))('%s: flags win over env vars, env vars over the file, the file over the default', (key, r) => {
    const { a, b } = SAMPLES[key]
    if (r.flag && r.env) expect(resolved(key, flagArgs(r, a), envOf(r, b))).toEqual(a.value)
    if (r.flag && r.file) expect(resolved(key, [...fileArgs(r, b), ...flagArgs(r, a)], {})).toEqual(a.value)
    if (r.env && r.file) {
      expect(resolved(key, fileArgs(r, a), envOf(r, b))).toEqual(b.value)
      expect(resolved(key, fileArgs(r, b), envOf(r, a))).toEqual(a.value)
    }
    const fallback = r.defaultFrom ? r.defaultFrom({}) : r.default
    // model falls back to "default" once a URL is set (SAMPLES' `needs`).
    expect(resolved(key, [], {})).toEqual(key === 'model' ? 'default' : fallback)
  })

  it('a row with a default is always in the config; one without may be absent', () => {
    for (const [key, r] of CONFIG_ROWS) {
      expect(TypeGuard.IsOptional(r.schema), key).toBe(r.default === undefined && r.defaultFrom === undefined)
    }
  })

  it('--agents-port -1 (documented as off) is read as off, as written with a space (issue 39 item 6)', () => {
    expect(resolveServeConfig(['--agents-port', '-1'], {}).agentsPort).toBe(-1)
    expect(resolveServeConfig(['--agents-port', 'off'], {}).agentsPort).toBe(-1)
    expect(() => resolveServeConfig(['--agents-port', '-2'], {})).toThrow('--agents-port: the port must be an integer from 0 to 65535')
  })

  it('refuses a bad value with the same UsageError as before the table', () => {
    const cases: Array<[string[], Record<string, string>, unknown, string]> = [
      [['--port', '70000'], {}, undefined, '--port: the port must be an integer from 0 to 65535'],
      [[], { SVC_PORT: '-1' }, undefined, 'SVC_PORT: the port must be an integer from 0 to 65535'],
      [[], {}, { port: 1.5 }, 'CONFIG: the port must be an integer from 0 to 65535'],
      [[], {}, { agentsPort: 'x' }, 'CONFIG: agentsPort: the port must be an integer from 0 to 65535'],
      [['--agents-port=-2'], {}, undefined, '--agents-port: the port must be an integer from 0 to 65535'],
      [['--host', '0.0.0.0'], {}, undefined, '--host: refusing to bind "0.0.0.0": the server binds only a loopback address (127.0.0.1, ::1 or localhost)'],
      [[], { SVC_HOST: '::' }, undefined, 'host: refusing to bind "::": the server binds only a loopback address (127.0.0.1, ::1 or localhost)'],
      [[], {}, { host: 5 }, 'CONFIG: host must be a string'],
      [[], { SVC_MANAGED: 'maybe' }, undefined, 'SVC_MANAGED: expected true or false, got "maybe"'],
      [[], {}, { noMdns: 'yes' }, 'CONFIG: noMdns must be true or false'],
      [['--durability', 'fsync'], {}, undefined, '--durability: durability must be "normal" or "full"'],
      [[], {}, { durability: 1 }, 'CONFIG: durability must be "normal" or "full"'],
      [[], {}, { p2pListen: '/ip4/x' }, 'CONFIG: p2pListen must be an array of multiaddr strings'],
      [[], { SVC_PEERS: 'bad' }, undefined, 'SVC_PEERS: "bad": not a multiaddr'],
      [[], {}, { peers: ['bad'] }, 'CONFIG: peers: "bad": not a multiaddr'],
      [[], { SVC_HUBS: 'bad' }, undefined, 'SVC_HUBS: "bad": not a multiaddr'],
      [
        [],
        {},
        { hubs: [`/ip4/127.0.0.1/tcp/1/p2p/${PEER}#not-base58!`] },
        `CONFIG: hubs: "/ip4/127.0.0.1/tcp/1/p2p/${PEER}": token must be the admission token the hub operator gave (base58)`,
      ],
      [['--files-gc-interval', 'soon'], {}, undefined, '--files-gc-interval: expected a whole number of milliseconds'],
      [[], {}, { files: { gcInterval: 1.5 } }, 'CONFIG: files.gcInterval: expected a whole number of milliseconds'],
      [[], {}, { files: { gcInterval: 5, other: 1 } }, 'CONFIG: files must be an object with the key gcInterval'],
      [[], { SVC_CURSOR_TIMEOUT_MS: '99' }, undefined, 'SVC_CURSOR_TIMEOUT_MS must be an integer number of ms in 100..3600000'],
      [[], {}, { push: { enabled: 'x' } }, 'CONFIG: push.enabled must be true, false or null'],
      [[], {}, { push: { addrs: [1] } }, 'CONFIG: push.addrs must be a list of multiaddr strings'],
      [[], {}, { push: { extra: 1 } }, 'CONFIG: push: unknown keys extra'],
      [[], {}, { push: [] }, 'CONFIG: push must be an object {enabled?, peerId?, addrs?}'],
      [['--account', 'not/an/id'], {}, undefined, 'svc serve: "not/an/id" is not an account id'],
      [['--managed'], {}, { account: A1 }, 'svc serve: a managed server takes its account by POST /v1/auth, not --account'],
      [
        [],
        {},
        { cursorTimeoutMs: 200 },
        'CONFIG: unknown keys cursorTimeoutMs (accepted: data, port, host, managed, noMdns, passkey, account, p2pListen, durability, peers, hubs, log, logLevel, agentsPort, modelUrl, model, files, push, memoryBudget)',
      ],
      [[], {}, '[1]', 'CONFIG: expected a JSON object'],
      [['--memory-budget', '8'], {}, undefined, '--memory-budget must be an integer number of MB in 16..1048576'],
      [['--log-level', 'loud'], {}, undefined, '--log-level: logLevel must be "debug", "info", "warn", "error" or "silent"'],
      [[], { SVC_LOG_LEVEL: 'trace' }, undefined, 'SVC_LOG_LEVEL: logLevel must be "debug", "info", "warn", "error" or "silent"'],
      [[], {}, { logLevel: 1 }, 'CONFIG: logLevel must be "debug", "info", "warn", "error" or "silent"'],
    ]
    for (const [args, env, content, message] of cases) {
      const path = content === undefined ? undefined : configFile(content)
      const all = path === undefined ? args : ['--config', path, ...args]
      expect(() => resolveServeConfig(all, env)).toThrow(UsageError)
      expect(() => resolveServeConfig(all, env)).toThrow(message.replace('CONFIG', `--config ${path}`))
    }
    expect(() => resolveServeConfig(['--bogus'], {})).toThrow("svc serve: Unknown option '--bogus'")
    expect(() => resolveServeConfig(['--bogus'], {})).toThrow(SERVE_USAGE)
  })

  it("a lower layer's bad host is not checked when a higher one sets it; the log level is one isLogThreshold accepts", () => {
    expect(resolveServeConfig(['--config', configFile({ host: '0.0.0.0' }), '--host', '::1'], {}).host).toBe('::1')
    for (const level of ['debug', 'info', 'warn', 'error', 'silent']) expect(isLogThreshold(resolveServeConfig(['--log-level', level], {}).logLevel)).toBe(true)
  })

  it("the usage text names every flag and env var, and the config file's keys", () => {
    for (const [, r] of CONFIG_ROWS) {
      if (r.flag) expect(SERVE_USAGE).toContain(`--${r.flag}`)
      for (const name of envNames(r)) expect(SERVE_USAGE).toContain(name)
      if (r.file) expect(SERVE_USAGE).toContain(r.file.split('.').at(-1))
    }
    expect(SERVE_USAGE).toContain('--config FILE')
  })

  it('docs/operations.md carries the table rendered from the rows', () => {
    const doc = readFileSync(join(import.meta.dirname, '..', '..', 'docs', 'operations.md'), 'utf8')
    const start = '<!-- serve-config-table:start -->'
    const end = '<!-- serve-config-table:end -->'
    const from = doc.indexOf(start)
    const to = doc.indexOf(end)
    expect(from, `docs/operations.md lacks ${start}`).toBeGreaterThanOrEqual(0)
    const inDoc = doc.slice(from + start.length, to).trim()
    expect(inDoc, `docs/operations.md's table is stale; put configTableMarkdown() between the markers:\n${configTableMarkdown()}`).toBe(configTableMarkdown())
  })

  it('ServeConfig keeps its field types', () => {
    expectTypeOf<ServeConfig['host']>().toEqualTypeOf<'127.0.0.1' | '::1'>()
    expectTypeOf<ServeConfig['durability']>().toEqualTypeOf<Durability>()
    expectTypeOf<ServeConfig['logLevel']>().toEqualTypeOf<LogThreshold>()
    expectTypeOf<ServeConfig['push']>().toEqualTypeOf<PushConfig | undefined>()
    expectTypeOf<ServeConfig['peers']>().toEqualTypeOf<string[] | undefined>()
    expectTypeOf<ServeConfig['agentsPort']>().toEqualTypeOf<number | undefined>()
    expectTypeOf<ServeConfig['passkeyStdin']>().toEqualTypeOf<boolean>()
    expectTypeOf<ServeConfig>().toHaveProperty('data').toEqualTypeOf<string>()
  })
})
