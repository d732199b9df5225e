import { decodeCanonical, encodeCanonical, toHex } from '../core/encoding.ts'
import { SvcError } from '../core/errors.ts'
import { writeRefusal } from './write-refusal.ts'
import { SerialQueue } from '../core/serial-queue.ts'
import { NONCE_BYTES, seal, sealWithNonce } from '../crypto/box.ts'
import { identityOf, type KeyPair } from '../crypto/keys.ts'
import { wrapKeyTo } from '../crypto/wrap.ts'
import { ensureXxh3, propertyIdSync, sha256 } from '../crypto/hash.ts'
import { decodeChange, derivedRoot, signChange, signChanges, type Change } from '../dag/change.ts'
import type { AclLog, AclState } from '../acl/state.ts'
import type { Keyring } from '../acl/keyring.ts'
import { decodeAclRecord, encodeAclRecord, type AclRecord, type Role, type Rotation } from '../acl/records.ts'
import { ytextDigestPart, type YTextMap } from '../crdt/ytext.ts'
import { CHANGE_DERIVED_ID, checkPayload, InvalidOp, type ChangePayload, type Json, type Op } from '../crdt/ops.ts'
import type { LogEntry, StampInfo } from '../crdt/record.ts'
import { STORES, type StorageAdapter } from '../storage/adapter.ts'
import { isRequestChange, writerCitation } from './acl-rules.ts'
import { AclWriter, type MintedInvite, type ProfileFields } from './acl-writer.ts'
import { pairOf, pairRoot } from '../acl/pair.ts'
import type { InvitePermission } from '../acl/records.ts'
import type { JoinStatus } from '../acl/requests.ts'
import { joinGate } from './join-entry.ts'
import { openProfiles, type MemberProfile } from './member-profiles.ts'
import { applyChecked, rebuildTree } from './apply-batch.ts'
import { checkChunks, checkStage, verifiedOf, type IngestChecks } from './check-stage.ts'
import { changesNothing } from './unchanged.ts'
import type { StoredHead } from './record-codec.ts'
import { aclEntryOf, ReplicaState, type ReplicaDeps, type TreeMeta } from './replica-state.ts'
import { changeKey, datasetPrefix, rebuildKey, recordKey, treePrefix, unesc } from './storage-keys.ts'
import { loadVersionSeq } from './version-seq.ts'
import type { TreeIndex } from './tree-index.ts'
import type { CommitInfo, IngestReport, RawItem, ReplicaMemory, RejectReason, WriteResult, WriteRejection } from './types.ts'

export type { ReplicaDeps, TreeMeta } from './replica-state.ts'

/** A record as read from a replica, with the facts stamped by merge. */
export interface MaterializedRecord {
  id: string
  value: Json | undefined
  deleted: boolean
  /** When the record was tombstoned (ms), with `deleted`. */
  deletedAt?: number
  /** `_ver.id`: zero-padded lamport and id of the creating change; identical on every peer. */
  verId: string
  created: StampInfo
  modified: StampInfo
  /** Local apply sequence of the last change that touched this record (this peer only). */
  versionId: number
  /** Text paths' merge state (sync/crdt/ytext.ts), for a writer computing its next text update. */
  yt?: YTextMap
}

/** The id a derived object of `spaceId` with `seed` has on every device (see createObject). */
export const derivedObjectId = (spaceId: string, seed: string): string => derivedRoot(spaceId, encodeCanonical({ kind: 'object', seed })).id

export const verIdOf = (s: StampInfo) => `${String(s.l).padStart(12, '0')}-${s.c}`

/**
 * One space on one replica: its ACL log, its object trees and their materialized records.
 * Local writes and changes from peers go through the same apply path; everything a peer sent
 * is checked first (id, signature, right to write at the cited ACL head, read key, lamport),
 * and a change that fails gets a typed reason without stopping the rest of the batch.
 *
 * This class is the facade: lifecycle, reads and the serial queue. Stage one of ingest is
 * `check-stage.ts`, stage two `apply-batch.ts`, the record cache `record-cache.ts`, ACL
 * writes `acl-writer.ts`, and every question put to the ACL `acl-rules.ts`.
 */
