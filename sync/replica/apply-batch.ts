import { decodeCanonical, encodeCanonical } from '../core/encoding.ts'
import { open } from '../crypto/box.ts'
import { propertyIdSync } from '../crypto/hash.ts'
import { compareChanges, decodeChange, type Change } from '../dag/change.ts'
import { decodeAclRecord, type AclRecord } from '../acl/records.ts'
import { CHANGE_DERIVED_ID, checkPayload, InvalidOp, type ChangePayload, type Op } from '../crdt/ops.ts'
import { mergeOpOf } from '../crdt/ytext-fold.ts'
import { getPath } from '../crdt/path.ts'
import { applyToRecord, compareStamps, type MergeOp, type StampInfo } from '../crdt/record.ts'
import { STORES, type WriteBatch } from '../storage/adapter.ts'
import { aclRecordDep, citesStaleHead, isVoid, judgeAclRecord, judgeKey, judgeSignedRoot, judgeWriter, mayBuildOnDerivedRoot, treesAffected, witnessArrived } from './acl-rules.ts'
import type { StoredRecord } from './record-codec.ts'
import { aclEntryOf, nodeOf, type ReplicaState, type TreeMeta } from './replica-state.ts'
import { changeKey, rebuildKey, spaceMetaKey, treeKey, treePrefix, versionSeqKey } from './storage-keys.ts'
import { TreeIndex } from './tree-index.ts'
import type { CommitInfo, IngestReport, RejectReason, WriteRejection } from './types.ts'

interface RootPayload {
  kind: 'object'
  seed?: string
  nonce?: Uint8Array
}

const NONE: readonly string[] = []

/**
 * Stage two of ingest for one batch of checked changes (bytes, id and signature already
 * verified): rights, read key, lamport, merge, all into one atomic WriteBatch. One instance per
 * batch holds what the batch has built so far.
 */
export class ApplyBatch {
  /** What the current slice writes (see `Slicer`); emptied once it commits. */
  batch: WriteBatch = { puts: [], dels: [] }
  /** Trees whose metadata the batch changed. */
  readonly touched = new Set<string>()
  /** Record keys the batch changed (flushed from the cache at commit). */
  readonly dirty = new Set<string>()
  readonly voided: string[] = []
  /** `voided` as a set: a witnessed id woken later in the batch may cover one of them. */
  private readonly voidedIds = new Set<string>()
  /** Ids applied, in order. */
  readonly applied: string[] = []
  /** How many of `applied` earlier slices committed. */
  committed = 0
  /** Derived roots held (not applied) since parked changes were last woken. */
  readonly heldIds: string[] = []
  /** Every object change of the batch by id: a removal's witness may name one not applied yet. */
  readonly pending = new Map<string, Change>()

  /** After a slice committed: what follows goes into a fresh write batch. */
  nextSlice() {
    this.batch = { puts: [], dels: [] }
    this.touched.clear()
    this.dirty.clear()
    this.committed = this.applied.length
  }

  addPending(changes: readonly Change[]) {
    for (const c of changes) if (c.treeId !== this.s.spaceId && c.id !== this.s.spaceId) this.pending.set(c.id, c)
  }

  constructor(
    private readonly s: ReplicaState,
    /** Where a local write learns which of its ops merge dropped (pinned paths). */
    private readonly drops?: WriteRejection[],
    /** Payloads already opened (say by a worker), by change. */
    private readonly opened?: Map<Change, ChangePayload>,
  ) {}

