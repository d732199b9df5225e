import { contentId } from '../crypto/hash.ts'
import { decodeChange } from '../dag/change.ts'
import type { SpaceReplica } from '../replica/space-replica.ts'
import { SYNC_LIMITS } from './limits.ts'
import { isQuestion, type HeadsItem, type Message, type RangeItem, type StepMsg, type SyncMsg } from './messages.ts'
import { bump, type PeerCounters } from './peer-counters.ts'
import { SpaceIndex } from './range-index.ts'
import { answerRanges, describeRange, openFingerprint, rootMatches } from './reconcile.ts'
import { packSteps } from './step-packer.ts'
import { ChangePlan, TreeDiff } from './tree-diff.ts'

/**
 * The space side of head sync: answers `sync` and `step` messages of an authenticated peer
 * (docs/protocol.md section 5), and pushes our own changes to a peer that refused us. Access is
 * decided here, from the peer's account and our ACL state.
 */

export interface SyncHost {
  /** The replica of a space this peer holds, if any. */
  space(spaceId: string): SpaceReplica | undefined | Promise<SpaceReplica | undefined>
  /** Asked when an authenticated peer syncs a space this peer does not hold; undefined refuses. */
  accept?(spaceId: string, identity: string): Promise<SpaceReplica | undefined>
}

interface PushState {
  /** Per space: our pushes of own changes to this peer after it refused us (see pushOwnChanges). */
  pushes: Map<string, { key: string; attempts: number; acked: boolean }>
  /** Pushes awaiting the peer's `done`, by req. */
  acks: Map<number, { spaceId: string; key: string }>
}

export class Responder {
  private readonly indexes = new WeakMap<SpaceReplica, SpaceIndex>()
  private readonly diff = new TreeDiff()
  private readonly pushState = new Map<string, PushState>()

  constructor(private readonly host: SyncHost, private readonly me: string) {}

  indexOf(r: SpaceReplica): SpaceIndex {
    let idx = this.indexes.get(r)
    if (!idx) this.indexes.set(r, (idx = new SpaceIndex(r)))
    return idx
  }

  /** The link went down: its push bookkeeping goes with it. */
  forget(peer: string) {
    this.pushState.delete(peer)
  }

  async held(spaceId: string): Promise<SpaceReplica | undefined> {
    return this.host.space(spaceId)
  }

  private async replicaFor(spaceId: string, identity: string): Promise<SpaceReplica | undefined> {
    const r = await this.host.space(spaceId)
    if (r) return r
    return this.host.accept ? this.host.accept(spaceId, identity) : undefined
  }

  /** A peer may be served when it can read the space at our current ACL (or we hold nothing yet). */
  private mayRead(r: SpaceReplica, identity: string): boolean {
    return !r.known || r.acl.current().canRead(identity)
  }

  async onSync(c: PeerCounters, identity: string, m: SyncMsg): Promise<Message[]> {
    const r = await this.replicaFor(m.spaceId, identity)
    if (!r) return [{ type: 'error', spaceId: m.spaceId, req: m.req, code: 'unknown_space' }]
    if (!this.mayRead(r, identity)) {
      c.denied++
      return [{ type: 'error', spaceId: m.spaceId, req: m.req, code: 'not_member' }]
    }
    const index = this.indexOf(r).current()
    if (rootMatches(index, m.fp, m.count)) return [{ type: 'done', spaceId: m.spaceId, req: m.req }]
    if (m.count === 0 && r.known) {
      // The peer holds nothing of the space: push it whole, ACL first.
      const plan = new ChangePlan(r.spaceId)
      await this.diff.planWholeSpace(r, plan)
      return packSteps(m.spaceId, m.req, 1, [], [], [], await plan.fetch(r), true)
    }
    return packSteps(m.spaceId, m.req, 1, [describeRange(index, m.req, 0, 0)], [], [], [], true)
  }

  async onStep(c: PeerCounters, identity: string, m: StepMsg): Promise<Message[]> {
    const question = isQuestion(m)
    if (m.hop > SYNC_LIMITS.maxHops) {
      bump(c.dropped, 'too_many_steps')
      return question ? [{ type: 'error', spaceId: m.spaceId, req: m.req, code: 'too_many_steps' }] : []
    }
    const r = await this.replicaFor(m.spaceId, identity)
    if (!r) return question ? [{ type: 'error', spaceId: m.spaceId, req: m.req, code: 'unknown_space' }] : []
    // Changes first: they may carry the ACL records that make the peer a member here.
    const reask = m.changes.length ? await this.ingest(c, r, m.changes) : new Set<string>()
    if (!this.mayRead(r, identity)) {
      c.denied++
      if (question) return [{ type: 'error', spaceId: m.spaceId, req: m.req, code: 'not_member' }]
      // A refused peer pushing its own changes: acknowledge once nothing of it waits here.
      return m.changes.length && reask.size === 0 ? [{ type: 'done', spaceId: m.spaceId, req: m.req }] : []
    }
    const index = this.indexOf(r).current()
    const plan = new ChangePlan(r.spaceId)
    const heads = new Map<string, HeadsItem>()
    const wants: number[] = []
    let ranges: RangeItem[] = []
    if (m.ranges.length) {
      const ans = answerRanges(index, m.req, m.ranges)
      ranges = ans.reply
      const minePerPos = new Map<number, number>()
      for (const e of ans.mine) minePerPos.set(e.pos, (minePerPos.get(e.pos) ?? 0) + 1)
      for (const e of ans.mine) {
        // The peer lists something else at this position: the same tree with other heads.
        if (ans.theirs.has(e.pos)) heads.set(e.id, await this.diff.headsItem(r, e.id))
        else await this.diff.planWholeTree(r, e.id, plan)
      }
      for (const [pos, n] of ans.theirs) if (n > (minePerPos.get(pos) ?? 0)) wants.push(pos)
    }
    for (const h of m.heads) {
      const { missing, unknown } = await this.diff.compareHeads(r, h.treeId, h.heads, h.have)
      plan.add(h.treeId, missing)
      if (unknown) heads.set(h.treeId, await this.diff.headsItem(r, h.treeId))
    }
    for (const pos of m.wants) for (const t of index.idsAt(pos)) await this.diff.planWholeTree(r, t, plan)
    for (const t of reask) if (!heads.has(t)) heads.set(t, await this.diff.headsItem(r, t))
    return packSteps(m.spaceId, m.req, m.hop + 1, ranges, [...heads.values()], wants, await plan.fetch(r), question)
  }