export class SpaceReplica {
  readonly acl: AclLog
  readonly keyring: Keyring
  readonly me: string
  private readonly s: ReplicaState
  /** Serializes mutations: a write and an ingest never interleave their read-modify-write. */
  private readonly serial = new SerialQueue()
  /** Set by `retire`: the space closed under the memory budget and a new replica of it opens on demand. */
  private retired = false
  /**
   * The serial queue, refusing work once retired: two replicas of one space must never write at
   * once (their change numbers and version counters are each one's own), so a sync session still
   * holding a retired one gets `server.unavailable` and its next round reaches the new one.
   */
  private readonly queue = {
    run: <T>(fn: () => T | Promise<T>): Promise<T> =>
      this.serial.run(() => {
        if (this.retired) throw new SvcError('server.unavailable', 'this space was closed to free memory; it reopens on the next request', { spaceId: this.spaceId })
        return fn()
      }),
  }
  private readonly listeners = new Set<(info: CommitInfo) => void>()
  private readonly aclWriter: AclWriter

  private constructor(
    readonly spaceId: string,
    private readonly deps: ReplicaDeps,
    key: KeyPair,
  ) {
    this.s = new ReplicaState(spaceId, deps, key, (info) => {
      for (const l of this.listeners) l(info)
    })
    this.acl = this.s.acl
    this.keyring = this.s.keyring
    this.me = this.s.me
    this.aclWriter = new AclWriter(this.s, (c) => this.commitLocal(c))
  }

  // ---------------------------------------------------------------- lifecycle

  /**
   * Creates a space owned by `owner`, with its first read key. `seed` makes it derived; `pair`
   * (another account) makes it the one-to-one space of the two (see `openPair`).
   */
  static async create(deps: ReplicaDeps, owner: KeyPair, opts: { seed?: string; pair?: string } = {}): Promise<SpaceReplica> {
    if (opts.pair !== undefined) return SpaceReplica.openPair(deps, owner, opts.pair)
    const ownerId = identityOf(owner.publicKey)
    let root: Change
    if (opts.seed !== undefined) {
      root = derivedRoot('', encodeAclRecord({ type: 'root', owner: ownerId, seed: opts.seed }))
    } else {
      const rk = deps.env.randomBytes(32)
      const rotation: Rotation = { keys: { [ownerId]: wrapKeyTo(deps.env, owner.publicKey, rk) } }
      const record: AclRecord = { type: 'root', owner: ownerId, nonce: deps.env.randomBytes(16), rotation }
      root = await signChange(deps.crypto, owner, {
        spaceId: '',
        treeId: '',
        prevIds: [],
        aclHeadId: '',
        seq: 0,
        lamport: 0,
        timestamp: deps.env.now(),
        readKeyId: '',
        payload: encodeAclRecord(record),
      })
    }
    const r = await SpaceReplica.open(deps, root.id, owner)
    const rep = await r.ingest([{ id: root.id, raw: root.raw }])
    if (rep.rejected.length) throw new SvcError('internal', `space root rejected: ${rep.rejected[0].reason}`)
    // A derived space gets its first key in a second record, since the root cannot hold random bytes.
    if (opts.seed !== undefined && r.acl.current().readKeyId === undefined) await r.rotateReadKey()
    return r
  }

  /**
   * The one-to-one space of `me` and `other`: its root is derived from the two accounts (both
   * sides compute the same root and id, `pairSpaceId`), its first key from their key agreement,
   * so creating it needs no message. Idempotent: opening it again changes nothing. Self-pairing
   * is `request.invalid_field`.
   */
  static async openPair(deps: ReplicaDeps, me: KeyPair, other: string): Promise<SpaceReplica> {
    pairOf(identityOf(me.publicKey), other)
    const root = pairRoot(identityOf(me.publicKey), other)
    const r = await SpaceReplica.open(deps, root.id, me)
    if (!r.known) {
      const rep = await r.ingest([{ id: root.id, raw: root.raw }])
      if (rep.rejected.length) throw new SvcError('internal', `pair root rejected: ${rep.rejected[0].reason}`)
    }
    return r
  }

  /** Opens a space from storage (or an empty replica of it, to be filled by sync). */
  static async open(deps: ReplicaDeps, spaceId: string, me: KeyPair): Promise<SpaceReplica> {
    await ensureXxh3()
    const r = new SpaceReplica(spaceId, deps, me)
    await r.load()
    return r
  }

  private async load() {
    const { storage } = this.deps
    const s = this.s
    s.versionSeq = s.committedSeq = await loadVersionSeq(storage, this.spaceId)
    await s.numbers.load()
    for (const [k, v] of await storage.scan(STORES.trees, { prefix: `${this.spaceId}/` })) {
      s.trees.setStored(k.slice(this.spaceId.length + 1), v)
    }
    const aclChanges = (await storage.scan(STORES.changes, { prefix: treePrefix(this.spaceId, this.spaceId) })).map(([, raw]) => decodeChange(raw))
    for (const c of aclChanges.sort((a, b) => a.lamport - b.lamport)) s.acl.add(aclEntryOf(c, decodeAclRecord(c.payload)))
    for (const [k] of await storage.scan(STORES.meta, { prefix: rebuildKey(this.spaceId, '') })) {
      await rebuildTree(s, k.slice(rebuildKey(this.spaceId, '').length))
    }
  }

