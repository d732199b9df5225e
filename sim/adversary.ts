/**
 * A hostile peer. It runs the same session, driver and replica as an honest peer (so a member
 * adversary syncs, authenticates and holds keys like anyone), and on top of that sends what it
 * crafts (sim/attacks.ts) straight down its transport. It is omniscient about the run: it knows
 * the space id and reads any honest removal record the moment it is written, the strongest
 * adversary a seed can describe. Every change it crafts goes into its ledger with the kind of
 * attack and its place in the global order (sim/timeline.ts), for the oracle (sim/oracle.ts).
 */
import type { AclEntry } from '../sync/acl/state.ts'
import type { Change } from '../sync/dag/change.ts'
import { TransportError } from '../sync/protocol/transport.ts'
import { stepsOf } from './attacks.ts'
import { forge, forgeJoin, derivedRoots, replay, tamper } from './adversary-forgery.ts'
import { flood, parkJunk, sybil } from './adversary-flood.ts'
import { backdateAcl, liveWrite, writeAfterRemoval } from './adversary-removed.ts'
import type { AttackKind, Crafted, Hostile, HostileContext } from './adversary-types.ts'
import type { AdversarySpec } from './config.ts'
import type { SimPeer } from './peer.ts'
import type { Prng } from './prng.ts'

/** Frames kept for replay. */
const CAPTURE_MAX = 64

export class Adversary implements Hostile {
  readonly ledger: Crafted[] = []
  readonly counts: Partial<Record<AttackKind, number>> = {}
  readonly captured: Uint8Array[] = []
  private markers = 0
  sybils = 0
  private seq = 0

  constructor(
    readonly spec: AdversarySpec,
    readonly peer: SimPeer,
    readonly r: Prng,
    readonly ctx: HostileContext,
  ) {}

  get identity() {
    return this.peer.identity
  }

  /** Joins the network (an adversary never crashes) and starts capturing frames to replay. */
  async start() {
    await this.peer.start()
    this.peer.transport.onMessage((_from, bytes) => {
      if (this.captured.length >= CAPTURE_MAX) this.captured.splice(this.r.int(CAPTURE_MAX), 1)
      this.captured.push(bytes.slice())
    })
  }

  /** Schedules its actions over the safety phase. */
  schedule(safetyMs: number) {
    for (let i = 0; i < this.spec.actions; i++) {
      const at = Math.floor(safetyMs * (0.05 + 0.9 * this.r.float()))
      this.ctx.sched.at(at, `hostile ${this.peer.id}`, async () => {
        if (!this.ctx.inSafety()) return
        const kind = this.pick()
        const label = await this.act(kind)
        this.counts[kind] = (this.counts[kind] ?? 0) + 1
        this.ctx.sched.record(`hostile ${this.peer.id} ${kind}: ${label}`)
      })
    }
  }

  private status() {
    return this.ctx.timeline.statusAt(this.identity, Infinity, this.ctx.owner)
  }

  /** Attacks that make sense now; the ones only a removed member can make weigh more once it is. */
  private pick(): AttackKind {
    const st = this.spec.role === 'stranger' ? 'stranger' : this.status()
    const w: Array<[AttackKind, number]> = [
      ['forge', 2],
      ['replay', 1],
      ['derivedRoot', 1],
      ['parkJunk', 1],
      ['flood', 1],
      ['forgeJoin', 1],
    ]
    if (st === 'stranger') w.push(['sybil', 1])
    else {
      w.push(['tamper', 2], ['liveWrite', 2])
      if (st === 'removed' || st === 'unclear') {
        w.push(['writeAfterRemoval', 4], ['rootAfterRemoval', 2])
        if (this.spec.role === 'admin') w.push(['backdateAcl', 3], ['hugeLamportAcl', 2])
      }
    }
    let x = this.r.int(w.reduce((n, [, k]) => n + k, 0))
    for (const [k, n] of w) {
      if (x < n) return k
      x -= n
    }
    return w[0][0]
  }

  /** The attacks live in sim/adversary-forgery.ts, sim/adversary-removed.ts and sim/adversary-flood.ts. */
  private async act(kind: AttackKind): Promise<string> {
    switch (kind) {
      case 'forge':
        return forge(this)
      case 'tamper':
        return tamper(this)
      case 'replay':
        return replay(this)
      case 'backdateAcl':
        return backdateAcl(this, false)
      case 'hugeLamportAcl':
        return backdateAcl(this, true)
      case 'writeAfterRemoval':
        return writeAfterRemoval(this, false)
      case 'rootAfterRemoval':
        return writeAfterRemoval(this, true)
      case 'liveWrite':
        return liveWrite(this)
      case 'derivedRoot':
        return derivedRoots(this)
      case 'parkJunk':
        return parkJunk(this)
      case 'flood':
        return flood(this)
      case 'sybil':
        return sybil(this)
      case 'forgeJoin':
        return forgeJoin(this)
    }
  }

  // ------------------------------------------------------------------ sending

  nextSeq() {
    return ++this.seq
  }

  targets(n = 1 + this.r.int(3)): string[] {
    // Honest peers and hubs (`h<k>`, only with --hubs): a hub is on the network like anyone.
    const up = this.peer.transport.peers().filter((p) => p.startsWith('p') || p.startsWith('h'))
    return this.r.shuffle(up).slice(0, n)
  }

  send(to: string, bytes: Uint8Array) {
    try {
      this.peer.transport.send(to, bytes)
    } catch (err) {
      if (!(err instanceof TransportError)) throw err
    }
  }

  /** Sends changes as steps of an exchange the receivers never opened. */
  push(changes: Uint8Array[], targets = this.targets()) {
    for (const to of targets) for (const f of stepsOf(this.ctx.spaceId, this.r, changes)) this.send(to, f)
    return targets.length
  }

  note(c: Change, kind: AttackKind, expect: Crafted['expect'], what: Crafted['what'], marker?: string, seq = this.ctx.timeline.next()) {
    this.ledger.push({ id: c.id, tree: c.treeId === '' ? c.id : c.treeId, kind, seq, expect, what, author: c.author, ...(marker ? { marker } : {}) })
  }

  marker() {
    return `x${this.spec.index}m${this.markers++}`
  }

  // ------------------------------------------------------------------ what it knows

  /** A tree of the space this adversary holds, with a head to build on. */
  pickTree(): string | undefined {
    const rep = this.peer.replica
    const trees = rep.treeIds().filter((t) => !rep.treeMeta(t)?.deleted)
    return trees.length ? this.r.pick(trees) : undefined
  }

  /** The honest removal of this adversary that is newest in the global order, as its author holds it. */
  removal(): AclEntry | undefined {
    const ev = [...this.ctx.timeline.events].reverse().find((e) => e.kind === 'remove' && e.identity === this.identity)
    if (!ev) return undefined
    for (const p of this.ctx.honest()) {
      const e = p.replica?.acl.entries.get(ev.id)
      if (e) return e
    }
    return undefined
  }

  /** The replica of an honest peer that holds `id` in its ACL (to judge states the way it does). */
  holderOf(id: string) {
    return this.ctx.honest().find((p) => p.replica?.acl.has(id))?.replica
  }
}
