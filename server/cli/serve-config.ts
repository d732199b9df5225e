import { readFileSync } from 'node:fs'
import { dirname, resolve } from 'node:path'
import { parseArgs } from 'node:util'
import { joinDashValues } from './client.ts'
import { Value } from '@sinclair/typebox/value'
import { CONFIG_FLAG, CONFIG_ROWS, fileTopKeys, ServeConfigSchema, type ServeConfig } from './config-table.ts'
import { isPlainObject } from './config-table-checks.ts'
import { envNames, type Row, type Source } from './config-table-row.ts'
import { serveUsage } from './config-table-usage.ts'
import { UsageError } from './io.ts'

/**
 * Resolves `svc serve`'s settings from the rows of config-table.ts: flags win over env vars,
 * env vars over the config file, that over defaults. The daemon's environment variables are
 * read here only: everything below receives them as options.
 */

export { AGENTS_PORT_OFFSET, DEFAULT_AGENTS_PORT, DEFAULT_PORT, type ServeConfig } from './config-table.ts'
export { defaultDataRoot, loopbackHost } from './config-table-checks.ts'

export const SERVE_USAGE = serveUsage()

/** One layer's values by config key, each with where it came from. */
type Layer = Map<string, { value: unknown; src: Source }>

function readValue(r: Row, raw: unknown, src: Source): unknown {
  const converted = typeof raw === 'string' && src.from !== 'file' && r.fromText ? r.fromText(raw) : raw
  const v = r.coerce ? r.coerce(converted) : converted
  if (!Value.Check(r.layer ?? r.schema, v)) throw new UsageError(r.invalid(src, raw))
  return r.refine ? r.refine(v, src) : v
}

function flagLayer(args: string[]): { flags: Layer; configPath?: string } {
  const options: Record<string, { type: 'string' | 'boolean' }> = { [CONFIG_FLAG.flag]: { type: 'string' } }
  for (const [, r] of CONFIG_ROWS) if (r.flag) options[r.flag] = { type: r.arg ? 'string' : 'boolean' }
  let values: Record<string, string | boolean | undefined>
  try {
    values = parseArgs({ args: joinDashValues(args, options), strict: true, allowPositionals: false, options }).values
  } catch (err) {
    throw new UsageError(`svc serve: ${(err as Error).message}\n${SERVE_USAGE}`)
  }
  const flags: Layer = new Map()
  for (const [key, r] of CONFIG_ROWS) {
    const raw = r.flag === undefined ? undefined : values[r.flag]
    if (raw === undefined) continue
    const src: Source = { from: 'flag', where: `--${r.flag}`, name: key, base: '' }
    flags.set(key, { value: readValue(r, raw, src), src })
  }
  const config = values[CONFIG_FLAG.flag]
  return { flags, configPath: typeof config === 'string' ? resolve(config) : undefined }
}

function envLayer(env: NodeJS.ProcessEnv): Layer {
  const out: Layer = new Map()
  for (const [key, r] of CONFIG_ROWS) {
    const set = envNames(r).filter((n) => env[n] !== undefined && (r.emptyEnv || env[n] !== ''))
    if (set.length === 0) continue
    const src: Source = { from: 'env', where: set[0], name: key, base: '' }
    out.set(key, { value: r.readEnv ? r.readEnv(env) : readValue(r, env[set[0]], src), src })
  }
  return out
}

/** The value at a dotted file key (`files.gcInterval`); its object was checked by fileLayer. */
function fileValue(cfg: Record<string, unknown>, key: string): unknown {
  let v: unknown = cfg
  for (const part of key.split('.')) v = isPlainObject(v) ? v[part] : undefined
  return v
}

function fileLayer(path: string): Layer {
  const where = `--config ${path}`
  let cfg: unknown
  try {
    cfg = JSON.parse(readFileSync(path, 'utf8'))
  } catch (err) {
    throw new UsageError(`${where}: ${(err as Error).message}`)
  }
  if (!isPlainObject(cfg)) throw new UsageError(`${where}: expected a JSON object`)
  const accepted = fileTopKeys()
  const unknown = Object.keys(cfg).filter((k) => !accepted.includes(k))
  if (unknown.length > 0) throw new UsageError(`${where}: unknown keys ${unknown.join(', ')} (accepted: ${accepted.join(', ')})`)
  for (const group of accepted) {
    const inner = CONFIG_ROWS.flatMap(([, r]) => (r.file?.startsWith(`${group}.`) ? [r.file.slice(group.length + 1)] : []))
    const g = cfg[group]
    if (inner.length === 0 || g === undefined) continue
    if (!isPlainObject(g) || Object.keys(g).some((k) => !inner.includes(k))) {
      throw new UsageError(`${where}: ${group} must be an object with the key${inner.length > 1 ? 's' : ''} ${inner.join(', ')}`)
    }
  }
  const out: Layer = new Map()
  for (const [key, r] of CONFIG_ROWS) {
    const raw = r.file === undefined ? undefined : fileValue(cfg, r.file)
    if (raw === undefined || r.file === undefined) continue
    const src: Source = { from: 'file', where, name: r.file, base: dirname(path) }
    out.set(key, { value: r.readFile ? r.readFile(raw, src) : readValue(r, raw, src), src })
  }
  return out
}

export function resolveServeConfig(args: string[], env: NodeJS.ProcessEnv): ServeConfig {
  const { flags, configPath } = flagLayer(args)
  const file = configPath !== undefined ? fileLayer(configPath) : new Map()
  const fromEnv = envLayer(env)
  const won = (key: string) => flags.get(key) ?? fromEnv.get(key) ?? file.get(key)
  const defaults = new Map<string, unknown>(CONFIG_ROWS.map(([key, r]) => [key, r.defaultFrom ? r.defaultFrom(env) : r.default]))
  const get = (key: string) => won(key)?.value ?? defaults.get(key)

  const out: Record<string, unknown> = {}
  for (const [key, r] of CONFIG_ROWS) {
    const value = get(key)
    const final = r.finish ? r.finish(value, { get, from: won(key)?.src.from }) : value
    if (final !== undefined) out[key] = final
  }
  if (!Value.Check(ServeConfigSchema, out)) {
    // Every layer's value was checked; only a row's finish can get here, which is a bug.
    const e = Value.Errors(ServeConfigSchema, out).First()
    throw new Error(`svc serve: resolved configuration is invalid at ${e?.path}: ${e?.message}`)
  }
  return out
}
