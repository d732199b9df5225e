import { multiaddr } from '@multiformats/multiaddr'
import { peerIdFromString } from '@libp2p/peer-id'
import { Type, type Static } from '@sinclair/typebox'

/**
 * The daemon's push configuration (chat.md "Push notifications", Configuration): `push.enabled`
 * (null: enabled iff `peerId` is set; false: disabled), `push.peerId`, `push.addrs`. `svc serve`
 * reads it from its config file's `push` object or from the environment (`SVC_PUSH_ENABLED`,
 * `SVC_PUSH_PEER_ID`, `SVC_PUSH_ADDRS`, comma-separated): its row in server/cli/config-table.ts.
 */
export const PushConfigSchema = Type.Object({
  enabled: Type.Union([Type.Boolean(), Type.Null()]),
  peerId: Type.Optional(Type.String()),
  addrs: Type.Optional(Type.Array(Type.String())),
})
export type PushConfig = Static<typeof PushConfigSchema>

/** The push node to dial: its peer id and dialable addresses (each ending /p2p/<peerId>). */
export interface PushNodeTarget {
  peerId: string
  addrs: string[]
}

export function pushConfigFromEnv(env: NodeJS.ProcessEnv): PushConfig {
  const e = env.SVC_PUSH_ENABLED?.trim().toLowerCase()
  const enabled = e === undefined || e === '' || e === 'null' ? null : ['1', 'true', 'yes', 'on'].includes(e)
  const cfg: PushConfig = { enabled }
  if (env.SVC_PUSH_PEER_ID?.trim()) cfg.peerId = env.SVC_PUSH_PEER_ID.trim()
  const addrs = (env.SVC_PUSH_ADDRS ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)
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
