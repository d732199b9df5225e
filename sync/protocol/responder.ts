import { contentId } from '../crypto/hash.ts'
import { decodeChange } from '../dag/change.ts'
import { readEnvelope } from '../dag/envelope-reader.ts'
import type { SpaceReplica } from '../replica/space-replica.ts'
import type { RawItem } from '../replica/types.ts'
import type { IngestChecks } from '../replica/check-stage.ts'
import { BoundedMap } from './bounded-map.ts'
import { MAX_QUESTIONS_ANSWERED, type Answered, type ExchangeLedger } from './exchange-ledger.ts'
import { PEER_LIMITS, SYNC_LIMITS } from './limits.ts'
import { isQuestion, type HeadsItem, type RangeItem, type StepMsg, type SyncMsg } from './messages.ts'
import { bump, type PeerCounters } from './peer-counters.ts'
import { SpaceRangeIndex } from './range-index.ts'
import { answerRanges, describeRange, openFingerprint, rootMatches } from './reconcile.ts'
import { concat, fixed, NO_REPLY, streamed, type Reply } from './reply.ts'
import { ChangePlan, TreeDiff } from './tree-diff.ts'
import { WorkBudget } from './work-budget.ts'
import type { OfferGate } from './offer-gate.ts'
import { latestRemoval, RemovalNotices } from './removal-notice.ts'

/**
 * The space side of head sync: answers `sync` and `step` messages of an authenticated peer
 * (docs/protocol.md section 5), and pushes our own changes to a peer that refused us.
 *
 * Rights before work: a peer's account must be able to read the space at our ACL state before
 * anything of the space is looked at for it. A refusal is the answer we give for a space we do
 * not hold (`error unknown_space` to a question, nothing to an answer), so it reveals nothing.
 * Changes from a peer that may not read the space are dropped before decoding, except the
 * leading ACL-tree changes of a step (at most maxAclChangesFromNonReader): they are verified
 * record by record against the managers' signatures like any ACL change, and they are how a
 * newly added member proves its membership to a member that lacks the record.
 *
 * One refusal says more: a removed member asking about the space gets, after the refusal, the
 * removal notice (removal-notice.ts): the ACL records up to its removal.
 */

export interface SyncHost {
  /** The replica of a space this peer holds, if any. */
  space(spaceId: string): SpaceReplica | undefined | Promise<SpaceReplica | undefined>
  /**
   * Asked when an authenticated account syncs a space this peer does not hold; undefined
   * refuses. A replica taken this way knows no ACL yet, so it is served to our own account only
   * until its ACL arrives: a host must not take a space for an account it does not trust.
   */
  accept?(spaceId: string, identity: string): Promise<SpaceReplica | undefined>
  /**
   * Accounts besides our own that may sync a space whose ACL we do not know yet. A hub answers
   * the accounts that asked it to keep the space, so that they can bring the ACL; once it is
   * known, the ACL alone decides.
   */
  trusts?(spaceId: string, identity: string): boolean
  /**
   * Custodians of a space: accounts that keep its ciphertext for us without reading it (our
   * hubs, docs/hub.md). They sync it as a reader would; every change they bring is checked as
   * any peer's is.
   */
  custodian?(spaceId: string, identity: string): boolean
  /**
   * Whether we take `count` changes (`bytes` in all) of a space from an account now: a hub's
   * quotas. Refused changes are dropped unread (counted as dropped `over_quota`, not a fault);
   * the sender offers them again in a later exchange.
   */
  admitChanges?(spaceId: string, identity: string, count: number, bytes: number): boolean
}

interface PushState {
  /** Per space: our pushes of own changes to this peer after it refused us (see pushOwnChanges). */
  pushes: Map<string, { key: string; attempts: number; acked: boolean }>
  /** Pushes awaiting the peer's `done`, by req. */
  acks: Map<number, { spaceId: string; key: string }>
}

