import { multiaddr } from '@multiformats/multiaddr'
import { peerIdFromString } from '@libp2p/peer-id'

/**
 * The daemon's push configuration (chat.md "Push notifications", Configuration): `push.enabled`
 * (null: enabled iff `peerId` is set; false: disabled), `push.peerId`, `push.addrs`. Read from the
 * environment (`SVC_PUSH_ENABLED`, `SVC_PUSH_PEER_ID`, `SVC_PUSH_ADDRS`, comma-separated), like
 * the serve flags' env layer.
 */
export interface PushConfig {
  enabled: boolean | null
  peerId?: string
  addrs?: string[]
}

/** The push node to dial: its peer id and dialable addresses (each ending /p2p/<peerId>). */
export interface PushNodeTarget {
  peerId: string
  addrs: string[]
}

/** Whether the environment names any push key (the env layer then replaces the file's). */
export const envHasPush = (env: NodeJS.ProcessEnv) => env.SVC_PUSH_ENABLED !== undefined || env.SVC_PUSH_PEER_ID !== undefined || env.SVC_PUSH_ADDRS !== undefined

/** The config file's `push` object; a message for anything else. */
export function pushConfigFromFile(v: unknown): PushConfig | string {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return 'push must be an object {enabled?, peerId?, addrs?}'
  const o = v as Record<string, unknown>
  const extra = Object.keys(o).filter((k) => !['enabled', 'peerId', 'addrs'].includes(k))
  if (extra.length) return `push: unknown keys ${extra.join(', ')}`
  if (o.enabled !== undefined && o.enabled !== null && typeof o.enabled !== 'boolean') return 'push.enabled must be true, false or null'
  if (o.peerId !== undefined && typeof o.peerId !== 'string') return 'push.peerId must be a string'
  if (o.addrs !== undefined && (!Array.isArray(o.addrs) || !o.addrs.every((a) => typeof a === 'string'))) return 'push.addrs must be a list of multiaddr strings'
  const cfg: PushConfig = { enabled: (o.enabled as boolean | null | undefined) ?? null }
  if (o.peerId) cfg.peerId = o.peerId as string
  if ((o.addrs as string[] | undefined)?.length) cfg.addrs = o.addrs as string[]
  return cfg
}

export function pushConfigFromEnv(env: NodeJS.ProcessEnv): PushConfig {
  const e = env.SVC_PUSH_ENABLED?.trim().toLowerCase()
  const enabled = e === undefined || e === '' || e === 'null' ? null : ['1', 'true', 'yes', 'on'].includes(e)
  const cfg: PushConfig = { enabled }
  if (env.SVC_PUSH_PEER_ID?.trim()) cfg.peerId = env.SVC_PUSH_PEER_ID.trim()
  const addrs = (env.SVC_PUSH_ADDRS ?? '').split(',').map((s) => s.trim()).filter(Boolean)
  if (addrs.length) cfg.addrs = addrs
  return cfg
}

/**
 * The node a configuration names, or undefined: disabled, no peer id, or half-configured (a
 * peer id without addresses, an address naming another peer, an unparsable one), which is left
 * alone rather than guessed at.
 */
export function pushNodeOf(cfg: PushConfig): PushNodeTarget | undefined {
  if (cfg.enabled === false || !cfg.peerId || !cfg.addrs?.length) return undefined
  try {
    peerIdFromString(cfg.peerId)
    const addrs = cfg.addrs.map((a) => {
      const ma = multiaddr(a)
      const p2p = ma.getComponents().find((c) => c.name === 'p2p')?.value
      if (p2p !== undefined && p2p !== cfg.peerId) throw new Error('address names another peer')
      return p2p ? ma.toString() : `${ma.toString()}/p2p/${cfg.peerId}`
    })
    return { peerId: cfg.peerId, addrs }
  } catch {
    return undefined
  }
}
