import type { Env } from '../core/env.ts'
import type { CryptoProvider } from '../crypto/provider.ts'
import { identityOf, type KeyPair } from '../crypto/keys.ts'
import { signChange } from '../dag/change.ts'
import { signJoinProof } from '../acl/join-proof.ts'
import { encodeAclRecord, type AclRecord, type JoinMetadata } from '../acl/records.ts'
import type { IngestItem } from './types.ts'

/**
 * The joiner's side, without holding the space: a joining account knows only the space id and
 * the invite (from the token), so its `join` cites the ACL root alone (prevIds [root], lamport 1)
 * and carries the invite key's proof that this account may ask. A peer holding the space takes
 * it in through `SpaceReplica.ingestJoin`.
 */
export async function makeJoinChange(o: {
  spaceId: string
  inviteId: string
  invitePrivateKey: Uint8Array
  me: KeyPair
  metadata?: JoinMetadata
  crypto: CryptoProvider
  env: Env
}): Promise<IngestItem> {
  const proof = signJoinProof(o.invitePrivateKey, o.spaceId, identityOf(o.me.publicKey), o.inviteId)
  const metadata = cleanMetadata(o.metadata)
  const record: AclRecord = metadata ? { type: 'join', invite: o.inviteId, proof, metadata } : { type: 'join', invite: o.inviteId, proof }
  const c = await signChange(o.crypto, o.me, {
    spaceId: o.spaceId,
    treeId: o.spaceId,
    prevIds: [o.spaceId],
    aclHeadId: '',
    seq: 0,
    lamport: 1,
    timestamp: o.env.now(),
    readKeyId: '',
    payload: encodeAclRecord(record),
  })
  return { id: c.id, raw: c.raw }
}

/** Withdraws a join: a `cancel` building on the join change itself (its id, lamport 1). */
export async function makeCancelChange(o: { spaceId: string; joinId: string; me: KeyPair; crypto: CryptoProvider; env: Env }): Promise<IngestItem> {
  const c = await signChange(o.crypto, o.me, {
    spaceId: o.spaceId,
    treeId: o.spaceId,
    prevIds: [o.joinId],
    aclHeadId: '',
    seq: 1,
    lamport: 2,
    timestamp: o.env.now(),
    readKeyId: '',
    payload: encodeAclRecord({ type: 'cancel', request: o.joinId }),
  })
  return { id: c.id, raw: c.raw }
}

/** Only the fields a join may carry, and only when set: the decoder refuses anything else. */
function cleanMetadata(m: JoinMetadata | undefined): JoinMetadata | undefined {
  if (!m) return undefined
  const out: JoinMetadata = {}
  if (typeof m.name === 'string' && m.name !== '') out.name = m.name.slice(0, 256)
  if (typeof m.iconCid === 'string' && m.iconCid !== '') out.iconCid = m.iconCid.slice(0, 256)
  return Object.keys(out).length ? out : undefined
}
