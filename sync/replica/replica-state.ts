import type { Env } from '../core/env.ts'
import type { CryptoProvider } from '../crypto/provider.ts'
import { identityOf, type KeyPair } from '../crypto/keys.ts'
import { decodeChange, type Change } from '../dag/change.ts'
import { AclLog, type AclEntry } from '../acl/state.ts'
import { Keyring } from '../acl/keyring.ts'
import type { AclRecord } from '../acl/records.ts'
import { noPins, type MergePolicy, type StampInfo } from '../crdt/record.ts'
import { STORES, type StorageAdapter } from '../storage/adapter.ts'
import { REPLICA_LIMITS } from '../core/limits.ts'
import { DerivedRoots } from './derived-roots.ts'
import { ParkedChanges } from './parked-changes.ts'
import { ChangeNumbers } from './change-numbers.ts'
import { RecordCache } from './record-cache.ts'
import { treePrefix } from './storage-keys.ts'
import { TreeIndex, type TreeNode } from './tree-index.ts'
import { TreeMetas } from './tree-metas.ts'
import type { CommitInfo, RecordTouch } from './types.ts'

export interface ReplicaDeps {
  storage: StorageAdapter
  crypto: CryptoProvider
  env: Env
  policy?: MergePolicy
  /** Overrides of the per-space memory bounds (tests use small ones). */
  limits?: Partial<ReplicaLimits>
  /**
   * A custodian's replica (the hub, docs/hub.md): it never holds a read key, so it checks
   * everything that needs no plaintext (id, signature, the author's right at the cited ACL head,
   * removal wins, the power order, void records, lamport, stale ACL heads) and keeps the change
   * bytes and heads, but opens no payload and materializes no record.
   */
  keyless?: boolean
}

export type ReplicaLimits = { -readonly [K in keyof typeof REPLICA_LIMITS]: number }

/** Persisted per tree: enough to write and to load without replaying history. */
export interface TreeMeta {
  heads: string[]
  maxLamport: number
  count: number
  derived: boolean
  deleted?: StampInfo
}

/**
 * The in-memory state of one replica, shared by its parts (the facade, the apply batch, the
 * ACL writer). Only code running inside the replica's serial queue mutates it.
 */
export class ReplicaState {
  readonly acl: AclLog
  readonly keyring: Keyring
  readonly me: string
  readonly policy: MergePolicy
  readonly trees = new TreeMetas()
  readonly indexes = new Map<string, TreeIndex>()
  readonly records: RecordCache
  /** Local numbers of the changes stored records name (change-numbers.ts); loaded at open. */
  readonly numbers: ChangeNumbers
  readonly parked: ParkedChanges
  readonly derived: DerivedRoots
  /** Trees a removal voided changes of; rebuilt right after the batch that applied it commits. */
  readonly toRebuild = new Set<string>()
  /** Records the current batch changed, for its CommitInfo. */
  touches = new Map<string, RecordTouch>()
  /**
   * Local apply sequence of this space (the versionId source): bumped once per change applied
   * and per tree rebuilt, persisted under the space's own key in the same atomic batch as what
   * it counts (storage-keys.ts `versionSeqKey`). Ahead of `committedSeq` only while a batch is
   * being applied (or after one failed to commit: its numbers are skipped, never reused).
   */
  versionSeq = 0
  /** `versionSeq` as of the last batch stored: the only version anyone outside the apply sees. */
  committedSeq = 0
  /** Sequence number of the changes this replica signs. */
  seq = 0
  /**
   * Whether a batch of this replica stored the space's marker (storage-keys.ts `spaceMetaKey`,
   * never deleted): its first commit writes it, later ones need not write the same bytes again.
   */
  spaceMetaStored = false
  readonly limits: ReplicaLimits

  constructor(
    readonly spaceId: string,
    readonly deps: ReplicaDeps,
    readonly key: KeyPair,
    /** Tells the replica's listeners about a committed batch. */
    readonly emit: (info: CommitInfo) => void,
  ) {
    this.acl = new AclLog(spaceId)
    this.keyring = new Keyring(this.acl, key)
    this.me = identityOf(key.publicKey)
    this.policy = deps.policy ?? noPins
    const limits: ReplicaLimits = (this.limits = { ...REPLICA_LIMITS, ...deps.limits })
    this.numbers = new ChangeNumbers(spaceId, deps.storage, limits.maxCachedChangeNumbers)
    this.records = new RecordCache(spaceId, deps.storage, { count: limits.maxCachedRecords, bytes: limits.maxCachedRecordBytes }, this.numbers)
    this.parked = new ParkedChanges({ perOrigin: limits.maxParkedBytesPerOrigin, perSpace: limits.maxParkedBytesPerSpace })
    this.derived = new DerivedRoots(limits.maxDerivedCandidateBytes)
  }

  /** The tree a change belongs to: a root is its own tree; the ACL tree is the space id. */
  treeOf(c: Change): string {
    return c.treeId === '' ? c.id : c.treeId
  }

  /**
   * Loads a tree's DAG index from storage. Only from inside the serial queue: a load racing
   * an apply would replace the index the apply extended.
   */
  async loadIndex(tree: string): Promise<TreeIndex> {
    const cached = this.indexes.get(tree)
    if (cached) return cached
    const rows = await this.deps.storage.scan(STORES.changes, { prefix: treePrefix(this.spaceId, tree) })
    // Never replace an index that appeared meanwhile: it may hold changes the scan missed.
    const raced = this.indexes.get(tree)
    if (raced) return raced
    const idx = new TreeIndex()
    for (const [, raw] of rows) idx.add(nodeOf(decodeChange(raw)))
    this.indexes.set(tree, idx)
    return idx
  }

  /** Asked twice per ingested change: answers synchronously once the tree's index is loaded. */
  hasChange(c: Change): boolean | Promise<boolean> {
    const tree = this.treeOf(c)
    if (tree === this.spaceId) return this.acl.has(c.id)
    if (!this.trees.has(tree)) return false
    const idx = this.indexes.get(tree)
    return idx ? idx.has(c.id) : this.loadIndex(tree).then((loaded) => loaded.has(c.id))
  }
}

export function nodeOf(c: Change): TreeNode {
  return { id: c.id, lamport: c.lamport, prevIds: c.prevIds, aclHeadId: c.aclHeadId, author: c.author, timestamp: c.timestamp }
}

export function aclEntryOf(c: Change, record: AclRecord): AclEntry {
  return { id: c.id, lamport: c.lamport, prevIds: c.prevIds, author: c.author, timestamp: c.timestamp, record }
}
