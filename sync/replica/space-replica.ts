import { decodeCanonical, encodeCanonical, toHex } from '../core/encoding.ts'
import type { Env } from '../core/env.ts'
import { SvcError } from '../core/errors.ts'
import { open, seal } from '../crypto/box.ts'
import { decodeStoredRecord, encodeStoredRecord, type StoredRecord } from './record-codec.ts'
import type { CryptoProvider } from '../crypto/provider.ts'
import { identityOf, publicKeyOf, type KeyPair } from '../crypto/keys.ts'
import { wrapKeyTo } from '../crypto/wrap.ts'
import { ensureXxh3, propertyIdSync, sha256 } from '../crypto/hash.ts'
import { compareChanges, decodeChange, derivedRoot, MalformedChange, signChange, verifyChangeSignature, type Change } from '../dag/change.ts'
import { AclLog, type AclEntry } from '../acl/state.ts'
import { Keyring } from '../acl/keyring.ts'
import { decodeAclRecord, encodeAclRecord, InvalidAclRecord, type AclRecord, type Role, type Rotation } from '../acl/records.ts'
import { CHANGE_DERIVED_ID, checkPayload, InvalidOp, type ChangePayload, type Json, type Op } from '../crdt/ops.ts'
import { applyToRecord, compareStamps, noPins, type MergePolicy, type StampInfo } from '../crdt/record.ts'
import { resolveUserOps, type UserOp } from '../crdt/resolve.ts'
import { STORES, type StorageAdapter, type WriteBatch } from '../storage/adapter.ts'
import { changeKey, datasetPrefix, esc, rebuildKey, recordKey, spaceMetaKey, treeKey, treePrefix, VERSION_SEQ_KEY, unesc } from './storage-keys.ts'
import { TreeIndex, type TreeNode } from './tree-index.ts'
import type { CommitInfo, IngestItem, IngestReport, RecordTouch, RejectReason, WriteResult, WriteRejection } from './types.ts'

export interface ReplicaDeps {
  storage: StorageAdapter
  crypto: CryptoProvider
  env: Env
  policy?: MergePolicy
}

/** Persisted per tree: enough to write and to load without replaying history. */
export interface TreeMeta {
  heads: string[]
  maxLamport: number
  count: number
  derived: boolean
  deleted?: StampInfo
}

interface RootPayload {
  kind: 'object'
  seed?: string
  nonce?: Uint8Array
}

/** A record as read from a replica, with the facts stamped by merge. */
export interface MaterializedRecord {
  id: string
  value: Json | undefined
  deleted: boolean
  /** `_ver.id`: zero-padded lamport and id of the creating change; identical on every peer. */
  verId: string
  created: StampInfo
  modified: StampInfo
  /** Local apply sequence of the last change that touched this record (this peer only). */
  versionId: number
}


const MAX_PARKED = 20_000

/** The id a derived object of `spaceId` with `seed` has on every device (see createObject). */
export const derivedObjectId = (spaceId: string, seed: string): string =>
  derivedRoot(spaceId, encodeCanonical({ kind: 'object', seed })).id

export const verIdOf = (s: StampInfo) => `${String(s.l).padStart(12, '0')}-${s.c}`

/**
 * One space on one replica: its ACL log, its object trees and their materialized records.
 * Local writes and changes from peers go through the same apply path; everything a peer sent
 * is checked first (id, signature, right to write at the cited ACL head, read key, lamport),
 * and a change that fails gets a typed reason without stopping the rest of the batch.
 */
export class SpaceReplica {
  readonly acl: AclLog
  readonly keyring: Keyring
  readonly me: string
  private readonly trees = new Map<string, TreeMeta>()
  private readonly indexes = new Map<string, TreeIndex>()
  private readonly records = new Map<string, StoredRecord | null>()
  /**
   * Trees created on this replica since it opened: every record they have was written through
   * the cache, which nothing evicts, so a record missing from it does not exist and needs no
   * storage read (an object arriving whole from a peer, the common case in a sync backlog).
   */
  private readonly cachedTrees = new Set<string>()
  /** Per tree: record keys by `<ds>/<id>`, so each record has one key string (see recordKeyIn). */
  private readonly recordKeys = new Map<string, Map<string, string>>()
  private readonly parked = new Map<string, Change>()
  private readonly toRebuild = new Set<string>()
  private versionSeq = 0
  private seq = 0
  private readonly policy: MergePolicy
  /** Serializes mutations: a write and an ingest never interleave their read-modify-write. */
  private queue: Promise<unknown> = Promise.resolve()
  /** Called after each committed batch with what it touched, for head sync's index. */
  onCommit?: (info: CommitInfo) => void
  private readonly listeners = new Set<(info: CommitInfo) => void>()
  private touches = new Map<string, RecordTouch>()

  private constructor(
    readonly spaceId: string,
    private readonly deps: ReplicaDeps,
    private readonly key: KeyPair,
  ) {
    this.acl = new AclLog(spaceId)
    this.keyring = new Keyring(this.acl, key)
    this.me = identityOf(key.publicKey)
    this.policy = deps.policy ?? noPins
  }

  // ---------------------------------------------------------------- lifecycle