  /** The `sync` that opens an exchange about a space we hold. */
  async opening(r: SpaceReplica): Promise<{ fp: Uint8Array; count: number }> {
    return openFingerprint(this.indexOf(r).current())
  }

  /** Ingests a peer's changes; returns the trees to ask about again when some wait for parents. */
  private async ingest(c: PeerCounters, r: SpaceReplica, changes: Uint8Array[]): Promise<Set<string>> {
    const items = changes.map((raw) => ({ id: contentId(raw), raw }))
    const rep = await r.ingest(items)
    c.changesIn += items.length
    c.changesAccepted += rep.accepted.length
    for (const x of rep.rejected) bump(c.rejected, x.reason)
    const trees = new Set<string>()
    if (rep.missing.length === 0) return trees
    const settled = new Set([...rep.accepted, ...rep.rejected.map((x) => x.id)])
    for (const it of items) {
      if (settled.has(it.id)) continue
      let tree: string
      try {
        const ch = decodeChange(it.raw)
        tree = ch.treeId === '' ? ch.id : ch.treeId
      } catch {
        continue
      }
      if (await this.holds(r, tree, it.id)) continue
      trees.add(tree)
      // Parents or the cited ACL record are missing: ask about the ACL too, it syncs first.
      trees.add(r.spaceId)
    }
    return trees
  }

  private async holds(r: SpaceReplica, tree: string, id: string): Promise<boolean> {
    if (tree === r.spaceId) return r.acl.has(id)
    if (!r.treeMeta(tree)) return false
    return (await r.treeIndex(tree)).has(id)
  }

  /** The peer's `done` for one of our pushes; false when it acknowledges nothing we pushed. */
  acked(peer: string, spaceId: string, req: number): boolean {
    const st = this.pushState.get(peer)
    const ack = st?.acks.get(req)
    if (!st || !ack || ack.spaceId !== spaceId) return false
    st.acks.delete(req)
    const p = st.pushes.get(spaceId)
    if (p?.key === ack.key) p.acked = true
    return true
  }

  /**
   * A peer refused us as a non-member. If we still hold it to be a member, push it the ACL chain
   * and the changes our account authored (with their ancestors in each tree): writes made before
   * a removal are not lost, and a peer that refused us only because it lacks the ACL record that
   * added us learns it. The peer ingests them (its replica checks each one) and answers `done` once
   * none of them waits there for anything; nothing else comes back. We push again on a later
   * refusal only while the push is not acknowledged or our own changes have grown: at once for
   * the first three attempts, then on the 4th, 8th, 16th... (exponential backoff).
   */
  async pushOwnChanges(peer: string, identity: string, spaceId: string, req: number): Promise<Message[]> {
    const r = await this.host.space(spaceId)
    if (!r || !r.known || !r.acl.current().canRead(identity)) return []
    const plan = new ChangePlan(spaceId)
    // The whole ACL chain goes first: it is readable by every member anyway, our changes cite
    // it, and it may be what the peer lacks to see that we are a member.
    await this.diff.planWholeTree(r, spaceId, plan)
    const own: string[] = [...r.acl.headIds()]
    for (const t of r.treeIds()) {
      const idx = await r.treeIndex(t)
      const mine = [...idx.ids()].filter((id) => idx.get(id)!.author === this.me)
      if (!mine.length) continue
      own.push(...mine)
      const anc = idx.ancestors(mine)
      plan.add(t, idx.missingFrom([]).filter((x) => anc.has(x.id)).map((x) => x.id))
    }
    if (plan.empty) return []
    const key = `${own.length}:${own.sort().join(',')}`
    let ps = this.pushState.get(peer)
    if (!ps) this.pushState.set(peer, (ps = { pushes: new Map(), acks: new Map() }))
    let st = ps.pushes.get(spaceId)
    if (!st || st.key !== key) ps.pushes.set(spaceId, (st = { key, attempts: 0, acked: false }))
    if (st.acked) return []
    const n = ++st.attempts
    if (n > 3 && (n & (n - 1)) !== 0) return []
    if (ps.acks.size >= SYNC_LIMITS.maxOpenExchanges) ps.acks.clear()
    ps.acks.set(req, { spaceId, key })
    return packSteps(spaceId, req, 1, [], [], [], await plan.fetch(r), false)
  }
}