  /** The storage adapter the replica lives in (modules keep stores of their own there). */
  get storage(): StorageAdapter {
    return this.deps.storage
  }

  /** True once this replica holds the space's ACL root. */
  get known(): boolean {
    return this.acl.has(this.spaceId)
  }

  // ---------------------------------------------------------------- reads

  treeIds(): string[] {
    return [...this.s.trees.keys()].filter((t) => t !== this.spaceId).sort()
  }
  treeMeta(treeId: string): TreeMeta | undefined {
    return this.s.trees.get(treeId)
  }
  /** Heads of a tree; the ACL tree is the space id. */
  heads(treeId: string): string[] {
    return [...(this.s.trees.get(treeId)?.heads ?? [])]
  }

  async getRecord(objectId: string, ds: string, id: string): Promise<MaterializedRecord | undefined> {
    const st = await this.s.records.load(recordKey(this.spaceId, objectId, ds, id))
    return st ? materialize(id, st) : undefined
  }

  /**
   * The same record of many objects in one storage read (opening a space reads every object's
   * row: one `getMany` per chunk instead of a read per object, which on IndexedDB is a
   * transaction each). Reads only; nothing is cached, and only the records' heads are decoded
   * (record-codec.ts: their op logs are not parsed).
   */
  async getRecordsOf(objectIds: readonly string[], ds: string, id: string): Promise<Array<MaterializedRecord | undefined>> {
    const keys = objectIds.map((o) => recordKey(this.spaceId, o, ds, id))
    const heads = await this.s.records.heads(keys, await this.deps.storage.getMany(STORES.records, keys))
    return heads.map((st) => (st ? materialize(id, st) : undefined))
  }

  /**
   * The live op log of a record, in stamp order: the ops that still decide its value (a later
   * set covering an op drops it). The latest set covering a path names the change that wrote
   * what the path holds (chat read state finds a reaction's change this way).
   */
  async recordLog(objectId: string, ds: string, id: string): Promise<readonly LogEntry[]> {
    return (await this.s.records.load(recordKey(this.spaceId, objectId, ds, id)))?.log ?? []
  }

  /** Every record of a dataset ('' is the object row), in record id order. */
  async listRecords(objectId: string, ds: string): Promise<MaterializedRecord[]> {
    const prefix = datasetPrefix(this.spaceId, objectId, ds)
    const rows = await this.deps.storage.scan(STORES.records, { prefix })
    const keys = rows.map(([k]) => k)
    const heads = await this.s.records.heads(
      keys,
      rows.map(([, v]) => v),
    )
    return heads.map((st, i) => materialize(unesc(keys[i].slice(prefix.length)), st!))
  }

  /**
   * A digest of everything merge derived: every tree's heads and every record's value,
   * tombstone, created and modified stamps. Equal digests mean byte-identical state; the
   * local versionId is left out since it is per peer by definition.
   */
  async stateDigest(): Promise<string> {
    const { storage } = this.deps
    const parts: unknown[] = []
    for (const [k, v] of await storage.scan(STORES.trees, { prefix: `${this.spaceId}/` })) {
      const m = decodeCanonical<TreeMeta>(v)
      parts.push([k, [...m.heads].sort(), m.deleted ?? null])
    }
    const rows = await storage.scan(STORES.records, { prefix: `${this.spaceId}/` })
    // Read with the stored bytes' change numbers turned back into ids: numbers are this device's own.
    const heads = await this.s.records.heads(
      rows.map(([k]) => k),
      rows.map(([, v]) => v),
      true,
    )
    for (let i = 0; i < rows.length; i++) {
      const k = rows[i][0]
      const r = heads[i]!
      parts.push(r.yt ? [k, r.value ?? null, r.deleted ?? null, r.created, r.modified, ytextDigestPart(r.yt)] : [k, r.value ?? null, r.deleted ?? null, r.created, r.modified])
    }
    return toHex(sha256(encodeCanonical(parts)))
  }

  /** Raw bytes of changes by id, for sending to a peer. */
  async rawChanges(treeId: string, ids: readonly string[]): Promise<Array<{ id: string; raw: Uint8Array }>> {
    const vals = await this.deps.storage.getMany(
      STORES.changes,
      ids.map((id) => changeKey(this.spaceId, treeId, id)),
    )
    const out: Array<{ id: string; raw: Uint8Array }> = []
    vals.forEach((raw, i) => raw && out.push({ id: ids[i], raw }))
    return out
  }

