import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { homedir, tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { UsageError } from '../../server/cli/io.ts'
import { resolveServeConfig } from '../../server/cli/serve-config.ts'

const dir = mkdtempSync(join(tmpdir(), 'svc-config-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

const ACCOUNT = 'B3oRL5qkn7FE93u9p3FxSgt2fTLy6ukc9tx3BvGNADB5'

function configFile(content: unknown): string {
  const path = join(dir, `c-${Math.random().toString(36).slice(2)}.json`)
  writeFileSync(path, typeof content === 'string' ? content : JSON.stringify(content))
  return path
}

describe('svc serve configuration', () => {
  it('defaults: XDG data dir or ~/.local/share/svc, port 7001, 127.0.0.1, standalone', () => {
    expect(resolveServeConfig([], { XDG_DATA_HOME: '/xdg' })).toEqual({
      data: '/xdg/svc',
      port: 7001,
      host: '127.0.0.1',
      managed: false,
      noMdns: false,
      durability: 'normal',
      passkeyStdin: false,
      log: false,
      logLevel: 'info',
      memoryBudgetMb: 256,
    })
    expect(resolveServeConfig([], {}).data).toBe(join(homedir(), '.local', 'share', 'svc'))
  })

  it('flags win over env vars, env vars over the config file', () => {
    const file = configFile({ data: 'rel/data', port: 7100, host: '::1', managed: true, noMdns: true, passkey: 'from-file' })
    const fromFile = resolveServeConfig(['--config', file], {})
    expect(fromFile).toEqual({
      data: join(dir, 'rel/data'),
      port: 7100,
      host: '::1',
      managed: true,
      noMdns: true,
      durability: 'normal',
      passkey: 'from-file',
      passkeyStdin: false,
      log: false,
      logLevel: 'info',
      memoryBudgetMb: 256,
    })

    const env = { SVC_DATA: '/env/data', SVC_PORT: '7200', SVC_HOST: 'localhost', SVC_MANAGED: '0', SVC_NO_MDNS: 'false', SVC_PASSKEY: 'from-env' }
    expect(resolveServeConfig(['--config', file], env)).toEqual({
      data: '/env/data',
      port: 7200,
      host: '127.0.0.1',
      managed: false,
      noMdns: false,
      passkey: 'from-env',
      durability: 'normal',
      passkeyStdin: false,
      log: false,
      logLevel: 'info',
      memoryBudgetMb: 256,
    })

    const flags = resolveServeConfig(['--config', file, '--data', '/flag/data', '--port', '0', '--host', '127.0.0.1', '--managed', '--no-mdns'], env)
    expect(flags).toMatchObject({ data: '/flag/data', port: 0, host: '127.0.0.1', managed: true, noMdns: true })
  })

  it('SVC_NO_MDNS is read here only, by one rule (1/true/yes/on, 0/false/no/off); P2P listen addresses too', () => {
    for (const on of ['1', 'true', 'YES', 'on']) expect(resolveServeConfig([], { SVC_NO_MDNS: on }).noMdns).toBe(true)
    for (const off of ['0', 'false', 'no', 'off', '']) expect(resolveServeConfig([], { SVC_NO_MDNS: off }).noMdns).toBe(false)
    expect(() => resolveServeConfig([], { SVC_NO_MDNS: '2' })).toThrow(/true or false/)

    expect(resolveServeConfig([], {}).p2pListen).toBeUndefined()
    expect(resolveServeConfig([], { SVC_P2P_LISTEN: '/ip4/127.0.0.1/tcp/0, /ip6/::1/tcp/0' }).p2pListen).toEqual(['/ip4/127.0.0.1/tcp/0', '/ip6/::1/tcp/0'])
    const file = configFile({ p2pListen: ['/ip4/127.0.0.1/tcp/4001'] })
    expect(resolveServeConfig(['--config', file], {}).p2pListen).toEqual(['/ip4/127.0.0.1/tcp/4001'])
    // Set but empty: the default, over a config file's addresses (how a test undoes its env).
    expect(resolveServeConfig(['--config', file], { SVC_P2P_LISTEN: '' }).p2pListen).toBeUndefined()
    expect(resolveServeConfig(['--p2p-listen', '/ip4/127.0.0.1/tcp/9'], { SVC_P2P_LISTEN: '/ip4/127.0.0.1/tcp/0' }).p2pListen).toEqual(['/ip4/127.0.0.1/tcp/9'])
    expect(() => resolveServeConfig(['--config', configFile({ p2pListen: '/ip4/x' })], {})).toThrow(/p2pListen must be an array/)
  })

  it('--passkey-stdin replaces a configured passkey; --account selects the account', () => {
    expect(resolveServeConfig(['--passkey-stdin'], { SVC_PASSKEY: 'x' })).toMatchObject({ passkeyStdin: true })
    expect(resolveServeConfig(['--passkey-stdin'], { SVC_PASSKEY: 'x' }).passkey).toBeUndefined()
    expect(resolveServeConfig(['--account', ACCOUNT], {}).account).toBe(ACCOUNT)
    expect(resolveServeConfig([], { SVC_ACCOUNT: ACCOUNT }).account).toBe(ACCOUNT)
  })

  it.each([
    [['--host', '0.0.0.0'], {}, /loopback/],
    [['--host', '192.168.1.4'], {}, /loopback/],
    [[], { SVC_HOST: '::' }, /loopback/],
    [['--port', '70000'], {}, /port/],
    [['--port', 'abc'], {}, /port/],
    [[], { SVC_PORT: '-1' }, /port/],
    [[], { SVC_MANAGED: 'maybe' }, /true or false/],
    [['--bogus'], {}, /Unknown option/],
    [['stray'], {}, /positional/],
    [['--account', 'not/an/id'], {}, /not an account id/],
    [['--managed', '--account', ACCOUNT], {}, /managed server/],
  ])('refuses %j %j', (args, env, message) => {
    expect(() => resolveServeConfig(args as string[], env as NodeJS.ProcessEnv)).toThrow(UsageError)
    expect(() => resolveServeConfig(args as string[], env as NodeJS.ProcessEnv)).toThrow(message)
  })

  it('refuses a config file that is not JSON, has unknown keys or wrong types', () => {
    expect(() => resolveServeConfig(['--config', configFile('{oops')], {})).toThrow(UsageError)
    expect(() => resolveServeConfig(['--config', configFile({ prot: 1 })], {})).toThrow(/unknown keys prot/)
    expect(() => resolveServeConfig(['--config', configFile({ managed: 'yes' })], {})).toThrow(/managed must be true or false/)
    expect(() => resolveServeConfig(['--config', configFile({ host: '0.0.0.0' })], {})).toThrow(/loopback/)
    expect(() => resolveServeConfig(['--config', join(dir, 'missing.json')], {})).toThrow(UsageError)
  })
})
