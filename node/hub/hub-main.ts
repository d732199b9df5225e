import { mkdirSync } from 'node:fs'
import { join } from 'node:path'
import { systemEnv } from '../../sync/core/env.ts'
import { defaultCryptoProvider } from '../../sync/crypto/provider.ts'
import { mintAdmission } from '../../sync/hub/admission.ts'
import { daemonLoggers } from '../log/pino-logger.ts'
import { HUB_CLI_DEFAULTS } from './hub-constants.ts'
import { HUB_USAGE, HubUsageError, parseHubArgs, type HubCliConfig } from './hub-config.ts'
import { loadOrCreateHubKey } from './hub-key.ts'
import { HubServer } from './hub-server.ts'
import { openHubStore } from './store/open-store.ts'

export { HUB_USAGE, HubUsageError, parseHubArgs }

/** A running hub process, as `svc hub` prints it and stops it. */
export interface HubProcess {
  summary: { identity: string; peerId: string; addrs: string[]; operator: string | null; store: string }
  server: HubServer
  close(): Promise<void>
}

/** Starts a hub from its configuration: key, store, then the server. */
export async function startHubProcess(cfg: HubCliConfig, logStream: { write(line: string): unknown } = process.stderr): Promise<HubProcess> {
  const { log } = daemonLoggers(cfg.logLevel, logStream)
  const hubLog = log.child('hub')
  mkdirSync(cfg.data, { recursive: true, mode: 0o700 })
  const key = loadOrCreateHubKey(cfg.keyFile)
  const store = await openHubStore(cfg.postgres ?? { sqlite: join(cfg.data, HUB_CLI_DEFAULTS.sqliteFile) }, hubLog.child('store'))
  const server = await HubServer.start({
    key,
    store,
    crypto: await defaultCryptoProvider(),
    env: systemEnv,
    listen: cfg.listen,
    allow: cfg.allow,
    quotas: cfg.quotas,
    maxConnections: cfg.maxConnections,
    ...(cfg.operator ? { operator: cfg.operator } : {}),
    log: hubLog,
  })
  return {
    summary: { identity: server.identity, peerId: server.peerId, addrs: server.addrs, operator: server.operatorUrl ?? null, store: store.name },
    server,
    close: () => server.close(),
  }
}

/** `svc hub admit ACCOUNT (--data DIR | --key-file FILE) [--expires-days N]`: the token, signed with the hub's key. */
export async function admitCommand(args: string[]): Promise<string> {
  const [account, ...rest] = args
  const flag = (name: string) => {
    const i = rest.indexOf(`--${name}`)
    return i >= 0 ? rest[i + 1] : undefined
  }
  const data = flag('data')
  const keyFile = flag('key-file') ?? (data ? join(data, HUB_CLI_DEFAULTS.keyFile) : undefined)
  if (!account || account.startsWith('--') || !keyFile) throw new HubUsageError('svc hub admit ACCOUNT needs --data DIR or --key-file FILE')
  const days = flag('expires-days')
  if (days !== undefined && !(Number.isSafeInteger(Number(days)) && Number(days) > 0)) throw new HubUsageError('--expires-days must be a positive integer')
  const expiresAt = days === undefined ? 0 : systemEnv.now() + Number(days) * 86_400_000
  try {
    return await mintAdmission(await defaultCryptoProvider(), loadOrCreateHubKey(keyFile, false), account, expiresAt)
  } catch (err) {
    if ((err as Error).message === 'not an account id') throw new HubUsageError(`"${account}" is not an account id`)
    throw err
  }
}
