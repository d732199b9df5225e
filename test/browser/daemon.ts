/**
 * The daemon side of the browser suite: a real `svc serve` (test/e2e/daemons.ts starts it,
 * mDNS off, P2P on loopback with its default WebSockets listener), its WebSocket address, and
 * the state digest of one of its spaces read from its own database while it runs.
 */
import { join } from 'node:path'
import { nodeCryptoProvider } from '../../node/crypto/node-provider.ts'
import { ENGINE_DB_FILE } from '../../node/daemon/daemon-host.ts'
import { SqliteStorageAdapter } from '../../node/storage/sqlite.ts'
import { systemEnv } from '../../sync/core/env.ts'
import type { KeyPair } from '../../sync/crypto/keys.ts'
import { SpaceReplica } from '../../sync/replica/space-replica.ts'
import { ok, type Daemon } from '../e2e/daemons.ts'

/** The daemon's WebSocket listen address, with its peer id: what a page dials. */
export async function wsAddress(d: Daemon): Promise<string> {
  const p = await ok(d, 'GET', '/v1/debug/p2p')
  const ws = (p.listen as string[]).find((a) => a.includes('/127.0.0.1/') && /\/ws(\/|$)/.test(a))
  if (!ws) throw new Error(`the daemon listens on no WebSocket address: ${p.listen.join(' ')}`)
  return ws.includes('/p2p/') ? ws : `${ws}/p2p/${p.peerId}`
}

/**
 * `SpaceReplica.stateDigest` of a space as the daemon holds it (the digest the simulator and
 * the convergence tests compare): its SQLite database opened beside it (WAL lets a second
 * reader in while the daemon writes), read, closed.
 */
export async function daemonDigest(d: Daemon, accountId: string, accountKey: KeyPair, spaceId: string): Promise<string> {
  const storage = new SqliteStorageAdapter(join(d.dir, 'accounts', accountId, ENGINE_DB_FILE))
  try {
    const replica = await SpaceReplica.open({ storage, crypto: nodeCryptoProvider({ verify: 'sync' }), env: systemEnv }, spaceId, accountKey)
    return await replica.stateDigest()
  } finally {
    await storage.close()
  }
}
