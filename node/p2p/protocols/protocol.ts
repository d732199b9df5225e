import type { Env } from '../../../sync/core/env.ts'
import type { Logger } from '../../../sync/core/log.ts'
import type { CryptoProvider } from '../../../sync/crypto/provider.ts'
import type { KeyPair } from '../../../sync/crypto/keys.ts'
import type { SpaceReplica } from '../../../sync/replica/space-replica.ts'
import type { SvcLibp2p } from '../libp2p-node.ts'

/**
 * What head sync proved about peers, shared by every protocol beside it. Head sync is the one
 * place a peer proves its account; every other protocol trusts only `identityOf`, refuses
 * streams of `refused` peers, and scores what it sees as misbehaviour through `fault`, so one
 * guard and one back-off cover every protocol a peer can reach.
 */
export interface PeerTrust {
  /** The account a peer proved on its head-sync link (undefined until it has). */
  identityOf(peer: string): string | undefined
  /** Peers backed off for misbehaving: their streams are refused. */
  refused(peer: string): boolean
  /** Scores a fault of a peer (`weight` 'max' backs it off at once) and hangs up on it past the limit. */
  fault(peer: string, weight?: 'max'): void
  /** Whether the peer is one of our hubs: it keeps our spaces' blocks as it keeps their changes (docs/hub.md "Files"). */
  custodian?(peer: string): boolean
}

/** The spaces this account holds, read-only: what a protocol checks a peer's access against. */
export interface HeldSpaces {
  readonly accountId: string
  readonly techSpaceId: string
  replica(spaceId: string): SpaceReplica | undefined
}

/**
 * What a P2P protocol beside head sync may use (the daemon-service components it declares,
 * node/daemon/service.ts): the node to open streams on, the peer trust, the held spaces, the
 * account's module services and the account key it signs with; not the account engine, and
 * never the wallet or the device key.
 */
export interface P2pProtocolContext extends PeerTrust {
  node: SvcLibp2p
  env: Env
  log: Logger
  crypto: CryptoProvider
  spaces: HeldSpaces
  /** The account's signing key: what a protocol sends in the account's name is signed with it. */
  accountKey: KeyPair
}

/** Head sync's name in the daemon's service list: every protocol beside it `needs` it. */
export const HEAD_SYNC = 'head-sync'

/** The components a protocol's daemon service takes to build its context. */
export type ProtocolComponents = Pick<import('../../daemon/service.ts').BaseComponents, 'env' | 'log' | 'crypto' | 'account' | 'keys'> &
  Pick<import('../../daemon/service.ts').ProvidedComponents, 'node' | 'peers'>

/**
 * The narrow context a protocol runs with, cut from its service's components: the held spaces
 * as a read-only view and the account key alone, so the protocol's code cannot reach the engine
 * or the wallet.
 */
export function protocolContext(c: ProtocolComponents): P2pProtocolContext {
  const account = c.account
  return {
    node: c.node,
    env: c.env,
    log: c.log,
    crypto: c.crypto,
    accountKey: c.keys.account,
    identityOf: (p) => c.peers.identityOf(p),
    refused: (p) => c.peers.refused(p),
    fault: (p, w) => c.peers.fault(p, w),
    custodian: (p) => c.peers.custodian?.(p) === true,
    spaces: {
      accountId: account.accountId,
      techSpaceId: account.tech.spaceId,
      replica: (id) => (id === account.tech.spaceId ? account.tech.replica : account.held(id)?.replica),
    },
  }
}