export class Responder {
  private readonly indexes = new WeakMap<SpaceReplica, SpaceRangeIndex>()
  private readonly diff = new TreeDiff()
  private readonly pushState = new Map<string, PushState>()
  private readonly notices: RemovalNotices

  /**
   * Per peer, answer steps whose check stage started before their turn (checkAhead), with the
   * items they check, oldest first: at most two, the step being handled (told of before its
   * turn came) and the next in line. A turn takes its own over and drops any older one.
   */
  private readonly checked = new BoundedMap<string, Array<{ m: StepMsg; r: SpaceReplica; items: RawItem[]; checks: IngestChecks }>>(PEER_LIMITS.maxPeerCounters)

  /** Per replica, ingests of answer steps still running (at most `ingestAhead`). */
  private readonly ahead = new WeakMap<SpaceReplica, Array<Promise<unknown>>>()

  constructor(
    private readonly host: SyncHost,
    private readonly me: string,
    private readonly ledger: ExchangeLedger,
    private readonly ingestAhead = 0,
    private readonly onError: (err: unknown) => void = () => undefined,
    private readonly offers?: OfferGate,
    now: () => number = Date.now,
  ) {
    this.notices = new RemovalNotices(now)
  }

  /** Waits for the answer steps still ingesting into a replica: what follows sees their changes. */
  private async settled(r: SpaceReplica) {
    const list = this.ahead.get(r)
    while (list?.length) await list[0]
  }

  /**
   * Ingests an answer step in the background, keeping at most `ingestAhead` running: the next
   * step's decoding and signature checks overlap this one's apply. What it would ask again
   * (changes waiting for parents) is left to the next exchange, which finds those trees differ.
   */
  private async ingestBehind(c: PeerCounters, peer: string, identity: string, r: SpaceReplica, changes: Uint8Array[]) {
    let list = this.ahead.get(r)
    if (!list) this.ahead.set(r, (list = []))
    const l = list
    const job: Promise<unknown> = this.ingest(c, peer, identity, r, changes).catch((err: unknown) => {
      this.onError(err)
      bump(c.dropped, 'internal')
    })
    l.push(job)
    void job.finally(() => l.splice(l.indexOf(job), 1))
    while (l.length > this.ingestAhead) await l[0]
  }

  indexOf(r: SpaceReplica): SpaceRangeIndex {
    let idx = this.indexes.get(r)
    if (!idx) this.indexes.set(r, (idx = new SpaceRangeIndex(r)))
    return idx
  }

  /**
   * Starts the check stage of a peer's step before its turn (SyncSession.upcoming): only a plain
   * answer step carrying changes, from an account that may read the space at our ACL state now,
   * within the hop limit, for a replica held now. Its turn judges everything again (rights,
   * known changes, the hop) and applies only what passed; checks it does not take are wasted
   * work, one step per peer at most. True when the checks started.
   */
  checkAhead(peer: string, identity: string, m: StepMsg): boolean {
    if (isQuestion(m) || m.changes.length === 0 || m.hop > SYNC_LIMITS.maxHops) return false
    const r = this.host.space(m.spaceId)
    if (!r || r instanceof Promise || !this.mayRead(r, identity)) return false
    const items: RawItem[] = m.changes.map((raw) => ({ raw }))
    let list = this.checked.get(peer)
    if (!list) this.checked.set(peer, (list = []))
    if (list.length >= 2) list.shift()
    list.push({ m, r, items, checks: r.checkAhead(items) })
    return true
  }

  /** We open an exchange about a space with a peer we hold to be a reader of it: the link is admitted (RemovalNotices.admit). */
  admitted(peer: string, spaceId: string) {
    this.notices.admit(peer, spaceId)
  }