  /** Creates a space owned by `owner`, with its first read key. `seed` makes it derived. */
  static async create(deps: ReplicaDeps, owner: KeyPair, opts: { seed?: string } = {}): Promise<SpaceReplica> {
    const ownerId = identityOf(owner.publicKey)
    let root: Change
    if (opts.seed !== undefined) {
      root = derivedRoot('', encodeAclRecord({ type: 'root', owner: ownerId, seed: opts.seed }))
    } else {
      const rk = deps.env.randomBytes(32)
      const rotation: Rotation = { keys: { [ownerId]: wrapKeyTo(deps.env, owner.publicKey, rk) } }
      const record: AclRecord = { type: 'root', owner: ownerId, nonce: deps.env.randomBytes(16), rotation }
      root = await signChange(deps.crypto, owner, {
        spaceId: '', treeId: '', prevIds: [], aclHeadId: '', seq: 0, lamport: 0, timestamp: deps.env.now(), readKeyId: '', payload: encodeAclRecord(record),
      })
    }
    const r = await SpaceReplica.open(deps, root.id, owner)
    const rep = await r.ingest([{ id: root.id, raw: root.raw }])
    if (rep.rejected.length) throw new SvcError('internal', `space root rejected: ${rep.rejected[0].reason}`)
    // A derived space gets its first key in a second record, since the root cannot hold random bytes.
    if (opts.seed !== undefined && r.acl.current().readKeyId === undefined) await r.rotateReadKey()
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
    const seq = await storage.get(STORES.meta, VERSION_SEQ_KEY)
    this.versionSeq = seq ? decodeCanonical<number>(seq) : 0
    for (const [k, v] of await storage.scan(STORES.trees, { prefix: `${this.spaceId}/` })) {
      this.trees.set(k.slice(this.spaceId.length + 1), decodeCanonical<TreeMeta>(v))
    }
    const aclChanges = (await storage.scan(STORES.changes, { prefix: treePrefix(this.spaceId, this.spaceId) })).map(([, raw]) => decodeChange(raw))
    for (const c of aclChanges.sort((a, b) => a.lamport - b.lamport)) this.acl.add(aclEntryOf(c, decodeAclRecord(c.payload)))
    for (const [k] of await storage.scan(STORES.meta, { prefix: rebuildKey(this.spaceId, '') })) {
      await this.rebuildTree(k.slice(rebuildKey(this.spaceId, '').length))
    }
  }

  /** True once this replica holds the space's ACL root. */
  /** The clock, timers and randomness this replica writes with (the engine's services share them). */
  get env(): Env {
    return this.deps.env
  }

  get known(): boolean {
    return this.acl.has(this.spaceId)
  }

  // ---------------------------------------------------------------- reads

  treeIds(): string[] {
    return [...this.trees.keys()].filter((t) => t !== this.spaceId).sort()
  }
  treeMeta(treeId: string): TreeMeta | undefined {
    return this.trees.get(treeId)
  }
  /** Heads of a tree; the ACL tree is the space id. */
  heads(treeId: string): string[] {
    return [...(this.trees.get(treeId)?.heads ?? [])]
  }

  async getRecord(objectId: string, ds: string, id: string): Promise<MaterializedRecord | undefined> {
    const st = await this.loadRecord(recordKey(this.spaceId, objectId, ds, id))
    return st ? materialize(id, st) : undefined
  }

  /** Every record of a dataset ('' is the object row), in record id order. */
  async listRecords(objectId: string, ds: string): Promise<MaterializedRecord[]> {
    const prefix = datasetPrefix(this.spaceId, objectId, ds)
    const out: MaterializedRecord[] = []
    for (const [k, v] of await this.deps.storage.scan(STORES.records, { prefix })) {
      const cached = this.records.get(k)
      const st = cached ?? decodeStoredRecord(v)
      out.push(materialize(unesc(k.slice(prefix.length)), st))
    }
    return out
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
    for (const [k, v] of await storage.scan(STORES.records, { prefix: `${this.spaceId}/` })) {
      const r = decodeStoredRecord(v)
      parts.push([k, r.value ?? null, r.deleted ?? null, r.created, r.modified])
    }
    return toHex(sha256(encodeCanonical(parts)))
  }

