import type { SpaceReplica } from '../replica/space-replica.ts'
import { SYNC_LIMITS } from './limits.ts'
import type { HeadsItem } from './messages.ts'

/**
 * What one side holds of a tree that the other lacks, from the DAG alone: the heads item that
 * describes our side (heads and a sample of history), the changes not reachable from what the
 * peer listed, and the plan of changes to send, ACL tree first, parents before children.
 */

export interface DagView {
  size: number
  has(id: string): boolean
  parents(id: string): string[]
  nodes(): Iterable<{ id: string; lamport: number }>
  /** Identity of the underlying DAG object, for caching. */
  key: object
  /**
   * For a tree (not the ACL log): its heads, each change's lamport (above every parent's: ingest
   * refuses anything else) and its changes after the first `k` in the order they were added
   * (DAGs only grow). Head sync then works near the tips instead of walking the whole DAG.
   */
  tips?: { heads(): string[]; lamport(id: string): number; nodesAfter(k: number): Iterable<{ id: string; lamport: number }> }
}

export class TreeDiff {
  private readonly orderCache = new WeakMap<object, { size: number; list: Array<{ id: string; lamport: number }> }>()

  /** A tree's DAG as head sync needs it (the ACL tree from the ACL log), or undefined. */
  async dagOf(r: SpaceReplica, tree: string): Promise<DagView | undefined> {
    if (tree === r.spaceId) {
      const e = r.acl.entries
      return { size: e.size, has: (id) => e.has(id), parents: (id) => e.get(id)!.prevIds, nodes: () => e.values(), key: e }
    }
    if (!r.treeMeta(tree)) return undefined
    const idx = await r.treeIndex(tree)
    return {
      size: idx.size,
      has: (id) => idx.has(id),
      parents: (id) => idx.get(id)!.prevIds,
      nodes: () => [...idx.ids()].map((id) => idx.get(id)!),
      key: idx,
      tips: { heads: () => r.heads(tree), lamport: (id) => idx.get(id)!.lamport, nodesAfter: (k) => nodesAfter(idx, k) },
    }
  }

  /** How many changes of a tree we hold: what walking it costs, in WORK_UNITS.dagNode (1 for a tree we lack). */
  async sizeOf(r: SpaceReplica, tree: string): Promise<number> {
    if (tree === r.spaceId) return Math.max(1, r.acl.entries.size)
    if (!r.treeMeta(tree)) return 1
    return Math.max(1, (await r.treeIndex(tree)).size)
  }

  /**
   * The DAG's changes in (lamport, id) order, cached until the DAG grows (DAGs only grow). A
   * tree's list then takes in only the changes added since (the newest mostly go at the end),
   * rather than sorting the whole DAG again on every exchange.
   */
  ordered(dag: DagView): Array<{ id: string; lamport: number }> {
    const hit = this.orderCache.get(dag.key)
    if (hit && hit.size === dag.size) return hit.list
    if (hit && hit.size < dag.size && dag.tips) {
      const added = [...dag.tips.nodesAfter(hit.size)].map((n) => ({ id: n.id, lamport: n.lamport })).sort(byLamport)
      const list = hit.list
      if (list.length === 0 || byLamport(list[list.length - 1], added[0]) < 0) for (const n of added) list.push(n)
      else hit.list = mergeSorted(list, added)
      hit.size = dag.size
      return hit.list
    }
    const list = [...dag.nodes()].map((n) => ({ id: n.id, lamport: n.lamport })).sort(byLamport)
    this.orderCache.set(dag.key, { size: dag.size, list })
    return list
  }

  /** Our heads of a tree, with the sample of our history (see HeadsItem). */
  async headsItem(r: SpaceReplica, tree: string): Promise<HeadsItem> {
    const heads = r.heads(tree).slice(0, SYNC_LIMITS.maxHeadsPerTree)
    const dag = await this.dagOf(r, tree)
    const have: string[] = []
    if (dag) {
      const list = this.ordered(dag)
      for (let k = 1; k <= list.length && have.length < SYNC_LIMITS.maxHaveSample; k *= 2) have.push(list[list.length - k].id)
    }
    return { treeId: tree, heads, have }
  }

