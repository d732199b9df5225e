import type { Change } from '../dag/change.ts'

const MAX_PARKED = 20_000

/** Changes held back until what they depend on (parents, cited ACL record) arrives. */
export class ParkedChanges {
  private readonly byId = new Map<string, Change>()

  get size() {
    return this.byId.size
  }

  /** Removes and returns every parked change not in `skip`, to be tried again. */
  takeAll(skip: Set<string>): Change[] {
    const out: Change[] = []
    for (const c of this.byId.values()) if (!skip.has(c.id)) out.push(c)
    this.byId.clear()
    return out
  }

  park(c: Change) {
    if (this.byId.size < MAX_PARKED) this.byId.set(c.id, c)
  }
}