  /** Every change this replica holds for the space (ACL first), for a full push to a peer. */
  async allChanges(): Promise<Array<{ id: string; raw: Uint8Array; treeId: string }>> {
    const rows = await this.deps.storage.scan(STORES.changes, { prefix: `${this.spaceId}/` })
    const out = rows.map(([k, raw]) => {
      const [, treeId, id] = k.split('/')
      return { id, raw, treeId }
    })
    return out.sort((a, b) => Number(b.treeId === this.spaceId) - Number(a.treeId === this.spaceId))
  }

  /**
   * The DAG index of a tree (loaded on first use). The load runs in the serial queue: a load
   * racing a write would miss the write's change and then replace the index holding it.
   */
  async treeIndex(treeId: string): Promise<TreeIndex> {
    return this.s.indexes.get(treeId) ?? this.queue.run(() => this.s.loadIndex(treeId))
  }

  /** Whether a change is known, from outside the queue (an unloaded index loads in it). */
  private knownOutside(c: Change): boolean | Promise<boolean> {
    const tree = this.s.treeOf(c)
    if (tree !== this.spaceId && this.s.trees.has(tree) && !this.s.indexes.has(tree)) return this.treeIndex(tree).then((idx) => idx.has(c.id))
    return this.s.hasChange(c)
  }

  /** Bytes of parked changes charged to `origin` (see `ingest`). */
  parkedBytesFrom(origin: string): number {
    return this.s.parked.bytesFrom(origin)
  }

  /**
   * Refuses every later mutation, once those queued before it ran (the account closed the space
   * under its memory budget: AccountEngine). Reads of storage still answer.
   */
  async retire(): Promise<void> {
    await this.serial.run(() => {
      this.retired = true
      // Nothing commits any more: whoever still holds a listener's stop no longer reaches its engine through here.
      this.listeners.clear()
    })
  }

  /** The number of trees (objects, and the ACL) whose metas this replica holds. */
  get treeCount(): number {
    return this.s.trees.size
  }

  /** Sizes of the replica's bounded in-memory sets. */
  memory(): ReplicaMemory {
    const { parked, derived, records } = this.s
    return {
      parkedChanges: parked.size,
      parkedBytes: parked.bytes,
      parkedExamined: parked.examined,
      parkedEvicted: parked.evicted,
      heldDerivedRoots: derived.size,
      heldDerivedBytes: derived.bytes,
      cachedRecords: records.size,
      cachedRecordBytes: records.bytes,
      recordEvictions: records.evictions,
    }
  }

  /**
   * The local versionId of the latest commit stored (what a write that wrote nothing reports).
   * Per space, and strictly increasing with every commit, across restarts too: a number names
   * one committed state of this space on this device, never another one later (a saved search
   * index relies on it). Numbers a batch took but never stored are skipped, never reused.
   */
  versionId(): string {
    return String(this.s.committedSeq)
  }

  /** Listens to every committed batch; returns the function that stops listening. */
  addCommitListener(fn: (info: CommitInfo) => void): () => void {
    this.listeners.add(fn)
    return () => this.listeners.delete(fn)
  }

  // ---------------------------------------------------------------- local writes

  /** Creates an object tree; with `seed` its id is derived (same on every device). */
  createObject(opts: { seed?: string } = {}): Promise<string> {
    return this.queue.run(async () => {
      const s = this.s
      const payload = encodeCanonical(opts.seed !== undefined ? { kind: 'object', seed: opts.seed } : { kind: 'object', nonce: this.deps.env.randomBytes(16) })
      const root =
        opts.seed !== undefined
          ? derivedRoot(this.spaceId, payload)
          : await signChange(this.deps.crypto, s.key, {
              spaceId: this.spaceId,
              treeId: '',
              prevIds: [],
              aclHeadId: (await this.citation()).aclHeadId,
              seq: ++s.seq,
              lamport: 0,
              timestamp: this.deps.env.now(),
              readKeyId: '',
              payload,
            })
      if (s.trees.has(root.id)) return root.id
      if (opts.seed !== undefined) s.derived.expect(root.id)
      await this.commitLocal(root)
      return root.id
    })
  }