  /** Raw bytes of changes by id, for sending to a peer. */
  async rawChanges(treeId: string, ids: readonly string[]): Promise<Array<{ id: string; raw: Uint8Array }>> {
    const vals = await this.deps.storage.getMany(STORES.changes, ids.map((id) => changeKey(this.spaceId, treeId, id)))
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

  /** The DAG index of a tree (loaded on first use). */
  async treeIndex(treeId: string): Promise<TreeIndex> {
    let idx = this.indexes.get(treeId)
    if (idx) return idx
    idx = new TreeIndex()
    for (const [, raw] of await this.deps.storage.scan(STORES.changes, { prefix: treePrefix(this.spaceId, treeId) })) {
      idx.add(nodeOf(decodeChange(raw)))
    }
    this.indexes.set(treeId, idx)
    return idx
  }

  // ---------------------------------------------------------------- local writes

  /** Creates an object tree; with `seed` its id is derived (same on every device). */
  createObject(opts: { seed?: string } = {}): Promise<string> {
    return this.serial(async () => {
      const payload = encodeCanonical(opts.seed !== undefined ? { kind: 'object', seed: opts.seed } : { kind: 'object', nonce: this.deps.env.randomBytes(16) })
      const root =
        opts.seed !== undefined
          ? derivedRoot(this.spaceId, payload)
          : await signChange(this.deps.crypto, this.key, {
              spaceId: this.spaceId, treeId: '', prevIds: [], aclHeadId: this.acl.latestHead(), seq: ++this.seq, lamport: 0, timestamp: this.deps.env.now(), readKeyId: '', payload,
            })
      if (this.trees.has(root.id)) return root.id
      const rep = await this.ingestNow([{ id: root.id, raw: root.raw }], true)
      if (rep.rejected.length) throw rejectionError(rep.rejected[0].reason)
      return root.id
    })
  }

  /** The local versionId of the latest commit (what a write that wrote nothing reports). */
  versionId(): string {
    return String(this.versionSeq)
  }

  /** Writes merge ops to an object as one change. */
  write(objectId: string, ops: Op[], traceIds?: string[]): Promise<WriteResult> {
    return this.serial(() => this.writeNow(objectId, ops, traceIds))
  }

  /**
   * Spec-shaped modify: per record, user ops ($set/$unset/$inc/$addToSet/$pull) are resolved
   * against current state into set/unset, then written as one change.
   */
  modify(objectId: string, ds: string, records: Array<{ id: string; ops: UserOp[] }>, traceIds?: string[]): Promise<WriteResult> {
    return this.serial(async () => {
      const ops: Op[] = []
      const rejections: WriteRejection[] = []
      for (const rec of records) {
        const cur = await this.loadRecord(recordKey(this.spaceId, objectId, ds, rec.id))
        const res = resolveUserOps(cur?.deleted ? undefined : cur?.value, rec.ops)
        for (const r of res.rejections) rejections.push({ recordId: rec.id, index: r.index, code: r.code, reason: r.reason })
        for (const o of res.ops) ops.push(o.k === 'set' ? { op: 'set', ds, id: rec.id, path: o.p, value: o.v } : { op: 'unset', ds, id: rec.id, path: o.p })
      }
      const result = await this.writeNow(objectId, ops, traceIds)
      // Records created under the change-derived id come back under the id they got.
      result.recordIds = [...new Set(records.map((r) => (r.id === CHANGE_DERIVED_ID ? propertyIdSync(result.changeId) : r.id)))]
      if (rejections.length) result.rejections = [...rejections, ...(result.rejections ?? [])]
      return result
    })
  }

  private async writeNow(objectId: string, ops: Op[], traceIds?: string[]): Promise<WriteResult> {
    const meta = this.trees.get(objectId)
    if (!meta || objectId === this.spaceId) throw new SvcError('object.not_found', 'object not found', { objectId })
    if (meta.deleted) throw new SvcError('object.not_found', 'object was deleted', { objectId })
    // Judged at the head it cites, so sealed under that state's key (concurrent ACL branches
    // may each have rotated).
    const aclHeadId = this.acl.latestHead()
    const state = this.acl.stateAt([aclHeadId])
    if (!state.canWrite(this.me)) throw new SvcError('space.read_only', 'this account cannot write in this space')
    const keyId = state.readKeyId
    const rk = keyId && this.keyring.get(keyId)
    if (!keyId || !rk) throw new SvcError('space.read_only', 'no read key for this space')
    const payload: ChangePayload = traceIds?.length ? { ops, traceIds } : { ops }
    // A local write that would make a malformed change is the caller's fault, not a 500.
    try {
      checkPayload(payload)
    } catch (err) {
      throw new SvcError('request.invalid_field', `the write cannot be stored: ${err instanceof InvalidOp ? err.reason : 'invalid'}`, { field: 'ops' })
    }
    const change = await signChange(this.deps.crypto, this.key, {
      spaceId: this.spaceId, treeId: objectId, prevIds: meta.heads, aclHeadId, seq: ++this.seq,
      lamport: meta.maxLamport + 1, timestamp: this.deps.env.now(), readKeyId: keyId, payload: seal(this.deps.env, rk, encodeCanonical(payload), undefined, this.deps.crypto.aead),
    })
    const drops: WriteRejection[] = []
    const rep = await this.ingestNow([{ id: change.id, raw: change.raw }], true, drops)
    if (rep.rejected.length) throw rejectionError(rep.rejected[0].reason)
    const ids: string[] = []
    for (const op of ops) {
      if (op.op === 'deleteObject') continue
      const id = op.id === CHANGE_DERIVED_ID ? propertyIdSync(change.id) : op.id
      if (!ids.includes(id)) ids.push(id)
    }
    const result: WriteResult = { versionId: String(this.versionSeq), changeId: change.id, recordIds: ids }
    if (drops.length) result.rejections = drops
    return result
  }

  // ---------------------------------------------------------------- ACL writes

  /** Adds a member with a role, wrapping the current read key to them. */
  addMember(identity: string, role: Exclude<Role, 'owner'>): Promise<string> {
    return this.serial(async () => {
      const st = this.acl.current()
      const keyId = st.readKeyId
      const rk = keyId && this.keyring.get(keyId)
      if (!keyId || !rk) throw new SvcError('space.read_only', 'no read key for this space')
      return this.writeAcl({ type: 'add', identity, role, keyId, key: wrapKeyTo(this.deps.env, publicKeyOf(identity), rk) })
    })
  }

  setRole(identity: string, role: Exclude<Role, 'owner'>): Promise<string> {
    return this.serial(() => this.writeAcl({ type: 'role', identity, role }))
  }

  /** Removes a member and rotates the read key to everyone who stays. */
  removeMember(identity: string): Promise<string> {
    return this.serial(async () => this.writeAcl({ type: 'remove', identity, rotation: this.newRotation([identity]) }))
  }

  rotateReadKey(): Promise<string> {
    return this.serial(async () => this.writeAcl({ type: 'rotate', rotation: this.newRotation([]) }))
  }

  private newRotation(excluding: string[]): Rotation {
    const st = this.acl.current()
    const next = this.deps.env.randomBytes(32)
    const keys: Record<string, Uint8Array> = {}
    for (const id of st.readers()) if (!excluding.includes(id)) keys[id] = wrapKeyTo(this.deps.env, publicKeyOf(id), next)
    const prevId = st.readKeyId
    const prev = prevId ? this.keyring.get(prevId) : undefined
    if (prevId && !prev) throw new SvcError('space.read_only', 'cannot rotate without the current read key')
    return prevId && prev ? { keys, prev: seal(this.deps.env, next, prev), prevKeyId: prevId } : { keys }
  }

  private async writeAcl(record: AclRecord): Promise<string> {
    const heads = this.acl.headIds()
    const lamport = Math.max(...heads.map((h) => this.acl.entries.get(h)!.lamport)) + 1
    const change = await signChange(this.deps.crypto, this.key, {
      spaceId: this.spaceId, treeId: this.spaceId, prevIds: heads, aclHeadId: '', seq: ++this.seq, lamport, timestamp: this.deps.env.now(), readKeyId: '', payload: encodeAclRecord(record),
    })
    const rep = await this.ingestNow([{ id: change.id, raw: change.raw }], true)
    if (rep.rejected.length) throw rejectionError(rep.rejected[0].reason)
    return change.id
  }

  // ---------------------------------------------------------------- ingest

  /** Checks and applies changes from anywhere; see the class comment. */
  async ingest(items: IngestItem[]): Promise<IngestReport> {
    // Decoding and signature checks need no replica state, so they run outside the serial
    // queue: while one batch applies, the next one's signatures verify on other threads.
    const { report, verified } = await this.checkStage(items, false)
    return this.serial(async () => {
      const fresh: Change[] = []
      for (const c of verified) {
        const known = this.hasChange(c)
        if (!(known instanceof Promise ? await known : known)) fresh.push(c)
      }
      return this.applyChecked(fresh, report)
    })
  }

  private serial<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.queue.then(fn, fn)
    this.queue = run.catch(() => undefined)
    return run
  }