  /**
   * Judges and applies one change whose dependencies are present. Returns synchronously unless
   * it must read storage (a record not cached yet, an ACL removal): awaiting an async call per
   * change was a measurable share of the apply stage.
   */
  applyOne(c: Change): RejectReason | undefined | Promise<RejectReason | undefined> {
    const s = this.s
    const tree = s.treeOf(c)
    if (tree === s.spaceId) return this.applyAcl(c)
    if (c.treeId === '') return this.applyRoot(c)
    const meta = s.trees.get(tree)!
    const idx = s.indexes.get(tree)!
    let maxPrev = 0
    for (const p of c.prevIds) {
      const n = idx.get(p)!
      maxPrev = Math.max(maxPrev, n.lamport)
      if (citesStaleHead(s.acl, c, n)) return 'stale_acl_head'
    }
    if (c.lamport <= maxPrev) return 'bad_lamport'
    const refused = judgeWriter(s.acl, c)
    if (refused) return refused
    // A void change joins the DAG without its ops, so its payload is not opened: whether this
    // replica can reach its key must not decide whether it joins (see judgeKey).
    if (isVoid(s, c, tree, this.pending)) {
      s.versionSeq++
      if (witnessArrived(s, c, tree, this.pending, this.voidedIds)) s.toRebuild.add(tree)
      this.voided.push(c.id)
      this.voidedIds.add(c.id)
      this.joinTree(c, tree, meta, idx)
      return
    }
    if (s.deps.keyless) {
      // A custodian cannot open the payload: the change joins the DAG as it is, and the readers
      // that fetch it judge its key and payload (a bad one is theirs to refuse, as from anyone).
      s.versionSeq++
      if (witnessArrived(s, c, tree, this.pending, this.voidedIds)) s.toRebuild.add(tree)
      this.joinTree(c, tree, meta, idx)
      return
    }
    const noKey = judgeKey(s.keyring, c)
    if (noKey) return noKey
    let payload: ChangePayload
    try {
      payload = this.opened?.get(c) ?? decodeCanonical<ChangePayload>(open(s.keyring.get(c.readKeyId)!, c.payload, undefined, s.deps.crypto.aead))
      checkPayload(payload)
    } catch (err) {
      return err instanceof InvalidOp ? 'malformed' : 'bad_payload'
    }
    s.versionSeq++
    // Its earlier changes here were judged without it: they may be witnessed after all.
    if (witnessArrived(s, c, tree, this.pending, this.voidedIds)) s.toRebuild.add(tree)
    const pending = this.applyOps(tree, meta, c, payload)
    if (pending) return pending.then(() => this.joinTree(c, tree, meta, idx))
    this.joinTree(c, tree, meta, idx)
  }

  /** Once an object is tombstoned its changes still join the DAG, but their ops are absorbed. */
  private joinTree(c: Change, tree: string, meta: TreeMeta, idx: TreeIndex): undefined {
    idx.add(nodeOf(c))
    meta.heads = nextHeads(meta.heads, c)
    meta.maxLamport = Math.max(meta.maxLamport, c.lamport)
    meta.count++
    this.touched.add(tree)
    this.batch.puts.push({ store: STORES.changes, key: changeKey(this.s.spaceId, tree, c.id), value: c.raw })
    return undefined
  }

  /**
   * Merges a change's ops into its records. Records are read from storage once and cached, so
   * the storage reads (and the only awaits) happen up front, for records not seen yet; the
   * common case returns undefined without awaiting anything.
   */
  applyOps(tree: string, meta: TreeMeta, c: Change, payload: ChangePayload): Promise<void> | undefined {
    const { records } = this.s
    const prefix = treePrefix(this.s.spaceId, tree)
    const ops = payload.ops
    const keys: string[] = new Array<string>(ops.length)
    let unread: string[] | undefined
    let tombstoning = false
    for (let i = 0; i < ops.length; i++) {
      const op = ops[i]
      if (op.op === 'deleteObject') {
        // Derived objects are permanent (a writer's crafted delete of one is dropped everywhere).
        tombstoning = !meta.deleted && !meta.derived
        break
      }
      if (meta.deleted) continue
      const k = records.keyIn(tree, prefix, op.ds, op.id === CHANGE_DERIVED_ID ? propertyIdSync(c.id) : op.id)
      keys[i] = k
      if (records.needsRead(k, tree)) (unread ??= []).push(k)
    }
    if (!unread && !tombstoning) {
      this.mergeOps(tree, meta, c, ops, keys, NONE, payload.traceIds)
      return undefined
    }
    return (async () => {
      if (unread) await records.readMany(unread)
      const storedKeys = tombstoning ? await storedRecordKeys(this.s, prefix) : []
      this.mergeOps(tree, meta, c, ops, keys, storedKeys, payload.traceIds)
    })()
  }

