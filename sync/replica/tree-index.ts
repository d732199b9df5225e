/** What sync and ingest need of a change without its payload. */
export interface TreeNode {
  id: string
  lamport: number
  prevIds: string[]
  aclHeadId: string
  author: string
  timestamp: number
}

/** In-memory DAG of one tree: membership, parents, and reachability for head sync. */
export class TreeIndex {
  private readonly nodes = new Map<string, TreeNode>()

  add(n: TreeNode) {
    this.nodes.set(n.id, n)
  }
  has(id: string) {
    return this.nodes.has(id)
  }
  get(id: string) {
    return this.nodes.get(id)
  }
  get size() {
    return this.nodes.size
  }
  ids(): IterableIterator<string> {
    return this.nodes.keys()
  }

  /** Every known change reachable from `heads` (inclusive); unknown heads are skipped. */
  ancestors(heads: readonly string[]): Set<string> {
    const seen = new Set<string>()
    const stack = heads.filter((h) => this.nodes.has(h))
    while (stack.length) {
      const id = stack.pop()!
      if (seen.has(id)) continue
      seen.add(id)
      for (const p of this.nodes.get(id)!.prevIds) if (!seen.has(p) && this.nodes.has(p)) stack.push(p)
    }
    return seen
  }

  /**
   * Changes the holder of `theirHeads` lacks: everything not reachable from those of their
   * heads we know, in an order where parents come first (lamport, then id).
   */
  missingFrom(theirHeads: readonly string[]): TreeNode[] {
    const have = this.ancestors(theirHeads)
    const out: TreeNode[] = []
    for (const n of this.nodes.values()) if (!have.has(n.id)) out.push(n)
    return out.sort((a, b) => a.lamport - b.lamport || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
  }
}
