import type { Role } from '../sync/acl/records.ts'

/** An honest ACL record about a member, stamped with its place in the run's global order. */
export interface MembershipEvent {
  seq: number
  identity: string
  kind: 'add' | 'role' | 'remove'
  role?: Role
  /** The record's change id and its honest author. */
  id: string
  author: string
}

export type StatusAtSeq = 'member' | 'removed' | 'unclear' | 'never'

/**
 * The run's global order of events that matter to the oracle: honest ACL records (when the
 * admin's replica committed them) and hostile crafts (when the adversary made them). A craft
 * made after a member's removal existed here, with no add or role for it since, is void under
 * rule 1 whatever it claims: its id did not exist when the removal was written, so no removal
 * witness can hold it. A craft between a removal and a re-add is "unclear" (the re-add may lose
 * to the removal under rule 2) and is not judged.
 */
export class Timeline {
  private n = 0
  readonly events: MembershipEvent[] = []

  /** The next position in the global order. */
  next(): number {
    return ++this.n
  }

  record(e: Omit<MembershipEvent, 'seq'>): void {
    this.events.push({ ...e, seq: this.next() })
  }

  /** Identities some honest record removed (their own removals may have been void). */
  private targets(): Set<string> {
    return new Set(this.events.filter((e) => e.kind === 'remove').map((e) => e.identity))
  }

  /** Where `identity` stood at `seq`, counting only removals whose author was never removed itself. */
  statusAt(identity: string, seq: number, owner: string): StatusAtSeq {
    const removedAuthors = this.targets()
    const mine = this.events.filter((e) => e.identity === identity && e.seq < seq)
    if (!mine.length) return 'never'
    let lastRemoval = -1
    for (let i = 0; i < mine.length; i++) {
      const e = mine[i]
      if (e.kind === 'remove' && (e.author === owner || !removedAuthors.has(e.author))) lastRemoval = i
    }
    if (lastRemoval < 0) return mine.some((e) => e.kind === 'remove') ? 'unclear' : 'member'
    return mine.slice(lastRemoval + 1).some((e) => e.kind !== 'remove') ? 'unclear' : 'removed'
  }
}
