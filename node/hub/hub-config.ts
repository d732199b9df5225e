import { parseArgs } from 'node:util'
import { join } from 'node:path'
import { HUB_DEFAULTS, type HubQuotas } from '../../sync/hub/constants.ts'
import { LOG_LEVELS, type LogThreshold } from '../../sync/core/log.ts'
import { HUB_CLI_DEFAULTS, HUB_MAX_CONNECTIONS } from './hub-constants.ts'

/** `svc hub`'s configuration, from its flags (docs/hub.md "Running a hub"). */
export interface HubCliConfig {
  /** Where the hub keeps its key file and, without --postgres, its SQLite database. */
  data: string
  keyFile: string
  postgres?: string
  listen: string[]
  operator: { host: string; port: number } | undefined
  allow: string[]
  quotas: HubQuotas
  maxConnections: number
  logLevel: LogThreshold
}

export const HUB_USAGE = `usage: svc hub --data DIR [--postgres URL] [--listen MA,...] [--operator HOST:PORT|off]
               [--allow ACCOUNT,...] [--max-spaces N] [--max-bytes N] [--changes-per-minute N]
               [--max-connections N] [--key-file FILE] [--log-level LEVEL]
       svc hub admit ACCOUNT (--data DIR | --key-file FILE) [--expires-days N]
  Runs a hub: an always-on peer that keeps the ciphertext of the spaces admitted accounts
  register, never holding a read key (docs/hub.md). One process on SQLite in DIR; with
  --postgres, any number of processes share one PostgreSQL database (give each the same key
  file to put them behind one address). stdout: one JSON line {identity, peerId, addrs, operator}.
  admit: prints an admission token for ACCOUNT, signed with the hub's key.
  defaults: --listen ${HUB_CLI_DEFAULTS.listen}, --operator ${HUB_CLI_DEFAULTS.operatorHost}:${HUB_CLI_DEFAULTS.operatorPort},
  --max-spaces ${HUB_DEFAULTS.quotas.maxSpaces}, --max-bytes ${HUB_DEFAULTS.quotas.maxBytes}, --changes-per-minute ${HUB_DEFAULTS.quotas.changesPerMinute},
  --max-connections ${HUB_MAX_CONNECTIONS}`

export class HubUsageError extends Error {}

const BASE58 = /^[1-9A-HJ-NP-Za-km-z]+$/

const positiveInt = (name: string, v: string | undefined, d: number): number => {
  if (v === undefined) return d
  const n = Number(v)
  if (!Number.isSafeInteger(n) || n <= 0) throw new HubUsageError(`--${name} must be a positive integer`)
  return n
}

export function parseHubArgs(args: string[]): HubCliConfig {
  let values: Record<string, string | undefined>
  try {
    values = parseArgs({
      args,
      strict: true,
      allowPositionals: false,
      options: {
        data: { type: 'string' },
        'key-file': { type: 'string' },
        postgres: { type: 'string' },
        listen: { type: 'string' },
        operator: { type: 'string' },
        allow: { type: 'string' },
        'max-spaces': { type: 'string' },
        'max-bytes': { type: 'string' },
        'changes-per-minute': { type: 'string' },
        'max-connections': { type: 'string' },
        'log-level': { type: 'string' },
      },
    }).values
  } catch (err) {
    throw new HubUsageError((err as Error).message)
  }
  if (!values.data) throw new HubUsageError('--data DIR is required')
  if (values.postgres !== undefined && !/^postgres(ql)?:\/\//.test(values.postgres)) throw new HubUsageError('--postgres must be a postgresql:// URL')
  const allow = values.allow ? values.allow.split(',').map((a) => a.trim()) : []
  const bad = allow.find((a) => !BASE58.test(a))
  if (bad !== undefined) throw new HubUsageError(`--allow: "${bad}" is not an account id`)
  let operator: HubCliConfig['operator'] = { host: HUB_CLI_DEFAULTS.operatorHost, port: HUB_CLI_DEFAULTS.operatorPort }
  if (values.operator === 'off') operator = undefined
  else if (values.operator !== undefined) {
    const m = /^(.+):(\d+)$/.exec(values.operator)
    if (!m || Number(m[2]) > 65535) throw new HubUsageError('--operator must be HOST:PORT or off')
    operator = { host: m[1], port: Number(m[2]) }
  }
  const logLevel = (values['log-level'] ?? 'info') as LogThreshold
  if (![...LOG_LEVELS, 'silent'].includes(logLevel)) throw new HubUsageError(`--log-level must be one of ${[...LOG_LEVELS, 'silent'].join(', ')}`)
  return {
    data: values.data,
    keyFile: values['key-file'] ?? join(values.data, HUB_CLI_DEFAULTS.keyFile),
    ...(values.postgres ? { postgres: values.postgres } : {}),
    listen: (values.listen ?? HUB_CLI_DEFAULTS.listen).split(',').map((a) => a.trim()),
    operator,
    allow,
    quotas: {
      maxSpaces: positiveInt('max-spaces', values['max-spaces'], HUB_DEFAULTS.quotas.maxSpaces),
      maxBytes: positiveInt('max-bytes', values['max-bytes'], HUB_DEFAULTS.quotas.maxBytes),
      changesPerMinute: positiveInt('changes-per-minute', values['changes-per-minute'], HUB_DEFAULTS.quotas.changesPerMinute),
    },
    maxConnections: positiveInt('max-connections', values['max-connections'], HUB_MAX_CONNECTIONS),
    logLevel,
  }
}
