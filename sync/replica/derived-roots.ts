import { REPLICA_LIMITS } from '../core/limits.ts'
import { detached, type Change } from '../dag/change.ts'

/**
 * Derived object roots are unsigned: anyone can make one for any seed. So one from a peer
 * materializes only when this replica expects its seed (local code created or asked for it)
 * or when a signed change by someone who may write builds on it (then both apply). Until
 * then it waits here, bytes-bounded, oldest evicted first.
 */
export class DerivedRoots {
  private readonly expected = new Set<string>()
  /** In arrival order: the first is the oldest. */
  private readonly held = new Map<string, Change>()
  private total = 0

  constructor(private readonly maxBytes: number = REPLICA_LIMITS.maxDerivedCandidateBytes) {}

  /** Local code will create or wants the derived object `id`: accept its root from anyone. */
  expect(id: string) {
    this.expected.add(id)
  }
  expects(id: string): boolean {
    return this.expected.has(id)
  }

  get bytes() {
    return this.total
  }
  get size() {
    return this.held.size
  }

  hold(root: Change) {
    if (this.held.has(root.id) || root.raw.byteLength > this.maxBytes) return
    root = detached(root)
    while (this.total + root.raw.byteLength > this.maxBytes) {
      const [id, oldest] = this.held.entries().next().value!
      this.held.delete(id)
      this.total -= oldest.raw.byteLength
    }
    this.held.set(root.id, root)
    this.total += root.raw.byteLength
  }

  /** The held root of tree `id`, removed from the set. */
  take(id: string): Change | undefined {
    const root = this.held.get(id)
    if (root) {
      this.held.delete(id)
      this.total -= root.raw.byteLength
    }
    return root
  }

  peek(id: string): Change | undefined {
    return this.held.get(id)
  }
}

/** A root of an object tree with no author: its id derives from (space, seed). */
export const isDerivedObjectRoot = (c: Change, spaceId: string) => c.treeId === '' && c.author === '' && c.id !== spaceId
