import { multiaddr } from '@multiformats/multiaddr'
import { peerIdFromString } from '@libp2p/peer-id'
import { SvcError } from '../../sync/core/errors.ts'
import { P2P } from '../../sync/p2p/constants.ts'

/** A peer added by address: its peer id (from the address's /p2p part) and the address. */
export interface PeerAddress {
  peerId: string
  multiaddr: string
}

const HOSTS = new Set(['ip4', 'ip6', 'dns', 'dns4', 'dns6'])

const invalid = (message: string) => new SvcError('request.invalid_field', message, { field: 'multiaddr' })

/**
 * Parses a multiaddr a user gives (`/ip4/192.0.2.7/tcp/4001/p2p/12D3Koo...`): a host, a TCP port
 * (the only transport the node runs) and the peer id, which Noise checks on connecting, so a
 * dial never reaches another device than the one named. Throws 400 `request.invalid_field`.
 */
export function parsePeerAddress(text: unknown): PeerAddress {
  if (typeof text !== 'string' || text.length === 0 || text.length > P2P.maxMultiaddrLength) throw invalid('multiaddr must be a non-empty string')
  let parts: Array<{ name: string; value?: string }>
  let canonical: string
  try {
    const ma = multiaddr(text)
    parts = ma.getComponents()
    canonical = ma.toString()
  } catch {
    throw invalid('not a multiaddr')
  }
  const names = parts.map((p) => p.name)
  if (names.length !== 3 || !HOSTS.has(names[0]) || names[1] !== 'tcp' || names[2] !== 'p2p') {
    throw invalid('expected /ip4|ip6|dns|dns4|dns6/<host>/tcp/<port>/p2p/<peer id>')
  }
  const peerId = parts[2].value ?? ''
  try {
    peerIdFromString(peerId)
  } catch {
    throw invalid('the /p2p part is not a peer id')
  }
  return { peerId, multiaddr: canonical }
}