  private async ingestNow(items: IngestItem[], local: boolean, drops?: WriteRejection[]): Promise<IngestReport> {
    const { report, verified } = await this.checkStage(items, local)
    return this.applyChecked(verified, report, drops, undefined, local)
  }

  /** Stage one: shape, id and signature of every item; known changes are skipped early. */
  private async checkStage(items: IngestItem[], local: boolean): Promise<{ report: IngestReport; verified: Change[] }> {
    const report: IngestReport = { accepted: [], rejected: [], missing: [] }
    const fresh: Change[] = []
    const seen = new Set<string>()
    for (const item of items) {
      let c: Change
      try {
        c = decodeChange(item.raw, this.deps.crypto.sha256)
      } catch (err) {
        report.rejected.push({ id: item.id, reason: err instanceof MalformedChange ? 'malformed' : 'malformed' })
        continue
      }
      if (c.id !== item.id) {
        report.rejected.push({ id: item.id, reason: 'bad_id' })
        continue
      }
      if (seen.has(c.id)) continue
      seen.add(c.id)
      if (!this.belongsHere(c)) {
        report.rejected.push({ id: c.id, reason: 'wrong_space' })
        continue
      }
      const known = this.hasChange(c)
      if (known instanceof Promise ? await known : known) continue
      fresh.push(c)
    }
    // Signatures dominate ingest cost; the native verifier runs them in parallel.
    const sigOk = local ? fresh.map(() => true) : await Promise.all(fresh.map((c) => verifyChangeSignature(this.deps.crypto, c)))
    const verified: Change[] = []
    fresh.forEach((c, i) => (sigOk[i] ? verified.push(c) : report.rejected.push({ id: c.id, reason: 'bad_signature' })))
    return { report, verified }
  }

  /**
   * Stage two of ingest, for changes whose bytes, id and signature are already checked (and,
   * optionally, whose payloads are already opened, say by a worker): rights, read key,
   * lamport, merge, and one atomic commit. Public so the pipeline's stages can be measured
   * and moved apart; never call it with unchecked changes.
   */
  applyVerified(changes: Array<{ change: Change; payload?: ChangePayload }>): Promise<IngestReport> {
    return this.serial(() => {
      const opened = new Map<Change, ChangePayload>()
      for (const { change, payload } of changes) if (payload) opened.set(change, payload)
      return this.applyChecked(changes.map((c) => c.change), { accepted: [], rejected: [], missing: [] }, undefined, opened)
    })
  }

