import { parseHubSpec } from '../../node/hubs/hub-book.ts'
import { homedir } from 'node:os'
import { join } from 'node:path'
import { Type } from '@sinclair/typebox'
import { Value } from '@sinclair/typebox/value'
import { parsePeerAddress } from '../../node/p2p/peer-address.ts'
import { PushConfigSchema, type PushConfig } from '../../node/push/config.ts'
import { UsageError } from './io.ts'
import { at } from './config-table-kinds.ts'
import type { Source } from './config-table-row.ts'

/**
 * The checks and readers that rows of CONFIG_TABLE call: peers must be dialable, the host a
 * loopback address, the push node's file object well formed; and the data root's default.
 */

/** Each a dialable multiaddr with a peer id: the daemon would refuse to boot otherwise. */
/** Hubs as the `hubs` setting names them: MULTIADDR or MULTIADDR#TOKEN (node/hubs/hub-book.ts). */
export function hubSpecs(specs: string[], s: Source): string[] {
  for (const h of specs) {
    try {
      parseHubSpec(h)
    } catch (err) {
      throw new UsageError(`${at(s)}: "${h.split('#')[0]}": ${(err as Error).message}`)
    }
  }
  return specs
}

export function dialable(addrs: string[], s: Source): string[] {
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

export function pushFromFile(raw: unknown, s: Source): PushConfig {
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
