import type { Env } from '../../../sync/core/env.ts'
import type { PushConfig } from '../../push/config.ts'
import type { CryptoProvider } from '../../../sync/crypto/provider.ts'
import type { WalletKeys } from '../../../sync/crypto/wallet.ts'
import type { AccountEngine } from '../../../sync/space/account-engine.ts'
import type { SvcLibp2p } from '../libp2p-node.ts'

/**
 * What a P2P protocol beside head sync is handed when the daemon's node starts. Head sync is the
 * one place a peer proves its account; every other protocol trusts only `identityOf`, refuses
 * streams of `refused` peers, and scores what it sees as misbehaviour through `fault`, so one
 * guard and one back-off cover every protocol a peer can reach.
 */
export interface P2pProtocolContext {
  node: SvcLibp2p
  account: AccountEngine
  keys: WalletKeys
  crypto: CryptoProvider
  env: Env
  /** The account a peer proved on its head-sync link (undefined until it has). */
  identityOf: (peer: string) => string | undefined
  /** Peers backed off for misbehaving: their streams are refused. */
  refused: (peer: string) => boolean
  /** Scores a fault of a peer (`weight` 'max' backs it off at once) and hangs up on it past the limit. */
  fault: (peer: string, weight?: 'max') => void
  /** The daemon's push node configuration (`svc serve` config key `push`; docs/push.md). */
  push?: PushConfig
}

/** A running protocol: stopped with the node. */
export interface P2pProtocolHandle {
  close(): void | Promise<void>
}

/**
 * The node-side half of a module (the P2P counterpart of `SvcModule`): one value per protocol,
 * listed in `node/p2p/protocols/index.ts`. `start` answers undefined when the protocol does not
 * run for this account (its module is not in the account's list, say).
 */
export interface P2pProtocol {
  readonly name: string
  start(ctx: P2pProtocolContext): Promise<P2pProtocolHandle | undefined>
}
