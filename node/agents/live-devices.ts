import { peerIdFromString } from '@libp2p/peer-id'
import { identityOf } from '../../sync/crypto/keys.ts'
import type { P2PService } from '../daemon/p2p-service.ts'

/**
 * The election's liveness source (sync/modules/agents/election.ts): the device ids of this
 * account's devices connected to this one now. A peer counts only once it has proved this same
 * account on its head-sync link; its device id is its libp2p key (the device key), so a peer
 * cannot name another device than the one whose key Noise authenticated.
 */
export function linkedAccountDevices(p2p: P2PService, accountId: string): () => ReadonlySet<string> {
  return () => {
    const out = new Set<string>()
    for (const peer of p2p.scheduler.connectedPeers()) {
      if (p2p.session.identityOf(peer) !== accountId) continue
      const device = deviceIdOf(peer)
      if (device) out.add(device)
    }
    return out
  }
}

/** A libp2p peer id's Ed25519 key as an svc identity (the daemon derives its libp2p key from the device key). */
function deviceIdOf(peer: string): string | undefined {
  try {
    const key = peerIdFromString(peer).publicKey
    return key?.type === 'Ed25519' ? identityOf(key.raw) : undefined
  } catch {
    return undefined
  }
}