  /**
   * applyOps once every record it touches is cached; `storedKeys`: the tree's record keys in
   * storage, when it tombstones. The change's trace ids ride on its stamps, so a record's
   * `modified` stamp names the traces of the change that last touched it (`_traces`).
   */
  private mergeOps(tree: string, meta: TreeMeta, c: Change, ops: Op[], keys: string[], storedKeys: readonly string[], traceIds?: string[]) {
    const s = this.s
    for (let i = 0; i < ops.length; i++) {
      const op = ops[i]
      const info: StampInfo = { l: c.lamport, c: c.id, a: c.author, t: c.timestamp, i, ...(traceIds?.length ? { tr: traceIds } : {}) }
      if (op.op === 'deleteObject') {
        if (meta.derived) return
        // The tombstone absorbs everything; concurrent deletes keep the earliest stamp.
        if (!meta.deleted) s.records.markTreeDeleted(tree, treePrefix(s.spaceId, tree), storedKeys, this.dirty)
        if (!meta.deleted || compareStamps(info, meta.deleted) < 0) meta.deleted = info
        return
      }
      if (meta.deleted) continue
      const recordId = op.id === CHANGE_DERIVED_ID ? propertyIdSync(c.id) : op.id
      const k = keys[i]
      const cur = s.records.peek(k)
      const mop: MergeOp = mergeOpOf(op)
      const rule = s.policy.writeRule?.(op.ds)
      const { state, outcome } = applyToRecord(cur, info, mop, s.policy.pinnedPaths(op.ds), rule ? { rule, recordId } : undefined)
      const stored = state as StoredRecord
      stored.v = s.versionSeq
      s.records.set(k, stored)
      this.dirty.add(k)
      if (outcome === 'applied') this.touch(k, tree, op.ds, recordId, mop.k === 'ytext' ? { k: 'set', p: mop.p, v: getPath(state.value, mop.p) ?? '' } : mop)
      if (outcome === 'dropped_pinned') this.drops?.push({ recordId, index: i, code: 'merge.pinned', reason: 'a pinned path already holds another value' })
      if (outcome === 'dropped_invalid') this.drops?.push({ recordId, index: i, code: 'merge.invalid', reason: 'the text update is not a valid update by its writer' })
      // The op may be the record's true create (a concurrent create stamped lower): the tree is
      // folded again from its changes at commit, in stamp order, like a voided change's tree.
      if (outcome === 'refold') s.toRebuild.add(tree)
      if (outcome === 'dropped_rule') this.drops?.push({ recordId, index: i, code: 'merge.refused', reason: "the dataset's write rule refused this op" })
    }
  }

  private touch(key: string, tree: string, ds: string, id: string, op: MergeOp) {
    let t = this.s.touches.get(key)
    if (!t) this.s.touches.set(key, (t = { treeId: tree, ds, id, ops: [] }))
    if (op.k === 'set') t.ops.push({ type: '$set', path: op.p, value: op.v })
    else if (op.k === 'unset') t.ops.push({ type: '$unset', path: op.p })
  }

  private applyRoot(c: Change): RejectReason | undefined {
    const s = this.s
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
      const refused = judgeSignedRoot(s.acl, c)
      if (refused) return refused
    }
    const idx = new TreeIndex()
    idx.add(nodeOf(c))
    s.indexes.set(c.id, idx)
    s.trees.set(c.id, { heads: [c.id], maxLamport: c.lamport, count: 1, derived: c.author === '' })
    s.records.treeCreated(c.id)
    this.touched.add(c.id)
    s.versionSeq++
    this.batch.puts.push({ store: STORES.changes, key: changeKey(s.spaceId, c.id, c.id), value: c.raw })
    return undefined
  }

  private async applyAcl(c: Change): Promise<RejectReason | undefined> {
    const s = this.s
    let record: AclRecord
    try {
      record = decodeAclRecord(c.payload)
    } catch {
      return 'malformed'
    }
    const refused = judgeAclRecord(s.acl, s.spaceId, c, record)
    if (refused) return refused
    const trees = objectTreeIds(s)
    const before = trees.length ? s.acl.current() : undefined
    s.acl.add(aclEntryOf(c, record))
    // A loaded index of the ACL tree (head sync may ask for one) stays current.
    s.indexes.get(s.spaceId)?.add(nodeOf(c))
    // Changes applied before this record may be void now (a removal), or no longer (a removal
    // it outranks): their trees are re-derived once the batch commits.
    if (before) for (const t of await treesAffected(s, before, s.acl.current(), c.id, trees)) s.toRebuild.add(t)
    const meta = s.trees.get(s.spaceId) ?? { heads: [], maxLamport: 0, count: 0, derived: c.author === '' }
    meta.heads = s.acl.headIds()
    meta.maxLamport = Math.max(meta.maxLamport, c.lamport)
    meta.count++
    s.trees.set(s.spaceId, meta)
    this.touched.add(s.spaceId)
    s.versionSeq++
    this.batch.puts.push({ store: STORES.changes, key: changeKey(s.spaceId, s.spaceId, c.id), value: c.raw })
    return undefined
  }
}