  /**
   * The removal notice to send unasked to a peer admitted to the space on this link whose
   * account's removal now takes effect here (RemovalNotices.push): answer steps under `req`, a
   * number outside the peer's exchanges, as a push. Undefined when none is due.
   */
  async removalNotice(peer: string, identity: string, spaceId: string, req: number): Promise<Reply | undefined> {
    const r = await this.host.space(spaceId)
    if (!r) return undefined
    await this.settled(r)
    if (this.mayRead(r, identity)) return undefined
    const plan = this.notices.push(r, peer, identity)
    return plan ? streamed(r, spaceId, req, 1, [], [], [], plan, false) : undefined
  }

  /**
   * Changes just written here, sent unasked to a connected reader as answer steps under `req`
   * (a number outside the peer's exchanges): the peer ingests them with every check a round's
   * step gets, and the round that follows finds the two sides in sync at its first message.
   * Undefined when the peer may not read the space (the same rule as opening a round), when our
   * own removal takes effect here, or when none of the changes is held.
   */
  async lonePush(identity: string, spaceId: string, req: number, changeIds: readonly string[], treeIds: readonly string[]): Promise<Reply | undefined> {
    const r = await this.host.space(spaceId)
    if (!r || !r.known) return undefined
    await this.settled(r)
    if (!this.mayRead(r, identity) || this.removedHere(r)) return undefined
    const plan = new ChangePlan(spaceId)
    const wanted = new Set(changeIds)
    for (const t of treeIds) {
      const idx = await r.treeIndex(t)
      plan.add(
        t,
        changeIds.filter((id) => wanted.has(id) && idx.has(id)),
      )
    }
    return plan.empty ? undefined : streamed(r, spaceId, req, 1, [], [], [], plan, false)
  }

  /** The link went down: its push bookkeeping goes with it. */
  forget(peer: string) {
    this.checked.delete(peer)
    this.pushState.delete(peer)
    this.notices.forget(peer)
  }

  /**
   * Our own account's removal from a space takes effect in the ACL we hold: every reader refuses
   * us now, so the scheduler asks only with backoff (SyncSession.mayOpen). We still push after a
   * refusal: our ACL records from before the removal (an admin's) may be held nowhere else.
   */
  removedHere(r: SpaceReplica): boolean {
    return latestRemoval(r, this.me) !== undefined
  }

  async held(spaceId: string): Promise<SpaceReplica | undefined> {
    return this.host.space(spaceId)
  }

  /**
   * Whether an account may learn anything of a space we hold: it can read it at our current ACL.
   * A replica that knows no ACL yet (taken for another device of our account) is our account's
   * only.
   */
  mayRead(r: SpaceReplica, identity: string): boolean {
    if (this.host.custodian?.(r.spaceId, identity)) return true
    if (!r.known) return identity === this.me || this.host.trusts?.(r.spaceId, identity) === true
    return r.acl.current().canRead(identity)
  }

  /** The refusal, the same as for a space we do not hold. */
  private unknown(m: SyncMsg | StepMsg): Reply {
    return fixed([{ type: 'error', spaceId: m.spaceId, req: m.req, code: 'unknown_space' }])
  }

  async onSync(c: PeerCounters, peer: string, identity: string, m: SyncMsg): Promise<Reply> {
    let r = await this.host.space(m.spaceId)
    if (!r && this.host.accept) r = await this.host.accept(m.spaceId, identity)
    if (!r) {
      // Another account asks about a space we do not hold: it may have added us. The host hears
      // of it (bounded, detached); the peer's answer is the same either way. A sender holding
      // nothing of the space (count 0: a replica with no ACL yet, itself fetching it) can have
      // added nobody: offering on it would spread empty replicas from peer to peer.
      if (identity !== this.me && m.count > 0) this.offers?.offer(m.spaceId, identity, peer)
      return this.unknown(m)
    }
    await this.settled(r)
    if (!this.mayRead(r, identity)) {
      c.denied++
      // A removed member: the refusal as for anyone, then the records of its removal (answer
      // steps: the peer asks nothing back, and nothing of the space's trees, heads or size goes
      // out). The refusal first, so the peer still pushes what only it holds (pushOwnChanges).
      const notice = this.notices.plan(r, peer, identity)
      if (notice) return concat([this.unknown(m), streamed(r, m.spaceId, m.req, 1, [], [], [], notice, false)])
      return this.unknown(m)
    }
    if (r.known) this.notices.admit(peer, r.spaceId)
    const index = this.indexOf(r).current()
    if (rootMatches(index, m.fp, m.count)) return fixed([{ type: 'done', spaceId: m.spaceId, req: m.req }])
    // The peer may ask back within this exchange; its questions are counted here.
    this.ledger.answering(peer, m.spaceId, m.req)
    if (m.count === 0 && r.known) {
      // The peer holds nothing of the space: push it whole, ACL first.
      const plan = new ChangePlan(r.spaceId)
      await this.diff.planWholeSpace(r, plan)
      return streamed(r, m.spaceId, m.req, 1, [], [], [], plan, true)
    }
    return streamed(r, m.spaceId, m.req, 1, [describeRange(index, m.req, 0, 0)], [], [], new ChangePlan(r.spaceId), true)
  }