  /**
   * What the holder of `theirHeads` (and of the sampled `theirHave`) lacks of a tree: every change
   * not reachable from those of them we know. And whether we lack some of their heads.
   */
  async compareHeads(r: SpaceReplica, tree: string, theirHeads: string[], theirHave: string[]): Promise<{ missing: string[]; unknown: boolean }> {
    const dag = await this.dagOf(r, tree)
    if (!dag) return { missing: [], unknown: theirHeads.length > 0 }
    const near = dag.tips ? missingNearTips(dag, dag.tips, [...theirHeads, ...theirHave]) : undefined
    if (near) return { missing: near, unknown: theirHeads.some((h) => !dag.has(h)) }
    const known = new Set<string>()
    const stack = [...theirHeads, ...theirHave].filter((h) => dag.has(h))
    while (stack.length) {
      const id = stack.pop()!
      if (known.has(id)) continue
      known.add(id)
      for (const p of dag.parents(id)) if (!known.has(p) && dag.has(p)) stack.push(p)
    }
    const missing =
      known.size === dag.size
        ? []
        : this.ordered(dag)
            .filter((n) => !known.has(n.id))
            .map((n) => n.id)
    return { missing, unknown: theirHeads.some((h) => !dag.has(h)) }
  }

  async planWholeTree(r: SpaceReplica, tree: string, plan: ChangePlan) {
    plan.add(tree, (await this.compareHeads(r, tree, [], [])).missing)
  }

  async planWholeSpace(r: SpaceReplica, plan: ChangePlan) {
    await this.planWholeTree(r, r.spaceId, plan)
    for (const t of r.treeIds()) await this.planWholeTree(r, t, plan)
  }
}

/** Changes to send, per tree in plan order (ACL tree first), parents before children. */
export class ChangePlan {
  private readonly trees = new Map<string, string[]>()
  private readonly seen = new Set<string>()

  constructor(aclTree: string) {
    this.trees.set(aclTree, [])
  }

  get empty() {
    return this.seen.size === 0
  }

  get size() {
    return this.seen.size
  }

  add(tree: string, ids: readonly string[]) {
    let list = this.trees.get(tree)
    if (!list) this.trees.set(tree, (list = []))
    for (const id of ids) {
      if (this.seen.has(id)) continue
      this.seen.add(id)
      list.push(id)
    }
  }

  async fetch(r: SpaceReplica): Promise<Uint8Array[]> {
    const out: Uint8Array[] = []
    for await (const raw of this.read(r)) out.push(raw)
    return out
  }

  /**
   * The planned changes' bytes, read from storage a chunk at a time: a chunk is sized by the
   * bytes of the changes read so far, so about `chunkBytes` are held at once whatever the
   * changes weigh.
   */
  async *read(r: SpaceReplica, chunkBytes = 1024 * 1024): AsyncGenerator<Uint8Array> {
    for (const [tree, ids] of this.trees) {
      // Sizes are known only once read: start with one change per tree, and grow the chunk
      // (at most doubling) while the changes read so far say it stays within chunkBytes.
      let n = 1
      let bytes = 0
      let count = 0
      for (let i = 0; i < ids.length;) {
        const part = ids.slice(i, i + n)
        i += part.length
        const got = await r.rawChanges(tree, part)
        for (const { raw } of got) {
          bytes += raw.length
          count++
        }
        for (const { raw } of got) yield raw
        const avg = count ? bytes / count : 1024
        n = Math.max(1, Math.min(2 * n, 4096, Math.floor(chunkBytes / Math.max(avg, 1))))
      }
    }
  }
}

const byLamport = (a: { lamport: number; id: string }, b: { lamport: number; id: string }) => a.lamport - b.lamport || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)

