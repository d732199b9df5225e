import { encodeCanonical } from '../../sync/core/encoding.ts'
import { signChange } from '../../sync/dag/change.ts'
import { defaultCryptoProvider } from '../../sync/crypto/provider.ts'
import type { KeyPair } from '../../sync/crypto/keys.ts'
import { SyncSession, type JoinHandler, type SyncHost } from '../../sync/protocol/session.ts'
import type { SpaceReplica } from '../../sync/replica/space-replica.ts'
import { keyFor, seededEnv } from '../helpers.ts'
import type { Node } from './helpers.ts'

/**
 * An ACL-tree change of `spaceId` signed by `key` (the shape of a join record: plain payload,
 * parent the ACL root). Its payload is arbitrary: the wire only checks space, tree and author.
 */
export async function aclChange(key: KeyPair, spaceId: string, payload: unknown = { type: 'join' }) {
  return signChange(await defaultCryptoProvider(), key, {
    spaceId,
    treeId: spaceId,
    prevIds: [spaceId],
    aclHeadId: '',
    seq: 1,
    lamport: 1,
    timestamp: 0,
    readKeyId: '',
    payload: encodeCanonical(payload),
  })
}

/** A peer with a session that takes joins through `joins` and reports offers to `offered`. */
export async function joinNode(
  name: string,
  account: number,
  opts: { replica?: SpaceReplica; joins?: JoinHandler; offered?: (s: string, i: string, p: string) => Promise<unknown>; accept?: SyncHost['accept']; now?: () => number } = {},
): Promise<Node> {
  const key = keyFor(account)
  const env = seededEnv(account * 13 + 5)
  if (opts.now) env.now = opts.now
  const r = opts.replica
  const session = new SyncSession({
    host: { space: (id) => (r && id === r.spaceId ? r : undefined), ...(opts.accept ? { accept: opts.accept } : {}) },
    key,
    peerId: name,
    crypto: await defaultCryptoProvider(),
    env,
    joins: opts.joins,
    offered: opts.offered,
  })
  return { name, replica: r as SpaceReplica, session, key }
}