  async onStep(c: PeerCounters, peer: string, identity: string, m: StepMsg): Promise<Reply> {
    const question = isQuestion(m)
    const r = await this.host.space(m.spaceId)
    if (!r) return question ? this.unknown(m) : NO_REPLY
    let changes = m.changes
    // A plain answer from a reader may ingest while the next message is read; anything else
    // waits until what came before it is in.
    if (!question && this.ingestAhead > 0 && changes.length && m.hop <= SYNC_LIMITS.maxHops && this.mayRead(r, identity)) {
      await this.ingestBehind(c, peer, identity, r, changes)
      return NO_REPLY
    }
    await this.settled(r)
    let pushed = false
    if (!this.mayRead(r, identity)) {
      if (question) {
        c.denied++
        if (changes.length) bump(c.rejected, 'not_reader', changes.length)
        return this.unknown(m)
      }
      // An answer from a peer we do not hold to be a reader: only the ACL records it leads with.
      const lead = aclLead(r.spaceId, changes)
      if (lead > 0) await this.ingest(c, peer, identity, r, changes.slice(0, lead), true)
      changes = changes.slice(lead)
      if (!this.mayRead(r, identity)) {
        c.denied++
        if (changes.length) bump(c.rejected, 'not_reader', changes.length)
        return NO_REPLY
      }
      // Those records made it a reader here (a member we had not learned of, or the holder of
      // a space we had asked for): go on. A push gets its acknowledgement; an answer in an
      // exchange we opened needs none.
      pushed = !this.ledger.get(peer, m.req)
      if (changes.length === 0) return pushed ? fixed([{ type: 'done', spaceId: m.spaceId, req: m.req }]) : NO_REPLY
    }
    // The sender's hop is only informative: the receiver counts the questions it answers.
    if (m.hop > SYNC_LIMITS.maxHops) return this.tooManySteps(c, m, question)
    let ex: Answered | undefined
    if (question) {
      ex = this.ledger.answered(peer, m.spaceId, m.req)
      if (!ex) {
        // Not an exchange either side opened (or one long forgotten): nothing to continue.
        bump(c.dropped, 'stale')
        return NO_REPLY
      }
      if (++ex.questions > MAX_QUESTIONS_ANSWERED) return this.tooManySteps(c, m, question)
    }
    const reask = changes.length ? await this.ingest(c, peer, identity, r, changes) : new Set<string>()
    // Rights again before anything goes back: the step may have brought the ACL record that
    // removes the peer itself (a removed member's device pushing its ACL chain while it asks),
    // and once it is in, what goes back (what the peer asked for, changes the record let in from
    // parking) is no longer the peer's to get. The simulator's hub sent a removed member tree
    // changes this way (hub seed 274, 12 peers, 2 adversaries); daemons had the same race.
    if (changes.length && !this.mayRead(r, identity)) {
      c.denied++
      return question ? this.unknown(m) : NO_REPLY
    }
    if (!question && reask.size === 0) return pushed ? fixed([{ type: 'done', spaceId: m.spaceId, req: m.req }]) : NO_REPLY
    const budget = new WorkBudget(Math.min(SYNC_LIMITS.maxStepWork, SYNC_LIMITS.maxExchangeWork - (ex?.work ?? 0)))
    const index = this.indexOf(r).current()
    const plan = new ChangePlan(r.spaceId)
    const whole = new Set<string>()
    const planWhole = async (tree: string): Promise<boolean> => {
      if (whole.has(tree)) return true
      if (!budget.take(await this.diff.sizeOf(r, tree))) return false
      whole.add(tree)
      await this.diff.planWholeTree(r, tree, plan)
      return true
    }
    const heads = new Map<string, HeadsItem>()
    const wants: number[] = []
    let ranges: RangeItem[] = []
    if (m.ranges.length) {
      const ans = answerRanges(index, m.req, m.ranges, undefined, budget)
      ranges = ans.reply
      const minePerPos = new Map<number, number>()
      for (const e of ans.mine) minePerPos.set(e.pos, (minePerPos.get(e.pos) ?? 0) + 1)
      for (const e of ans.mine) {
        // The peer lists something else at this position: the same tree with other heads.
        if (ans.theirs.has(e.pos)) {
          if (!heads.has(e.id) && budget.take(await this.diff.sizeOf(r, e.id))) heads.set(e.id, await this.diff.headsItem(r, e.id))
        } else await planWhole(e.id)
      }
      for (const [pos, n] of ans.theirs) if (n > (minePerPos.get(pos) ?? 0)) wants.push(pos)
    }
    const asked = new Set<string>()
    for (const h of m.heads) {
      if (asked.has(h.treeId)) continue
      asked.add(h.treeId)
      if (!budget.take(await this.diff.sizeOf(r, h.treeId))) break
      const { missing, unknown } = await this.diff.compareHeads(r, h.treeId, h.heads, h.have)
      plan.add(h.treeId, missing)
      if (unknown) heads.set(h.treeId, await this.diff.headsItem(r, h.treeId))
    }
    wanted: for (const pos of new Set(m.wants)) for (const t of index.idsAt(pos)) if (!(await planWhole(t))) break wanted
    for (const t of reask) if (!heads.has(t)) heads.set(t, await this.diff.headsItem(r, t))
    if (ex) ex.work += budget.used
    if (budget.refused) bump(c.dropped, 'over_budget')
    return streamed(r, m.spaceId, m.req, m.hop + 1, ranges, [...heads.values()], wants, plan, question)
  }

