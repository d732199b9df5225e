import { decodeCanonical } from '../core/encoding.ts'
import type { TreeMeta } from './replica-state.ts'

/**
 * The replica's TreeMeta per tree, loaded from storage as their stored bytes and decoded on
 * first use. Opening a 100k-object space decoded every meta before anything could answer
 * (about 0.35 s of a 0.75 s replica load, bench/search.ts `restart`); most are needed only
 * later (the object rows' background load, a peer's head sync), and some not at all. A meta
 * decoded once stays decoded: callers change it in place (apply-batch.ts).
 */
export class TreeMetas {
  private readonly m = new Map<string, TreeMeta | Uint8Array>()

  get(tree: string): TreeMeta | undefined {
    const v = this.m.get(tree)
    if (!(v instanceof Uint8Array)) return v
    const meta = decodeCanonical<TreeMeta>(v)
    this.m.set(tree, meta)
    return meta
  }

  set(tree: string, meta: TreeMeta): void {
    this.m.set(tree, meta)
  }

  /** A meta as storage holds it, decoded at its first `get`. */
  setStored(tree: string, bytes: Uint8Array): void {
    this.m.set(tree, bytes)
  }

  has(tree: string): boolean {
    return this.m.has(tree)
  }

  keys(): IterableIterator<string> {
    return this.m.keys()
  }

  get size(): number {
    return this.m.size
  }
}