export interface ApplyOptions {
  /** Where a local write learns which of its ops merge dropped (pinned paths). */
  drops?: WriteRejection[]
  /** Payloads already opened (say by a worker), by change. */
  opened?: Map<Change, ChangePayload>
  /** Changes this replica just signed: never parked (a local write that cannot apply is an error). */
  local?: boolean
  /** Who sent the changes, for the per-origin bound on parked changes. */
  origin?: string
}

/**
 * Applies checked changes, and the parked ones they unblock, in one atomic commit; what still
 * lacks a dependency is parked (unless local). Never call it with unchecked changes.
 */
export async function applyChecked(s: ReplicaState, verified: Change[], report: IngestReport, opts: ApplyOptions = {}): Promise<IngestReport> {
  const b = new ApplyBatch(s, opts.drops, opts.opened)
  // A change that arrives again while parked is tried now; its parked copy goes.
  if (s.parked.size) for (const c of verified) s.parked.drop(c.id)
  /** Ids applied or held by this batch, in order; parked changes waiting for them wake up. */
  const arrived = b.applied
  let woken = 0
  /** Who sent each parked change this batch woke (it parks again under its own origin). */
  const origins = new Map<string, string>()
  b.addPending(verified)
  // ACL records first (changes cite them), then arrival order, which is causal whenever the
  // sender walked its DAG parents first (head sync does). Whatever came ahead of a parent
  // waits for the next pass, in lamport order, where every parent precedes its children; so
  // a batch in any order takes at most a few passes and is never sorted when it need not be.
  let queue = aclFirst(s, verified)
  let sorted = false
  const slicer = s.deps.env.yield ? new Slicer(s) : undefined
  for (;;) {
    while (queue.length) {
      let progress = false
      const next: Change[] = []
      for (const c of queue) {
        const tree = s.treeOf(c)
        // A custodian keeps a derived root a reader sent at once: its id is a hash of the space
        // and seed, and the devices that read it hold it until their own code expects it.
        if (c.treeId === '' && tree !== s.spaceId && c.author === '' && !s.derived.expects(tree) && !s.deps.keyless) {
          // An unsigned derived root from a peer: held until something vouches for it.
          s.derived.hold(c)
          ;(report.held ??= []).push(c.id)
          b.heldIds.push(c.id)
          progress = true
          continue
        }
        if (tree !== s.spaceId && c.treeId !== '') {
          if (!s.trees.has(tree)) materializeHeldRoot(s, b, c, tree, report)
          else if (!s.indexes.has(tree)) await s.loadIndex(tree)
        }
        if (!depsPresent(s, c)) {
          next.push(c)
          continue
        }
        let reason = b.applyOne(c)
        if (reason instanceof Promise) reason = await reason
        if (reason) report.rejected.push({ id: c.id, reason })
        else {
          report.accepted.push(c.id)
          b.applied.push(c.id)
        }
        progress = true
        if (slicer?.due()) await slicer.cut(b, opts.local ?? false)
      }
      if (!progress) break
      queue = next
      if (!sorted) {
        queue.sort(compareChanges)
        sorted = true
      }
    }
    // Parked changes waiting for what this batch applied or held get another try.
    let wake = s.parked.wake(arrived, woken, origins)
    woken = arrived.length
    if (b.heldIds.length) {
      wake = wake.concat(s.parked.wake(b.heldIds, 0, origins))
      b.heldIds.length = 0
    }
    if (wake.length === 0) break
    b.addPending(wake)
    queue = aclFirst(s, queue.concat(wake))
    queue.sort(compareChanges)
    sorted = true
  }
  const missing = new Set<string>()
  for (const c of queue) {
    const waits = missingDeps(s, c)
    // A local change never parks (its write fails instead); parked ones it woke park again.
    const origin = origins.get(c.id) ?? (opts.local ? undefined : (opts.origin ?? ''))
    if (origin !== undefined) s.parked.park(c, origin, waits)
    for (const m of waits) missing.add(m)
  }
  report.missing = [...missing].sort()
  if (b.applied.length > b.committed) await commit(s, b, opts.local ?? false)
  report.voided = b.voided
  return report
}

