import type { AclEntry } from '../sync/acl/state.ts'
import type { CryptoProvider } from '../sync/crypto/provider.ts'
import type { Change } from '../sync/dag/change.ts'
import type { AdversarySpec } from './config.ts'
import type { SimNetwork } from './network.ts'
import type { SimPeer } from './peer.ts'
import type { Prng } from './prng.ts'
import type { Scheduler } from './scheduler.ts'
import type { Timeline } from './timeline.ts'

/**
 * The attacks a hostile peer (sim/adversary.ts) makes, what the oracle expects of each change it
 * crafts, what it knows of the run, and what the attacks (sim/adversary-*.ts) use of it.
 */

export const ATTACK_KINDS = [
  'forge',
  'tamper',
  'replay',
  'backdateAcl',
  'hugeLamportAcl',
  'writeAfterRemoval',
  'rootAfterRemoval',
  'liveWrite',
  'derivedRoot',
  'parkJunk',
  'flood',
  'sybil',
  'forgeJoin',
] as const
export type AttackKind = (typeof ATTACK_KINDS)[number]

/**
 * What the oracle expects of a crafted change: `rejected` ones must never be held by an honest
 * replica (forged, tampered, junk); `judged` ones are void when the timeline says their author
 * was removed when they were made (sim/timeline.ts), and are otherwise not judged.
 */
export interface Crafted {
  id: string
  tree: string
  kind: AttackKind
  seq: number
  expect: 'rejected' | 'judged'
  what: 'change' | 'root' | 'acl' | 'derived' | 'join'
  author: string
  /** The record id whose value carries it, when the change writes one. */
  marker?: string
}

export interface HostileContext {
  sched: Scheduler
  net: SimNetwork
  crypto: CryptoProvider
  spaceId: string
  timeline: Timeline
  owner: string
  /** Honest peers (their replicas are read, never written, by the adversary). */
  honest: () => SimPeer[]
  /** Identities of every adversary: accomplices to add in a forged or backdated record. */
  accomplices: () => string[]
  inSafety: () => boolean
  /** How many peer ids a sybil storm mints (more than the per-peer state bound). */
  sybilStormSize: number
}

/** What an attack uses of its adversary (sim/adversary.ts): its peer, its draws, its ledger and its helpers. */
export interface Hostile {
  readonly spec: AdversarySpec
  readonly peer: SimPeer
  readonly r: Prng
  readonly ctx: HostileContext
  readonly identity: string
  readonly ledger: Crafted[]
  /** Frames it received, for replay. */
  readonly captured: Uint8Array[]
  /** Sybil peer ids minted so far. */
  sybils: number
  /** The next `seq` of a change it signs. */
  nextSeq(): number
  /** A fresh record id to write as a marker. */
  marker(): string
  /** A few linked honest peers, shuffled: `n` of them, else 1..3. */
  targets(n?: number): string[]
  /** Sends a frame; a closed link is not an error. */
  send(to: string, bytes: Uint8Array): void
  /** Sends changes as steps of an exchange the receivers never opened; how many receivers. */
  push(changes: Uint8Array[], targets?: string[]): number
  /** Enters a crafted change in the ledger. */
  note(c: Change, kind: AttackKind, expect: Crafted['expect'], what: Crafted['what'], marker?: string, seq?: number): void
  pickTree(): string | undefined
  removal(): AclEntry | undefined
  holderOf(id: string): SimPeer['replica'] | undefined
}