/** The changes added to a tree's index after its first `k` (a Map keeps insertion order). */
function* nodesAfter(idx: { ids(): IterableIterator<string>; get(id: string): { id: string; lamport: number } | undefined }, k: number) {
  let i = 0
  for (const id of idx.ids()) if (i++ >= k) yield idx.get(id)!
}

function mergeSorted<T extends { lamport: number; id: string }>(a: T[], b: T[]): T[] {
  const out: T[] = new Array<T>(a.length + b.length)
  let i = 0
  let j = 0
  let k = 0
  while (i < a.length && j < b.length) out[k++] = byLamport(a[i], b[j]) <= 0 ? a[i++] : b[j++]
  while (i < a.length) out[k++] = a[i++]
  while (j < b.length) out[k++] = b[j++]
  return out
}

const THEIRS = 1
const OURS = 2
const OURS_DONE = 3

/**
 * What compareHeads' whole walk finds (every change not reachable from `theirs`, in (lamport,
 * id) order), walking down from both sides' tips at once, newest lamport first: a change reached
 * from one of theirs is theirs, and so are its parents; one reached only from our heads is
 * missing on their side. Once no change of ours is left to visit, everything below is theirs, so
 * two peers a few changes apart touch only those changes and the ones around them, whatever the
 * tree's size. A parent is always visited after its children, since its lamport is lower; a tree
 * where that does not hold, or where a change found missing turns out theirs, gives undefined
 * and the caller walks the whole DAG.
 */
export function missingNearTips(
  dag: Pick<DagView, 'has' | 'parents' | 'size'>,
  tips: { heads(): string[]; lamport(id: string): number },
  theirs: readonly string[],
): string[] | undefined {
  const color = new Map<string, number>()
  const heap: Array<{ id: string; lamport: number }> = []
  let oursQueued = 0
  const push = (id: string, lamport: number) => {
    heap.push({ id, lamport })
    for (let i = heap.length - 1; i > 0;) {
      const up = (i - 1) >> 1
      if (heap[up].lamport >= heap[i].lamport) break
      ;[heap[up], heap[i]] = [heap[i], heap[up]]
      i = up
    }
  }
  const pop = () => {
    const top = heap[0]
    const last = heap.pop()!
    if (heap.length > 0) {
      heap[0] = last
      for (let i = 0; ;) {
        const l = 2 * i + 1
        const r = l + 1
        let m = i
        if (l < heap.length && heap[l].lamport > heap[m].lamport) m = l
        if (r < heap.length && heap[r].lamport > heap[m].lamport) m = r
        if (m === i) break
        ;[heap[m], heap[i]] = [heap[i], heap[m]]
        i = m
      }
    }
    return top
  }
  for (const id of theirs) {
    if (!dag.has(id) || color.has(id)) continue
    color.set(id, THEIRS)
    push(id, tips.lamport(id))
  }
  for (const id of tips.heads()) {
    if (!dag.has(id) || color.has(id)) continue
    color.set(id, OURS)
    oursQueued++
    push(id, tips.lamport(id))
  }
  const missing: Array<{ id: string; lamport: number }> = []
  let visited = 0
  while (oursQueued > 0 && heap.length > 0) {
    // Never more work than the whole walk: past it, something is off.
    if (++visited > 2 * dag.size + 2) return undefined
    const n = pop()
    const c = color.get(n.id)!
    if (c === OURS) {
      oursQueued--
      color.set(n.id, OURS_DONE)
      missing.push(n)
    }
    for (const p of dag.parents(n.id)) {
      if (!dag.has(p)) continue
      const lp = tips.lamport(p)
      if (lp >= n.lamport) return undefined
      const pc = color.get(p)
      if (c === THEIRS) {
        if (pc === undefined) {
          color.set(p, THEIRS)
          push(p, lp)
        } else if (pc === OURS) {
          color.set(p, THEIRS)
          oursQueued--
        } else if (pc === OURS_DONE) return undefined
      } else if (pc === undefined) {
        color.set(p, OURS)
        oursQueued++
        push(p, lp)
      }
    }
  }
  return missing.sort(byLamport).map((n) => n.id)
}