  private async applyChecked(verified: Change[], report: IngestReport, drops?: WriteRejection[], opened?: Map<Change, ChangePayload>, local = false): Promise<IngestReport> {
    const seen = new Set(verified.map((c) => c.id))
    const pending = [...verified]
    for (const c of this.parked.values()) if (!seen.has(c.id)) pending.push(c)
    this.parked.clear()

    const batch: WriteBatch = { puts: [], dels: [] }
    const touchedTrees = new Set<string>()
    const dirty = new Set<string>()
    const appliedIds: string[] = []
    const voided: string[] = []
    // ACL records first (changes cite them), then arrival order, which is causal whenever the
    // sender walked its DAG parents first (head sync does). Whatever came ahead of a parent
    // waits for the next pass, in lamport order, where every parent precedes its children; so
    // a batch in any order takes at most a few passes and is never sorted when it need not be.
    let queue = this.aclFirst(pending)
    let sorted = false
    while (queue.length) {
      let progress = false
      const next: Change[] = []
      for (const c of queue) {
        const tree = this.treeOf(c)
        if (tree !== this.spaceId && c.treeId !== '' && this.trees.has(tree) && !this.indexes.has(tree)) await this.treeIndex(tree)
        if (!this.depsPresent(c)) {
          next.push(c)
          continue
        }
        let reason = this.applyOne(c, batch, touchedTrees, dirty, voided, drops, opened)
        if (reason instanceof Promise) reason = await reason
        if (reason) report.rejected.push({ id: c.id, reason })
        else {
          report.accepted.push(c.id)
          appliedIds.push(c.id)
        }
        progress = true
      }
      if (!progress) break
      queue = next
      if (!sorted) {
        queue.sort(compareChanges)
        sorted = true
      }
    }
    const missing = new Set<string>()
    for (const c of queue) {
      if (this.parked.size < MAX_PARKED) this.parked.set(c.id, c)
      for (const m of this.missingDeps(c)) missing.add(m)
    }
    report.missing = [...missing].sort()
    if (appliedIds.length) {
      for (const t of touchedTrees) batch.puts.push({ store: STORES.trees, key: treeKey(this.spaceId, t), value: encodeCanonical(this.trees.get(t)) })
      this.flushRecords(batch, dirty)
      for (const t of this.toRebuild) batch.puts.push({ store: STORES.meta, key: rebuildKey(this.spaceId, t), value: new Uint8Array(0) })
      batch.puts.push({ store: STORES.meta, key: VERSION_SEQ_KEY, value: encodeCanonical(this.versionSeq) })
      batch.puts.push({ store: STORES.meta, key: spaceMetaKey(this.spaceId), value: encodeCanonical({ spaceId: this.spaceId }) })
      await this.deps.storage.commit(batch)
      this.forgetDeleted(dirty)
      const rebuilt = [...this.toRebuild]
      this.toRebuild.clear()
      for (const t of rebuilt) await this.rebuildTree(t)
      const info: CommitInfo = {
        versionId: String(this.versionSeq), local, changeIds: appliedIds, treeIds: [...new Set([...touchedTrees, ...rebuilt])],
        records: [...this.touches.values()], rebuiltTrees: rebuilt,
      }
      this.touches = new Map()
      this.onCommit?.(info)
      for (const l of this.listeners) l(info)
    }
    report.voided = voided
    return report
  }

  private belongsHere(c: Change): boolean {
    if (c.id === this.spaceId) return c.spaceId === '' && c.treeId === ''
    return c.spaceId === this.spaceId
  }

  private treeOf(c: Change): string {
    return c.treeId === '' ? c.id : c.treeId
  }

  /** Asked twice per ingested change: answers synchronously once the tree's index is loaded. */
  private hasChange(c: Change): boolean | Promise<boolean> {
    const tree = this.treeOf(c)
    if (tree === this.spaceId) return this.acl.has(c.id)
    if (!this.trees.has(tree)) return false
    const idx = this.indexes.get(tree)
    return idx ? idx.has(c.id) : this.treeIndex(tree).then((loaded) => loaded.has(c.id))
  }

  private aclFirst(changes: Change[]): Change[] {
    const acl: Change[] = []
    const rest: Change[] = []
    for (const c of changes) (c.treeId === this.spaceId || c.id === this.spaceId ? acl : rest).push(c)
    if (acl.length === 0) return rest
    acl.sort(compareChanges)
    return acl.concat(rest)
  }

  /** missingDeps(c).length === 0, without building the list (asked once per applied change). */
  private depsPresent(c: Change): boolean {
    const tree = this.treeOf(c)
    if (tree === this.spaceId) {
      for (const p of c.prevIds) if (!this.acl.has(p)) return false
      return true
    }
    if (c.aclHeadId !== '' && !this.acl.has(c.aclHeadId)) return false
    if (c.treeId !== '') {
      const idx = this.indexes.get(tree)
      if (!this.trees.has(tree) || !idx) return false
      for (const p of c.prevIds) if (!idx.has(p)) return false
    }
    return true
  }

  /** Ids this change needs before it can be judged: parents, and the ACL record it cites. */
  private missingDeps(c: Change): string[] {
    const out: string[] = []
    const tree = this.treeOf(c)
    if (tree === this.spaceId) {
      for (const p of c.prevIds) if (!this.acl.has(p)) out.push(p)
      return out
    }
    if (c.aclHeadId !== '' && !this.acl.has(c.aclHeadId)) out.push(c.aclHeadId)
    if (c.treeId !== '') {
      const idx = this.indexes.get(tree)
      if (!this.trees.has(tree) || !idx) return [...out, ...c.prevIds]
      for (const p of c.prevIds) if (!idx.has(p)) out.push(p)
    }
    return out
  }