  private tooManySteps(c: PeerCounters, m: StepMsg, question: boolean): Reply {
    bump(c.dropped, 'too_many_steps')
    return question ? fixed([{ type: 'error', spaceId: m.spaceId, req: m.req, code: 'too_many_steps' }]) : NO_REPLY
  }

  /** The `sync` that opens an exchange about a space we hold (once what is ingesting is in). */
  async opening(r: SpaceReplica): Promise<{ fp: Uint8Array; count: number }> {
    await this.settled(r)
    return openFingerprint(this.indexOf(r).current())
  }

  /** Ingests a peer's changes; returns the trees to ask about again when some wait for parents. */
  private async ingest(c: PeerCounters, peer: string, identity: string, r: SpaceReplica, changes: Uint8Array[], fromNonReader = false): Promise<Set<string>> {
    if (this.host.admitChanges && !this.host.admitChanges(r.spaceId, identity, changes.length, byteLength(changes))) {
      bump(c.dropped, 'over_quota', changes.length)
      return new Set()
    }
    // Checks started ahead for exactly these changes (the whole step, from a reader) are taken
    // over; any other step's are dropped, as its turn has come and gone.
    const list = this.checked.peek(peer)
    const at = list ? list.findIndex((x) => x.m.changes === changes) : -1
    const ahead = at >= 0 ? list!.splice(0, at + 1)[at] : undefined
    const taken = ahead && ahead.r === r && !fromNonReader ? ahead : undefined
    // No claimed ids: the replica's check stage derives them while decoding, on the way yielding
    // to the event loop (hashing a step's few thousand changes here held it for tens of ms).
    const items: RawItem[] = taken ? taken.items : changes.map((raw) => ({ raw }))
    // The peer is the origin: the replica bounds what it parks per peer. A non-reader's joins
    // come through the join message only (SpaceReplica.ingestJoin).
    const rep = await r.ingest(items, { origin: peer, fromNonReader, ...(taken ? { checked: taken.checks } : {}) })
    c.changesIn += items.length
    c.changesAccepted += rep.accepted.length
    for (const x of rep.rejected) bump(c.rejected, x.reason)
    const trees = new Set<string>()
    if (rep.missing.length === 0) return trees
    const settled = new Set([...rep.accepted, ...rep.rejected.map((x) => x.id)])
    for (const it of items) {
      // Every item has its id once ingested (set by the check stage).
      if (it.id === undefined || settled.has(it.id)) continue
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
   * A peer refused us (a refusal looks like `unknown_space`). If we hold it to be a reader (or a
   * custodian of the space: our hub, SyncHost.custodian), push
   * it the ACL chain and the changes our account authored (with their ancestors in each tree): a
   * peer that refused us only because it lacks the ACL record that added us learns it, and takes
   * the rest once that record makes us a reader there. The peer answers `done` once none of them
   * waits there for anything. We push again on a later refusal only while the push is not
   * acknowledged or our own changes have grown: at once for the first three attempts, then on
   * the 4th, 8th, 16th... (exponential backoff).
   */
  async pushOwnChanges(peer: string, identity: string, spaceId: string, req: number): Promise<Reply> {
    const r = await this.host.space(spaceId)
    // Readers, and our custodians (mayRead): a hub that refused us because it lacks an ACL
    // record only we hold (our `add`, or an admin's record that voids our removal) must get it
    // from us, or a device that reaches only its hub stays refused there for good.
    if (!r || !r.known || !this.mayRead(r, identity)) return NO_REPLY
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
      plan.add(
        t,
        idx
          .missingFrom([])
          .filter((x) => anc.has(x.id))
          .map((x) => x.id),
      )
    }
    if (plan.empty) return NO_REPLY
    const key = `${own.length}:${own.sort().join(',')}`
    let ps = this.pushState.get(peer)
    if (!ps) this.pushState.set(peer, (ps = { pushes: new Map(), acks: new Map() }))
    let st = ps.pushes.get(spaceId)
    if (!st || st.key !== key) ps.pushes.set(spaceId, (st = { key, attempts: 0, acked: false }))
    if (st.acked) return NO_REPLY
    const n = ++st.attempts
    if (n > 3 && (n & (n - 1)) !== 0) return NO_REPLY
    if (ps.acks.size >= SYNC_LIMITS.maxOpenExchanges) ps.acks.clear()
    ps.acks.set(req, { spaceId, key })
    return streamed(r, spaceId, req, 1, [], [], [], plan, false)
  }
}

/**
 * How many of a step's leading changes belong to the space's ACL tree, found from each one's
 * header alone (no signature check, no payload): at most maxAclChangesFromNonReader.
 */
export function aclLead(spaceId: string, changes: readonly Uint8Array[]): number {
  let n = 0
  for (; n < changes.length && n < SYNC_LIMITS.maxAclChangesFromNonReader; n++) {
    const env = readEnvelope(changes[n])
    if (!env) break
    const [, space, tree] = env.header as [number, string, string]
    const acl = (space === spaceId && tree === spaceId) || (space === '' && tree === '' && contentId(changes[n]) === spaceId)
    if (!acl) break
  }
  return n
}

function byteLength(changes: readonly Uint8Array[]): number {
  let n = 0
  for (const c of changes) n += c.byteLength
  return n
}
