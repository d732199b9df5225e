import { createLibp2p, type Libp2p } from 'libp2p'
import { tcp } from '@libp2p/tcp'
import { noise } from '@chainsafe/libp2p-noise'
import { yamux } from '@chainsafe/libp2p-yamux'
import { identify } from '@libp2p/identify'
import { mdns } from '@libp2p/mdns'
import { generateKeyPairFromSeed } from '@libp2p/crypto/keys'
import type { KeyPair } from '../../sync/crypto/keys.ts'
import { P2P } from './constants.ts'

export interface NodeOptions {
  /** The device key: its Ed25519 public key is the peer id. */
  deviceKey: KeyPair
  /** Multiaddrs to listen on; default all interfaces, random port, so LAN peers can reach us. */
  listen?: string[]
  /** LAN discovery over mDNS (only ever inside a private network namespace in tests). */
  mdns?: boolean
  mdnsIntervalMs?: number
  /** Peers to refuse for now (backed off for misbehaving): no dial to them, no connection from them. */
  refuse?: (peerId: string) => boolean
}

export type SvcLibp2p = Libp2p<{ identify: ReturnType<ReturnType<typeof identify>> }>

/**
 * A libp2p node as svc uses it: TCP, Noise, Yamux, identify, and optionally mDNS. Peers found
 * by mDNS are dialled at once, so two daemons on one LAN connect with no address given.
 */
export async function createSvcNode(opts: NodeOptions): Promise<SvcLibp2p> {
  const privateKey = await generateKeyPairFromSeed('Ed25519', opts.deviceKey.privateKey)
  const refuse = opts.refuse ?? (() => false)
  const node = await createLibp2p({
    privateKey,
    addresses: { listen: opts.listen ?? ['/ip4/0.0.0.0/tcp/0'] },
    transports: [tcp()],
    connectionEncrypters: [noise()],
    // A shallow pipe per stream (constants.ts says why).
    streamMuxers: [yamux({ streamOptions: { maxStreamWindowSize: P2P.maxStreamWindowBytes } })],
    peerDiscovery: opts.mdns ? [mdns({ interval: opts.mdnsIntervalMs ?? P2P.mdnsIntervalMs, serviceTag: P2P.mdnsServiceTag })] : [],
    services: { identify: identify() },
    connectionManager: { maxConnections: P2P.maxConnections },
    // Checked once Noise has authenticated the remote key, before any protocol runs.
    connectionGater: {
      denyDialPeer: (peer) => refuse(peer.toString()),
      denyInboundEncryptedConnection: (peer) => refuse(peer.toString()),
      denyOutboundEncryptedConnection: (peer) => refuse(peer.toString()),
    },
  })
  node.addEventListener('peer:discovery', (evt) => {
    const { id, multiaddrs } = evt.detail
    if (id.equals(node.peerId)) return
    // Dial what mDNS found; a failure just means that peer is not reachable now.
    node.dial(multiaddrs.length ? multiaddrs : id).catch(() => undefined)
  })
  return node as unknown as SvcLibp2p
}
