import type { Libp2p, Libp2pOptions } from 'libp2p'
import { noise } from '@chainsafe/libp2p-noise'
import { yamux } from '@chainsafe/libp2p-yamux'
import { identify } from '@libp2p/identify'
import type { PrivateKey } from '@libp2p/interface'
import { P2P } from './constants.ts'

/** A libp2p node as svc runs it, in the daemon and in a page alike. */
type SvcServices = { identify: ReturnType<ReturnType<typeof identify>> }
export type SvcLibp2p = Libp2p<SvcServices>

export interface SvcNodeBase {
  privateKey: PrivateKey
  /** The socket transports of this runtime: TCP and WebSockets in the daemon, WebSockets in a page. */
  transports: NonNullable<Libp2pOptions['transports']>
  listen: string[]
  maxConnections: number
  /**
   * New inbound connections one host may open per second, and inbound connections still in their
   * handshake at once (libp2p's defaults, 5 and 10, unless given): a hub raises them, since every
   * device behind a proxy or on one machine arrives from one address.
   */
  inbound?: { perHostPerSecond: number; pending: number }
  connectionGater: NonNullable<Libp2pOptions['connectionGater']>
  peerDiscovery?: Libp2pOptions['peerDiscovery']
}

/**
 * The options every svc node shares whatever its runtime: Noise, Yamux with the shallow
 * per-stream window (constants.ts says why), identify. Both ends must agree on these or a page
 * and a daemon would not speak; only the sockets, discovery and the gater differ.
 */
export function svcNodeOptions(base: SvcNodeBase): Libp2pOptions<SvcServices> {
  return {
    privateKey: base.privateKey,
    addresses: { listen: base.listen },
    transports: base.transports,
    connectionEncrypters: [noise()],
    streamMuxers: [yamux({ streamOptions: { maxStreamWindowSize: P2P.maxStreamWindowBytes } })],
    peerDiscovery: base.peerDiscovery ?? [],
    services: { identify: identify() },
    connectionManager: {
      maxConnections: base.maxConnections,
      ...(base.inbound ? { inboundConnectionThreshold: base.inbound.perHostPerSecond, maxIncomingPendingConnections: base.inbound.pending } : {}),
    },
    connectionGater: base.connectionGater,
  }
}