  /**
   * Creates one object per entry of `rows`, each written with the least the DAG allows: its
   * signed root (an object is a tree of its own) and one change setting that entry's ops (say
   * its row). All of them are signed and applied in one turn of the serial queue as one apply
   * batch, so one atomic commit unless the apply runs past its slice (apply-batch.ts `Slicer`).
   * Nothing is applied unless every payload is well-formed. Returns the new ids in order.
   */
  createObjects(rows: readonly Op[][]): Promise<string[]> {
    return this.queue.run(async () => {
      const s = this.s
      const { crypto, env } = this.deps
      for (const ops of rows) checkLocalPayload({ ops })
      const cite = await this.citation()
      const opened = new Map<Change, ChangePayload>()
      // Every root's nonce and every payload's, drawn at once (a draw costs about 4 µs whatever its size).
      const random = env.randomBytes(rows.length * RANDOM_PER_OBJECT)
      // Sequence numbers as if signed object by object: each root, then its row.
      const seq0 = s.seq
      s.seq += 2 * rows.length
      // The roots first (each row builds on its root's id), then the rows: two rounds of
      // signatures, each in parallel where the provider can (signChanges).
      const roots = await signChanges(
        crypto,
        s.key,
        rows.map((_, k) => ({
          spaceId: this.spaceId,
          treeId: '',
          prevIds: [],
          aclHeadId: cite.aclHeadId,
          seq: seq0 + 2 * k + 1,
          lamport: 0,
          timestamp: env.now(),
          readKeyId: '',
          payload: encodeCanonical({ kind: 'object', nonce: random.slice(k * RANDOM_PER_OBJECT, k * RANDOM_PER_OBJECT + ROOT_NONCE_BYTES) }),
        })),
      )
      const payloads = rows.map((ops): ChangePayload => ({ ops }))
      const rowChanges = await signChanges(
        crypto,
        s.key,
        rows.map((_, k) => {
          const at = k * RANDOM_PER_OBJECT
          return {
            spaceId: this.spaceId,
            treeId: roots[k].id,
            prevIds: [roots[k].id],
            aclHeadId: cite.aclHeadId,
            seq: seq0 + 2 * k + 2,
            lamport: 1,
            timestamp: env.now(),
            readKeyId: cite.readKeyId,
            payload: sealWithNonce(cite.readKey, random.subarray(at + ROOT_NONCE_BYTES, at + RANDOM_PER_OBJECT), encodeCanonical(payloads[k]), undefined, crypto.aead),
          }
        }),
      )
      const changes: Change[] = []
      const ids: string[] = []
      for (let k = 0; k < rows.length; k++) {
        changes.push(roots[k], rowChanges[k])
        opened.set(rowChanges[k], payloads[k])
        ids.push(roots[k].id)
      }
      // Signed here a moment ago: no signature or id to check (commitLocal's check stage is
      // just that for a local change), so they go straight to the apply stage.
      const rep = await applyChecked(s, changes, { accepted: [], rejected: [], missing: [] }, { local: true, opened })
      if (rep.rejected.length) throw rejectionError(rep.rejected[0].reason, s.acl.current(), s.me)
      if (rep.voided?.length) throw writeRefusal(s.acl.current(), s.me)
      if (rep.accepted.length !== changes.length)
        throw new SvcError('internal', 'the objects could not be created: this replica lacks what they build on', { missing: rep.missing })
      return ids
    })
  }

  /**
   * Tells the replica that local code knows the derived object of `seed`, so its root is
   * accepted from any peer (derived roots are unsigned; see DerivedRoots). Applies it at once
   * if a peer already sent it. Returns the object id.
   */
  expectDerived(seed: string): Promise<string> {
    return this.queue.run(async () => {
      const id = derivedObjectId(this.spaceId, seed)
      this.s.derived.expect(id)
      const held = this.s.derived.take(id)
      if (held && !this.s.trees.has(id)) await applyChecked(this.s, [held], { accepted: [], rejected: [], missing: [] })
      return id
    })
  }

  /** Writes merge ops to an object as one change. */
  write(objectId: string, ops: Op[], traceIds?: string[]): Promise<WriteResult> {
    return this.queue.run(() => this.writeNow(objectId, ops, traceIds))
  }

  /**
   * Read, decide, write, as one step of the serial queue: `build` reads current records and
   * returns the ops to write to `objectId` as one change; nothing else runs in between, so
   * what it read is still current when the change applies (the space engine's modify).
   */
  writeResolved(
    objectId: string,
    build: (read: (ds: string, id: string) => Promise<MaterializedRecord | undefined>) => Promise<{ ops: Op[]; traceIds?: string[] }>,
  ): Promise<WriteResult> {
    return this.queue.run(async () => {
      const { ops, traceIds } = await build(async (ds, id) => {
        const st = await this.s.records.load(recordKey(this.spaceId, objectId, ds, id))
        return st ? materialize(id, st) : undefined
      })
      return this.writeNow(objectId, ops, traceIds)
    })
  }