/**
 * Cuts a long apply into slices, each one atomic commit followed by a turn of the event loop:
 * a sync step of a few thousand changes would otherwise hold the loop for its whole apply
 * (hundreds of milliseconds under load), stalling the HTTP API and every other peer. A slice
 * ends only between two changes, once what it applied is committed and the in-memory state
 * (trees, indexes, record cache, ACL) is exactly what storage holds, so a reader that runs
 * during the turn sees whole slices, never part of one, and nothing uncommitted. Only where the
 * env can yield (see Env.yield): the simulator applies every batch in one piece.
 */
class Slicer {
  private count = 0
  private start: number

  constructor(private readonly s: ReplicaState) {
    this.start = s.deps.env.now()
  }

  /** Called after each change judged: the slice has done its share of work. */
  due(): boolean {
    const n = ++this.count
    const { limits } = this.s
    if (n >= limits.applySliceChanges) return true
    // The clock is read every 8 changes: a few µs of work each, well under the budget.
    return (n & 7) === 0 && this.s.deps.env.now() - this.start >= limits.applySliceMs
  }

  async cut(b: ApplyBatch, local: boolean) {
    if (b.applied.length > b.committed) await commit(this.s, b, local)
    b.nextSlice()
    await this.s.deps.env.yield!()
    this.count = 0
    this.start = this.s.deps.env.now()
  }
}

/**
 * `c` builds on a tree this replica does not have: if that tree's derived root is held and
 * `c` may vouch for it, the root applies first, in this batch.
 */
function materializeHeldRoot(s: ReplicaState, b: ApplyBatch, c: Change, tree: string, report: IngestReport) {
  const root = s.derived.peek(tree)
  if (!root || !mayBuildOnDerivedRoot(s, c, tree)) return
  s.derived.take(tree)
  const reason = b.applyOne(root) as RejectReason | undefined
  if (reason) report.rejected.push({ id: root.id, reason })
  else {
    report.accepted.push(root.id)
    b.applied.push(root.id)
  }
}

/** Writes the batch, then rebuilds what a removal voided and tells the listeners. */
async function commit(s: ReplicaState, b: ApplyBatch, local: boolean) {
  const { batch } = b
  for (const t of b.touched) batch.puts.push({ store: STORES.trees, key: treeKey(s.spaceId, t), value: encodeCanonical(s.trees.get(t)) })
  const numbered = s.records.flush(batch, b.dirty)
  for (const t of s.toRebuild) batch.puts.push({ store: STORES.meta, key: rebuildKey(s.spaceId, t), value: new Uint8Array(0) })
  batch.puts.push({ store: STORES.meta, key: versionSeqKey(s.spaceId), value: encodeCanonical(s.versionSeq) })
  if (!s.spaceMetaStored) batch.puts.push({ store: STORES.meta, key: spaceMetaKey(s.spaceId), value: encodeCanonical({ spaceId: s.spaceId }) })
  await s.deps.storage.commit(batch)
  s.spaceMetaStored = true
  s.committedSeq = s.versionSeq
  s.records.committed(b.dirty, numbered)
  const rebuilt = [...s.toRebuild]
  s.toRebuild.clear()
  for (const t of rebuilt) await rebuildTree(s, t)
  s.records.trim()
  const info: CommitInfo = {
    versionId: String(s.committedSeq),
    local,
    changeIds: b.applied.slice(b.committed),
    treeIds: [...new Set([...b.touched, ...rebuilt])],
    records: [...s.touches.values()],
    rebuiltTrees: rebuilt,
  }
  s.touches = new Map()
  s.emit(info)
}

/**
 * Re-derives a tree's records from its DAG. Needed only when an ACL record or a witnessed
 * change arrives after changes whose voidness it changes were applied; the marker written in
 * the same commit makes a crash in between finish the job on the next open.
 */