  /**
   * Judges and applies one change whose dependencies are present. Returns synchronously unless
   * it must read storage (a record not cached yet, an ACL removal): awaiting an async call per
   * change was a measurable share of the apply stage.
   */
  private applyOne(c: Change, batch: WriteBatch, touched: Set<string>, dirty: Set<string>, voided: string[], drops?: WriteRejection[], opened?: Map<Change, ChangePayload>): RejectReason | undefined | Promise<RejectReason | undefined> {
    const tree = this.treeOf(c)
    if (tree === this.spaceId) return this.applyAcl(c, batch, touched)
    if (c.treeId === '') return this.applyRoot(c, batch, touched)
    const meta = this.trees.get(tree)!
    const idx = this.indexes.get(tree)!
    let maxPrev = 0
    for (const p of c.prevIds) {
      const n = idx.get(p)!
      maxPrev = Math.max(maxPrev, n.lamport)
      // A change may not cite an ACL state older than one its parents already cited: once a
      // tree has moved past a removal, the removed member cannot append to it.
      // (Concurrent ACL heads are fine: only going back behind a parent's head is refused.)
      if (n.aclHeadId !== '' && n.aclHeadId !== c.aclHeadId && this.acl.precedesOrEquals(c.aclHeadId, n.aclHeadId)) return 'stale_acl_head'
    }
    if (c.lamport <= maxPrev) return 'bad_lamport'
    const st = this.acl.stateAtHead(c.aclHeadId)
    if (!st.canWrite(c.author)) {
      const role = st.roleOf(c.author)
      return role === 'reader' || role === 'guest' ? 'read_only' : 'not_member'
    }
    if (c.readKeyId !== st.readKeyId) return 'bad_read_key'
    const rk = this.keyring.get(c.readKeyId)
    if (!rk) return 'no_read_key'
    let payload: ChangePayload
    try {
      payload = opened?.get(c) ?? decodeCanonical<ChangePayload>(open(rk, c.payload, undefined, this.deps.crypto.aead))
      checkPayload(payload)
    } catch (err) {
      return err instanceof InvalidOp ? 'malformed' : 'bad_payload'
    }
    this.versionSeq++
    if (this.acl.voids(c.author, c.aclHeadId, c.timestamp)) voided.push(c.id)
    else {
      const pending = this.applyOps(tree, meta, c, payload, dirty, drops)
      if (pending) return pending.then(() => this.joinTree(c, tree, meta, idx, batch, touched))
    }
    return this.joinTree(c, tree, meta, idx, batch, touched)
  }

  /** Once an object is tombstoned its changes still join the DAG, but their ops are absorbed. */
  private joinTree(c: Change, tree: string, meta: TreeMeta, idx: TreeIndex, batch: WriteBatch, touched: Set<string>): undefined {
    idx.add(nodeOf(c))
    meta.heads = nextHeads(meta.heads, c)
    meta.maxLamport = Math.max(meta.maxLamport, c.lamport)
    meta.count++
    touched.add(tree)
    batch.puts.push({ store: STORES.changes, key: changeKey(this.spaceId, tree, c.id), value: c.raw })
    return undefined
  }

  /**
   * Merges a change's ops into its records. Records are read from storage once and cached, so
   * the storage reads (and the only awaits) happen up front, for records not seen yet; the
   * common case returns undefined without awaiting anything.
   */
  private applyOps(tree: string, meta: TreeMeta, c: Change, payload: ChangePayload, dirty: Set<string>, drops?: WriteRejection[]): Promise<void> | undefined {
    const prefix = treePrefix(this.spaceId, tree)
    const ops = payload.ops
    const keys: string[] = new Array(ops.length)
    let unread: string[] | undefined
    let tombstoning = false
    for (let i = 0; i < ops.length; i++) {
      const op = ops[i]
      if (op.op === 'deleteObject') {
        tombstoning = !meta.deleted
        break
      }
      if (meta.deleted) continue
      const k = this.recordKeyIn(tree, prefix, op.ds, op.id === CHANGE_DERIVED_ID ? propertyIdSync(c.id) : op.id)
      keys[i] = k
      if (!this.records.has(k) && !this.cachedTrees.has(tree)) (unread ??= []).push(k)
    }
    if (!unread && !tombstoning) {
      this.mergeOps(tree, prefix, meta, c, ops, keys, [], dirty, drops)
      return undefined
    }
    return (async () => {
      if (unread) await this.readRecords(unread)
      const stored = tombstoning ? await this.storedRecordKeys(prefix) : []
      this.mergeOps(tree, prefix, meta, c, ops, keys, stored, dirty, drops)
    })()
  }

  /**
   * The storage key of a record, one string per record while it is cached: a key built anew
   * per op is a cons string V8 flattens and hashes on every Map lookup, about 0.5 µs an op.
   */
  private recordKeyIn(tree: string, prefix: string, ds: string, id: string): string {
    let keys = this.recordKeys.get(tree)
    if (!keys) this.recordKeys.set(tree, (keys = new Map()))
    const local = esc(ds) + '/' + esc(id)
    let k = keys.get(local)
    if (k === undefined) keys.set(local, (k = prefix + local))
    return k
  }