  private async writeNow(objectId: string, ops: Op[], traceIds?: string[]): Promise<WriteResult> {
    const s = this.s
    const meta = s.trees.get(objectId)
    if (!meta || objectId === this.spaceId) throw new SvcError('object.not_found', 'object not found', { objectId })
    if (meta.deleted) throw new SvcError('object.not_found', 'object was deleted', { objectId })
    const payload: ChangePayload = traceIds?.length ? { ops, traceIds } : { ops }
    checkLocalPayload(payload)
    // A write that changes nothing commits nothing (no change, no history entry, no sync).
    const unchanged = await changesNothing(ops, async (ds, id) => {
      const st = await s.records.load(recordKey(this.spaceId, objectId, ds, id))
      return st && !st.deleted ? st.value : undefined
    })
    if (unchanged) return { versionId: String(s.committedSeq), changeId: '', recordIds: [] }
    const cite = await this.citation()
    const change = await signChange(this.deps.crypto, s.key, {
      spaceId: this.spaceId,
      treeId: objectId,
      prevIds: meta.heads,
      aclHeadId: cite.aclHeadId,
      seq: ++s.seq,
      lamport: meta.maxLamport + 1,
      timestamp: this.deps.env.now(),
      readKeyId: cite.readKeyId,
      payload: seal(this.deps.env, cite.readKey, encodeCanonical(payload), undefined, this.deps.crypto.aead),
    })
    const drops: WriteRejection[] = []
    await this.commitLocal(change, drops)
    const ids: string[] = []
    for (const op of ops) {
      if (op.op === 'deleteObject') continue
      const id = op.id === CHANGE_DERIVED_ID ? propertyIdSync(change.id) : op.id
      if (!ids.includes(id)) ids.push(id)
    }
    const result: WriteResult = { versionId: String(s.committedSeq), changeId: change.id, recordIds: ids }
    if (drops.length) result.rejections = drops
    return result
  }

  /** The merged ACL state's head and key, writing a `merge` record first when it needs one. */
  private citation() {
    return writerCitation(this.s, (prevIds) => this.aclWriter.merge(prevIds))
  }

  // ---------------------------------------------------------------- ACL writes

  /** Adds a member with a role, wrapping the current read key to them. */
  addMember(identity: string, role: Exclude<Role, 'owner'>): Promise<string> {
    return this.queue.run(() => this.aclWriter.addMember(identity, role))
  }

  setRole(identity: string, role: Exclude<Role, 'owner'>): Promise<string> {
    return this.queue.run(() => this.aclWriter.setRole(identity, role))
  }

  /** Removes a member and rotates the read key to everyone who stays. */
  removeMember(identity: string): Promise<string> {
    return this.queue.run(() => this.aclWriter.removeMember(identity))
  }

  rotateReadKey(): Promise<string> {
    return this.queue.run(() => this.aclWriter.rotateReadKey())
  }

  // ---------------------------------------------------------------- sharing (docs/sharing.md)

  /** Mints an invite (guest: owner only); `replaces` revokes every prior live non-guest invite. */
  createInvite(permission: InvitePermission, opts: { replaces?: boolean } = {}): Promise<MintedInvite> {
    return this.queue.run(() => this.aclWriter.createInvite(permission, opts))
  }

  /** Revokes live invites by record id; `invite.not_found` when none of them is live. */
  revokeInvites(ids: readonly string[]): Promise<string> {
    return this.queue.run(() => this.aclWriter.revokeInvites(ids))
  }

  /** Adds a pending request's joiner with its invite's role; `space.join_not_pending` otherwise. */
  acceptJoin(requestId: string): Promise<string> {
    return this.queue.run(() => this.aclWriter.acceptJoin(requestId))
  }

  declineJoin(requestId: string): Promise<string> {
    return this.queue.run(() => this.aclWriter.declineJoin(requestId))
  }

  /** Revokes the guest key: guest invites die, every guest is removed, the key rotates past them. */
  revokeGuest(): Promise<string[]> {
    return this.queue.run(() => this.aclWriter.revokeGuest())
  }

  /** Publishes this member's profile to the other members, sealed under the current read key. */
  setProfile(fields: ProfileFields): Promise<string> {
    return this.queue.run(() => this.aclWriter.setProfile(fields))
  }

  /**
   * Every member's newest profile, opened where this replica reaches its key (a profile sealed
   * under a key it cannot reach yet comes back without fields: "name empty until a key arrives").
   */
  profiles(): MemberProfile[] {
    return openProfiles(this.acl.current(), this.keyring, this.spaceId)
  }