export async function rebuildTree(s: ReplicaState, tree: string) {
  const meta = s.trees.get(tree)
  if (!meta) return
  if (s.deps.keyless) {
    // Nothing was materialized, so there is nothing to derive again: the tree's changes stay.
    await s.deps.storage.commit({ puts: [], dels: [{ store: STORES.meta, key: rebuildKey(s.spaceId, tree) }] })
    return
  }
  const idx = await s.loadIndex(tree)
  const nodes = idx.missingFrom([])
  const raws = await s.deps.storage.getMany(
    STORES.changes,
    nodes.map((n) => changeKey(s.spaceId, tree, n.id)),
  )
  const b = new ApplyBatch(s)
  const prefix = treePrefix(s.spaceId, tree)
  s.records.markTreeDeleted(tree, prefix, await storedRecordKeys(s, prefix), b.dirty)
  meta.deleted = undefined
  s.versionSeq++
  for (let i = 0; i < nodes.length; i++) {
    const raw = raws[i]
    if (!raw || nodes[i].prevIds.length === 0) continue
    const c = decodeChange(raw)
    if (isVoid(s, c, tree)) continue
    const rk = s.keyring.get(c.readKeyId)
    if (!rk) continue
    // A change that joined while void was never opened: its payload may not open at all.
    let payload: ChangePayload
    try {
      payload = decodeCanonical<ChangePayload>(open(rk, c.payload, undefined, s.deps.crypto.aead))
      checkPayload(payload)
    } catch {
      continue
    }
    await b.applyOps(tree, meta, c, payload)
  }
  const batch: WriteBatch = { puts: [], dels: [{ store: STORES.meta, key: rebuildKey(s.spaceId, tree) }] }
  const numbered = s.records.flush(batch, b.dirty)
  batch.puts.push({ store: STORES.trees, key: treeKey(s.spaceId, tree), value: encodeCanonical(meta) })
  batch.puts.push({ store: STORES.meta, key: versionSeqKey(s.spaceId), value: encodeCanonical(s.versionSeq) })
  await s.deps.storage.commit(batch)
  s.committedSeq = s.versionSeq
  s.records.committed(b.dirty, numbered)
  s.records.trim()
}

async function storedRecordKeys(s: ReplicaState, prefix: string): Promise<string[]> {
  return (await s.deps.storage.scan(STORES.records, { prefix })).map(([k]) => k)
}

function objectTreeIds(s: ReplicaState): string[] {
  return [...s.trees.keys()].filter((t) => t !== s.spaceId).sort()
}

function aclFirst(s: ReplicaState, changes: Change[]): Change[] {
  const acl: Change[] = []
  const rest: Change[] = []
  for (const c of changes) (c.treeId === s.spaceId || c.id === s.spaceId ? acl : rest).push(c)
  if (acl.length === 0) return rest
  acl.sort(compareChanges)
  return acl.concat(rest)
}

/** missingDeps(c).length === 0, without building the list (asked once per applied change). */
function depsPresent(s: ReplicaState, c: Change): boolean {
  const tree = s.treeOf(c)
  if (tree === s.spaceId) {
    for (const p of c.prevIds) if (!s.acl.has(p)) return false
    const dep = c.id === s.spaceId ? undefined : aclRecordDep(c)
    return dep === undefined || s.acl.has(dep)
  }
  if (c.aclHeadId !== '' && !s.acl.has(c.aclHeadId)) return false
  if (c.treeId !== '') {
    const idx = s.indexes.get(tree)
    if (!s.trees.has(tree) || !idx) return false
    for (const p of c.prevIds) if (!idx.has(p)) return false
  }
  return true
}

/** Ids this change needs before it can be judged: parents, and the ACL record it cites. */
function missingDeps(s: ReplicaState, c: Change): string[] {
  const out: string[] = []
  const tree = s.treeOf(c)
  if (tree === s.spaceId) {
    for (const p of c.prevIds) if (!s.acl.has(p)) out.push(p)
    const dep = c.id === s.spaceId ? undefined : aclRecordDep(c)
    if (dep !== undefined && !s.acl.has(dep) && !out.includes(dep)) out.push(dep)
    return out
  }
  if (c.aclHeadId !== '' && !s.acl.has(c.aclHeadId)) out.push(c.aclHeadId)
  if (c.treeId !== '') {
    const idx = s.indexes.get(tree)
    if (!s.trees.has(tree) || !idx) return [...out, ...c.prevIds]
    for (const p of c.prevIds) if (!idx.has(p)) out.push(p)
  }
  return out
}

function nextHeads(heads: string[], c: Change): string[] {
  // A linear history, by far the common case: the one head is the one parent.
  if (heads.length === 1 && c.prevIds.length === 1 && heads[0] === c.prevIds[0]) return [c.id]
  const out = heads.filter((h) => !c.prevIds.includes(h))
  out.push(c.id)
  return out.sort()
}