  /** applyOps once every record it touches is cached; `storedKeys`: the tree's record keys in storage, when it tombstones. */
  private mergeOps(tree: string, prefix: string, meta: TreeMeta, c: Change, ops: Op[], keys: string[], storedKeys: string[], dirty: Set<string>, drops?: WriteRejection[]) {
    for (let i = 0; i < ops.length; i++) {
      const op = ops[i]
      const info: StampInfo = { l: c.lamport, c: c.id, a: c.author, t: c.timestamp, i }
      if (op.op === 'deleteObject') {
        // The tombstone absorbs everything; concurrent deletes keep the earliest stamp.
        if (!meta.deleted) this.markRecordsDeleted(prefix, storedKeys, dirty)
        if (!meta.deleted || compareStamps(info, meta.deleted) < 0) meta.deleted = info
        return
      }
      if (meta.deleted) continue
      const recordId = op.id === CHANGE_DERIVED_ID ? propertyIdSync(c.id) : op.id
      const k = keys[i]
      const cur = this.records.get(k) ?? undefined
      const mop = op.op === 'set' ? { k: 'set' as const, p: op.path, v: op.value } : op.op === 'unset' ? { k: 'unset' as const, p: op.path } : { k: 'delete' as const }
      const { state, outcome } = applyToRecord(cur, info, mop, this.policy.pinnedPaths(op.ds))
      const stored = state as StoredRecord
      stored.v = this.versionSeq
      this.records.set(k, stored)
      dirty.add(k)
      if (outcome === 'applied') this.touch(k, tree, op.ds, recordId, mop)
      if (outcome === 'dropped_pinned') drops?.push({ recordId, index: i, code: 'merge.pinned', reason: 'a pinned path already holds another value' })
    }
  }

  /**
   * Re-derives a tree's records from its DAG. Needed only when a removal arrives after
   * changes it voids were applied; the marker written with the removal makes a crash in
   * between finish the job on the next open.
   */
  private async rebuildTree(tree: string) {
    const meta = this.trees.get(tree)
    if (!meta) return
    const idx = await this.treeIndex(tree)
    const nodes = idx.missingFrom([])
    const raws = await this.deps.storage.getMany(STORES.changes, nodes.map((n) => changeKey(this.spaceId, tree, n.id)))
    const dirty = new Set<string>()
    await this.deleteObjectRecords(tree, dirty)
    meta.deleted = undefined
    this.versionSeq++
    for (let i = 0; i < nodes.length; i++) {
      const raw = raws[i]
      if (!raw || nodes[i].prevIds.length === 0) continue
      const c = decodeChange(raw)
      if (this.acl.voids(c.author, c.aclHeadId, c.timestamp)) continue
      const rk = this.keyring.get(c.readKeyId)
      if (!rk) continue
      const payload = decodeCanonical<ChangePayload>(open(rk, c.payload, undefined, this.deps.crypto.aead))
      await this.applyOps(tree, meta, c, payload, dirty)
    }
    const batch: WriteBatch = { puts: [], dels: [{ store: STORES.meta, key: rebuildKey(this.spaceId, tree) }] }
    this.flushRecords(batch, dirty)
    batch.puts.push({ store: STORES.trees, key: treeKey(this.spaceId, tree), value: encodeCanonical(meta) })
    batch.puts.push({ store: STORES.meta, key: VERSION_SEQ_KEY, value: encodeCanonical(this.versionSeq) })
    await this.deps.storage.commit(batch)
    this.forgetDeleted(dirty)
  }

  private flushRecords(batch: WriteBatch, dirty: Set<string>) {
    for (const k of dirty) {
      const st = this.records.get(k)
      if (st) batch.puts.push({ store: STORES.records, key: k, value: encodeStoredRecord(st) })
      else batch.dels.push({ store: STORES.records, key: k })
    }
  }

  /** After a commit, absent records no longer need their null marker in the cache. */
  private forgetDeleted(dirty: Set<string>) {
    for (const k of dirty) if (this.records.get(k) === null) this.records.delete(k)
  }

  /** Trees holding changes by `identity` stamped after its removal `c`: they need a rebuild. */
  private async treesVoidedBy(identity: string, c: Change): Promise<string[]> {
    const out: string[] = []
    for (const tree of this.treeIds()) {
      const idx = await this.treeIndex(tree)
      for (const id of idx.ids()) {
        const n = idx.get(id)!
        if (n.author === identity && n.timestamp > c.timestamp && !this.acl.precedesOrEquals(c.id, n.aclHeadId)) {
          out.push(tree)
          break
        }
      }
    }
    return out
  }

  private touch(key: string, tree: string, ds: string, id: string, op: { k: 'set'; p: string; v: Json } | { k: 'unset'; p: string } | { k: 'delete' }) {
    let t = this.touches.get(key)
    if (!t) this.touches.set(key, (t = { treeId: tree, ds, id, ops: [] }))
    if (op.k === 'set') t.ops.push({ type: '$set', path: op.p, value: op.v })
    else if (op.k === 'unset') t.ops.push({ type: '$unset', path: op.p })
  }

  /** Listens to every committed batch; returns the function that stops listening. */
  addCommitListener(fn: (info: CommitInfo) => void): () => void {
    this.listeners.add(fn)
    return () => this.listeners.delete(fn)
  }

  private async deleteObjectRecords(tree: string, dirty: Set<string>) {
    const prefix = treePrefix(this.spaceId, tree)
    this.markRecordsDeleted(prefix, await this.storedRecordKeys(prefix), dirty)
  }

  private async storedRecordKeys(prefix: string): Promise<string[]> {
    return (await this.deps.storage.scan(STORES.records, { prefix })).map(([k]) => k)
  }

  /** Every record of a tree (`stored` in storage, and any cached) becomes absent in this batch. */
  private markRecordsDeleted(prefix: string, stored: string[], dirty: Set<string>) {
    this.recordKeys.delete(prefix.slice(this.spaceId.length + 1, -1))
    for (const k of stored) {
      this.records.set(k, null)
      dirty.add(k)
    }
    for (const k of [...this.records.keys()]) {
      if (k.startsWith(prefix)) {
        this.records.set(k, null)
        dirty.add(k)
      }
    }
  }