  /** Where `joiner`'s newest join request stands here; undefined when there is none. */
  joinStatus(joiner: string): JoinStatus | undefined {
    return this.acl.current().joinStatus(joiner)
  }

  /**
   * The join message's entry (sync/protocol): takes in a `join` or `cancel` change a non-member
   * sent, and answers where its request stands. Undefined refuses, and the caller must answer
   * exactly as for a space it does not hold: this replica does not hold the space (or may no
   * longer read it), the change is
   * not a join or cancel, its author is not `fromIdentity` (the authenticated peer), its invite
   * is not live here, its proof fails, or too many requests are pending. A joiner with a pending
   * request gets that request's status for any further join (one pending request per joiner).
   * Guest joins are accepted at once when this replica manages the space (see `heal`).
   */
  async ingestJoin(raw: Uint8Array, fromIdentity: string): Promise<JoinStatus | undefined> {
    if (!this.known) return undefined
    let c: Change
    let record: AclRecord
    try {
      c = decodeChange(raw, this.deps.crypto.sha256)
      record = decodeAclRecord(c.payload)
    } catch {
      return undefined
    }
    if (joinGate(this.acl, this.me, c, record, fromIdentity) === undefined) return undefined
    const { report, verified } = await checkStage(this.s, [{ id: c.id, raw }], false, (x) => this.knownOutside(x))
    return this.queue.run(async () => {
      // Judged again in the queue: what was true before the signature check may not be now.
      const gate = joinGate(this.acl, this.me, c, record, fromIdentity)
      // Bytes that are not known here answer nothing unless their signature holds.
      if (gate === undefined || (!this.acl.has(c.id) && !verified.some((v) => v.id === c.id))) return undefined
      if (gate !== 'admit') return gate
      const rep = await applyChecked(this.s, verified, report, { origin: `join:${fromIdentity}` })
      await this.heal()
      if (!rep.accepted.includes(c.id)) return undefined
      return this.acl.current().requestStatus(record.type === 'cancel' ? record.request : c.id)
    })
  }

  // ---------------------------------------------------------------- ingest

  /**
   * Checks and applies changes from anywhere; see the class comment. `origin` (the peer that
   * sent them) bounds what they may park (REPLICA_LIMITS). `fromNonReader`: the sender may not
   * read the space here (head sync takes only its leading ACL records), so `join` and `cancel`
   * records are refused: those come through `ingestJoin`.
   */
  async ingest(items: RawItem[], opts: { origin?: string; fromNonReader?: boolean; checked?: IngestChecks } = {}): Promise<IngestReport> {
    const { report, chunks } = await (opts.checked ?? this.checkAhead(items))
    if (chunks.length <= 1) {
      const verified = chunks.length ? await verifiedOf(report, chunks[0]) : []
      return this.queue.run(async () => {
        const rep = await this.applyFresh(verified, report, opts)
        await this.heal()
        return rep
      })
    }
    // Each chunk is its own turn of the serial queue (local writes are not held up by a step's
    // signature checks) and its own apply batch, so its own commits, as the slices of one batch
    // would be. Changes parked by one chunk wake when a later chunk brings what they wait for.
    const voided: string[] = []
    const missing = new Set<string>()
    for (let i = 0; i < chunks.length; i++) {
      // Each chunk's apply cuts its own slices from its own start, so the event loop gets its
      // turn between chunks too (back to back, chunks of a step held it for tens of ms).
      if (i > 0 && this.s.deps.env.yield) await this.s.deps.env.yield()
      const verified = await verifiedOf(report, chunks[i])
      const last = i === chunks.length - 1
      await this.queue.run(async () => {
        const rep = await this.applyFresh(verified, { accepted: report.accepted, rejected: report.rejected, missing: [], ...(report.held ? { held: report.held } : {}) }, opts)
        if (rep.held) report.held = rep.held
        if (rep.voided) voided.push(...rep.voided)
        for (const m of rep.missing) missing.add(m)
        if (last) await this.heal()
      })
    }
    // What an earlier chunk lacked and a later one brought is not missing any more.
    for (const id of report.accepted) missing.delete(id)
    report.missing = [...missing].sort()
    report.voided = voided
    return report
  }

  /**
   * Stage one for `items`, started now: `ingest(items, { checked })` applies what it passes. For
   * changes that wait for their turn (head sync's next step, while this one applies): nothing
   * of the replica changes here, and the apply stage judges every change again in the queue.
   */
  checkAhead(items: RawItem[]): IngestChecks {
    // Where the env yields, the apply stage takes the changes chunk by chunk as their signatures
    // are checked, so the pool verifies the later chunks while the earlier ones apply; the
    // simulator (no yield) checks and applies every batch whole, as one event.
    const chunkItems = this.s.deps.env.yield ? this.s.limits.ingestChunkItems : Infinity
    return checkChunks(this.s, items, false, (c) => this.knownOutside(c), chunkItems)
  }