  private applyRoot(c: Change, batch: WriteBatch, touched: Set<string>): RejectReason | undefined {
    let p: RootPayload
    try {
      p = decodeCanonical<RootPayload>(c.payload)
    } catch {
      return 'malformed'
    }
    if (p?.kind !== 'object') return 'malformed'
    if (c.author === '') {
      if (typeof p.seed !== 'string' || p.nonce !== undefined) return 'malformed'
    } else {
      if (c.aclHeadId === '' || !this.acl.has(c.aclHeadId)) return 'not_member'
      const st = this.acl.stateAt([c.aclHeadId])
      if (!st.canWrite(c.author)) return st.roleOf(c.author) === 'none' ? 'not_member' : 'read_only'
    }
    const idx = new TreeIndex()
    idx.add(nodeOf(c))
    this.indexes.set(c.id, idx)
    this.trees.set(c.id, { heads: [c.id], maxLamport: c.lamport, count: 1, derived: c.author === '' })
    this.cachedTrees.add(c.id)
    touched.add(c.id)
    this.versionSeq++
    batch.puts.push({ store: STORES.changes, key: changeKey(this.spaceId, c.id, c.id), value: c.raw })
    return undefined
  }

  private async applyAcl(c: Change, batch: WriteBatch, touched: Set<string>): Promise<RejectReason | undefined> {
    let record: AclRecord
    try {
      record = decodeAclRecord(c.payload)
    } catch (err) {
      return err instanceof InvalidAclRecord ? 'malformed' : 'malformed'
    }
    if (c.id === this.spaceId) {
      if (record.type !== 'root') return 'malformed'
      if (c.author === '' ? record.seed === undefined || record.rotation !== undefined : c.author !== record.owner) return 'not_member'
    } else {
      if (record.type === 'root' || c.aclHeadId !== '' || c.readKeyId !== '') return 'malformed'
      const st = this.acl.stateAt(c.prevIds)
      if (!st.canManage(c.author)) return st.roleOf(c.author) === 'none' ? 'not_member' : 'read_only'
      const rot = 'rotation' in record ? record.rotation : undefined
      if (rot && rot.prevKeyId !== st.readKeyId) return 'malformed'
      let maxPrev = 0
      for (const p of c.prevIds) maxPrev = Math.max(maxPrev, this.acl.entries.get(p)!.lamport)
      if (c.lamport <= maxPrev) return 'bad_lamport'
    }
    this.acl.add(aclEntryOf(c, record))
    // A loaded index of the ACL tree (head sync may ask for one) stays current.
    this.indexes.get(this.spaceId)?.add(nodeOf(c))
    if (record.type === 'remove') for (const t of await this.treesVoidedBy(record.identity, c)) this.toRebuild.add(t)
    const meta = this.trees.get(this.spaceId) ?? { heads: [], maxLamport: 0, count: 0, derived: c.author === '' }
    meta.heads = this.acl.headIds()
    meta.maxLamport = Math.max(meta.maxLamport, c.lamport)
    meta.count++
    this.trees.set(this.spaceId, meta)
    touched.add(this.spaceId)
    this.versionSeq++
    batch.puts.push({ store: STORES.changes, key: changeKey(this.spaceId, this.spaceId, c.id), value: c.raw })
    return undefined
  }

  /** Caches the stored state of records not cached yet (absent ones stay uncached). */
  private async readRecords(keys: string[]) {
    const vals = await this.deps.storage.getMany(STORES.records, keys)
    for (let i = 0; i < keys.length; i++) {
      const raw = vals[i]
      if (raw && !this.records.has(keys[i])) this.records.set(keys[i], decodeStoredRecord(raw))
    }
  }

  private async loadRecord(key: string): Promise<StoredRecord | undefined> {
    if (this.records.has(key)) return this.records.get(key) ?? undefined
    const raw = await this.deps.storage.get(STORES.records, key)
    const st = raw ? decodeStoredRecord(raw) : undefined
    if (st) this.records.set(key, st)
    return st
  }
}

function nextHeads(heads: string[], c: Change): string[] {
  // A linear history, by far the common case: the one head is the one parent.
  if (heads.length === 1 && c.prevIds.length === 1 && heads[0] === c.prevIds[0]) return [c.id]
  const out = heads.filter((h) => !c.prevIds.includes(h))
  out.push(c.id)
  return out.sort()
}

function nodeOf(c: Change): TreeNode {
  return { id: c.id, lamport: c.lamport, prevIds: c.prevIds, aclHeadId: c.aclHeadId, author: c.author, timestamp: c.timestamp }
}

function aclEntryOf(c: Change, record: AclRecord): AclEntry {
  return { id: c.id, lamport: c.lamport, prevIds: c.prevIds, author: c.author, timestamp: c.timestamp, record }
}

function materialize(id: string, st: StoredRecord): MaterializedRecord {
  return { id, value: st.value, deleted: !!st.deleted, verId: verIdOf(st.created), created: st.created, modified: st.modified, versionId: st.v }
}

function rejectionError(reason: RejectReason): SvcError {
  if (reason === 'read_only' || reason === 'not_member') return new SvcError('space.read_only', 'this account cannot write in this space')
  return new SvcError('internal', `write rejected: ${reason}`)
}