  /** Stage two for checked changes of an ingest (inside the queue): those not known by now. */
  private async applyFresh(verified: Change[], report: IngestReport, opts: { origin?: string; fromNonReader?: boolean }): Promise<IngestReport> {
    const fresh: Change[] = []
    for (const c of verified) {
      // Rights before work: a non-member's join or cancel enters through `ingestJoin` only,
      // whose checks (live invite, one pending request per joiner, the bound) head sync skips.
      if (opts.fromNonReader && c.treeId === this.spaceId && isRequestChange(c)) {
        report.rejected.push({ id: c.id, reason: 'not_member' })
        continue
      }
      const known = this.s.hasChange(c)
      if (!(known instanceof Promise ? await known : known)) fresh.push(c)
    }
    return applyChecked(this.s, fresh, report, { origin: opts.origin })
  }

  /**
   * A manager rotates when peers' records left the merged key tainted or a reader without it, and
   * accepts pending guest joins (any manager device that sees one does; see autoAcceptGuests).
   */
  private async heal() {
    // A custodian holds no key: it never writes to the ACL.
    if (this.deps.keyless) return
    try {
      await this.aclWriter.healIfNeeded()
      await this.aclWriter.autoAcceptGuests()
    } catch (err) {
      // Without the newest key (it never reached us) another manager has to; the next ingest retries.
      if (!(err instanceof SvcError)) throw err
    }
  }

  /**
   * Stage two of ingest, for changes whose bytes, id and signature are already checked (and,
   * optionally, whose payloads are already opened, say by a worker): rights, read key,
   * lamport, merge, and one atomic commit. Public so the pipeline's stages can be measured
   * and moved apart; never call it with unchecked changes.
   */
  applyVerified(changes: Array<{ change: Change; payload?: ChangePayload }>): Promise<IngestReport> {
    return this.queue.run(() => {
      const opened = new Map<Change, ChangePayload>()
      for (const { change, payload } of changes) if (payload) opened.set(change, payload)
      return applyChecked(
        this.s,
        changes.map((c) => c.change),
        { accepted: [], rejected: [], missing: [] },
        { opened },
      )
    })
  }

  /**
   * Applies a change this replica just signed (inside the queue). Resolves only once the change
   * is committed: one that is refused, or cannot apply (something it builds on is missing, or
   * it is void), throws and is not kept anywhere.
   */
  private async commitLocal(c: Change, drops?: WriteRejection[]): Promise<void> {
    const { report, verified } = await checkStage(this.s, [{ id: c.id, raw: c.raw }], true, (x) => this.s.hasChange(x))
    const rep = await applyChecked(this.s, verified, report, { drops, local: true })
    if (rep.rejected.length) throw rejectionError(rep.rejected[0].reason, this.s.acl.current(), this.s.me)
    if (rep.voided?.includes(c.id)) throw writeRefusal(this.s.acl.current(), this.s.me)
    if (!rep.accepted.includes(c.id)) throw new SvcError('internal', 'the write could not be applied: this replica lacks what it builds on', { missing: rep.missing })
  }
}

/** An object root's nonce (createObject), and what a bulk create draws per object with its payload's. */
const ROOT_NONCE_BYTES = 16
const RANDOM_PER_OBJECT = ROOT_NONCE_BYTES + NONCE_BYTES

/** A local write that would make a malformed change is the caller's fault, not a 500. */
function checkLocalPayload(payload: ChangePayload) {
  try {
    checkPayload(payload)
  } catch (err) {
    throw new SvcError('request.invalid_field', `the write cannot be stored: ${err instanceof InvalidOp ? err.reason : 'invalid'}`, { field: 'ops' })
  }
}

function materialize(id: string, st: StoredHead): MaterializedRecord {
  return {
    id,
    value: st.value,
    deleted: !!st.deleted,
    ...(st.deleted ? { deletedAt: st.deleted.t } : {}),
    verId: verIdOf(st.created),
    created: st.created,
    modified: st.modified,
    versionId: st.v,
    ...(st.yt ? { yt: st.yt } : {}),
  }
}

function rejectionError(reason: RejectReason, st: AclState, me: string): SvcError {
  if (reason === 'read_only' || reason === 'not_member') return writeRefusal(st, me)
  return new SvcError('internal', `write rejected: ${reason}`)
}
