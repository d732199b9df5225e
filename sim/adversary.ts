/**
 * A hostile peer. It runs the same session, driver and replica as an honest peer (so a member
 * adversary syncs, authenticates and holds keys like anyone), and on top of that sends what it
 * crafts (sim/attacks.ts) straight down its transport. It is omniscient about the run: it knows
 * the space id and reads any honest removal record the moment it is written, the strongest
 * adversary a seed can describe. Every change it crafts goes into its ledger with the kind of
 * attack and its place in the global order (sim/timeline.ts), for the oracle (sim/oracle.ts).
 */
import type { AclEntry } from '../sync/acl/state.ts'
import { encodeAclRecord, type AclRecord, type Rotation } from '../sync/acl/records.ts'
import { signJoinProof } from '../sync/acl/join-proof.ts'
import { seal } from '../sync/crypto/box.ts'
import { contentId } from '../sync/crypto/hash.ts'
import { publicKeyOf } from '../sync/crypto/keys.ts'
import type { CryptoProvider } from '../sync/crypto/provider.ts'
import { wrapKeyTo } from '../sync/crypto/wrap.ts'
import { encodeCanonical } from '../sync/core/encoding.ts'
import { decodeChange, signChange, type Change } from '../sync/dag/change.ts'
import { encodeMessage } from '../sync/protocol/messages.ts'
import { TransportError } from '../sync/protocol/transport.ts'
import {
  forgedAcl,
  forgedWrite,
  groundBelow,
  junkDerivedRoot,
  malformedFrames,
  markerOps,
  oversizedCounts,
  orphanChange,
  randomId,
  sealedWrite,
  signedAcl,
  stepsOf,
  tamper,
  wholeSpaceRanges,
  type WriteHeader,
} from './attacks.ts'
import type { AdversarySpec } from './config.ts'
import type { SimNetwork } from './network.ts'
import type { SimPeer } from './peer.ts'
import type { Prng } from './prng.ts'
import type { Scheduler } from './scheduler.ts'
import type { Timeline } from './timeline.ts'

export const ATTACK_KINDS = [
  'forge',
  'tamper',
  'replay',
  'backdateAcl',
  'hugeLamportAcl',
  'writeAfterRemoval',
  'rootAfterRemoval',
  'liveWrite',
  'derivedRoot',
  'parkJunk',
  'flood',
  'sybil',
  'forgeJoin',
] as const
export type AttackKind = (typeof ATTACK_KINDS)[number]

/**
 * What the oracle expects of a crafted change: `rejected` ones must never be held by an honest
 * replica (forged, tampered, junk); `judged` ones are void when the timeline says their author
 * was removed when they were made (sim/timeline.ts), and are otherwise not judged.
 */
export interface Crafted {
  id: string
  tree: string
  kind: AttackKind
  seq: number
  expect: 'rejected' | 'judged'
  what: 'change' | 'root' | 'acl' | 'derived' | 'join'
  author: string
  /** The record id whose value carries it, when the change writes one. */
  marker?: string
}

export interface HostileContext {
  sched: Scheduler
  net: SimNetwork
  crypto: CryptoProvider
  spaceId: string
  timeline: Timeline
  owner: string
  /** Honest peers (their replicas are read, never written, by the adversary). */
  honest: () => SimPeer[]
  /** Identities of every adversary: accomplices to add in a forged or backdated record. */
  accomplices: () => string[]
  inSafety: () => boolean
  /** How many peer ids a sybil storm mints (more than the per-peer state bound). */
  sybilStormSize: number
}

/** Frames kept for replay. */
const CAPTURE_MAX = 64
/** Signatures tried to grind a record id below another (about 1 in 2 succeed per try on average). */
const GRIND_TRIES = 256
/** Sybils minted at once, and the gap between batches. */
const SYBIL_BATCH = 32
const SYBIL_GAP_MS = 100
/** Bytes one park-junk action sends, in changes of 16..96 KiB. */
const JUNK_BYTES = 1536 * 1024

export class Adversary {
  readonly ledger: Crafted[] = []
  readonly counts: Partial<Record<AttackKind, number>> = {}
  private readonly captured: Uint8Array[] = []
  private markers = 0
  private sybils = 0
  private seq = 0

  constructor(
    readonly spec: AdversarySpec,
    readonly peer: SimPeer,
    private readonly r: Prng,
    private readonly ctx: HostileContext,
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

  private async act(kind: AttackKind): Promise<string> {
    switch (kind) {
      case 'forge':
        return this.forge()
      case 'tamper':
        return this.tamper()
      case 'replay':
        return this.replay()
      case 'backdateAcl':
        return this.backdateAcl(false)
      case 'hugeLamportAcl':
        return this.backdateAcl(true)
      case 'writeAfterRemoval':
        return this.writeAfterRemoval(false)
      case 'rootAfterRemoval':
        return this.writeAfterRemoval(true)
      case 'liveWrite':
        return this.liveWrite()
      case 'derivedRoot':
        return this.derivedRoots()
      case 'parkJunk':
        return this.parkJunk()
      case 'flood':
        return this.flood()
      case 'sybil':
        return this.sybil()
      case 'forgeJoin':
        return this.forgeJoin()
    }
  }

  // ------------------------------------------------------------------ sending

  private targets(n = 1 + this.r.int(3)): string[] {
    const up = this.peer.transport.peers().filter((p) => p.startsWith('p'))
    return this.r.shuffle(up).slice(0, n)
  }

  private send(to: string, bytes: Uint8Array) {
    try {
      this.peer.transport.send(to, bytes)
    } catch (err) {
      if (!(err instanceof TransportError)) throw err
    }
  }

  /** Sends changes as steps of an exchange the receivers never opened. */
  private push(changes: Uint8Array[], targets = this.targets()) {
    for (const to of targets) for (const f of stepsOf(this.ctx.spaceId, this.r, changes)) this.send(to, f)
    return targets.length
  }

  private note(c: Change, kind: AttackKind, expect: Crafted['expect'], what: Crafted['what'], marker?: string, seq = this.ctx.timeline.next()) {
    this.ledger.push({ id: c.id, tree: c.treeId === '' ? c.id : c.treeId, kind, seq, expect, what, author: c.author, ...(marker ? { marker } : {}) })
  }

  private marker() {
    return `x${this.spec.index}m${this.markers++}`
  }

  // ------------------------------------------------------------------ what it knows

  /** A tree of the space this adversary holds, with a head to build on. */
  private pickTree(): string | undefined {
    const rep = this.peer.replica
    const trees = rep.treeIds().filter((t) => !rep.treeMeta(t)?.deleted)
    return trees.length ? this.r.pick(trees) : undefined
  }

  /** The honest removal of this adversary that is newest in the global order, as its author holds it. */
  private removal(): AclEntry | undefined {
    const ev = [...this.ctx.timeline.events].reverse().find((e) => e.kind === 'remove' && e.identity === this.identity)
    if (!ev) return undefined
    for (const p of this.ctx.honest()) {
      const e = p.replica?.acl.entries.get(ev.id)
      if (e) return e
    }
    return undefined
  }

  /** The replica of an honest peer that holds `id` in its ACL (to judge states the way it does). */
  private holderOf(id: string) {
    return this.ctx.honest().find((p) => p.replica?.acl.has(id))?.replica
  }

  // ------------------------------------------------------------------ attacks

  /** Impersonates an honest writer (a member knows the key to seal under), or the owner. */
  private async forge(): Promise<string> {
    const rep = this.peer.replica
    const tree = this.pickTree()
    const honest = this.ctx
      .honest()
      .map((p) => p.identity)
      .filter((id) => rep.known && rep.acl.current().canWrite(id))
    if (tree && honest.length && this.r.chance(0.7)) {
      const cite = rep.acl.citation()
      const head = 'head' in cite ? cite.head : cite.merge[0]
      const keyId = rep.acl.stateAt([head]).readKeyId ?? ''
      const rk = keyId ? rep.keyring.get(keyId) : undefined
      const meta = rep.treeMeta(tree)!
      const marker = this.marker()
      const h: WriteHeader = {
        spaceId: this.ctx.spaceId,
        treeId: tree,
        prevIds: meta.heads,
        aclHeadId: head,
        lamport: meta.maxLamport + 1,
        timestamp: this.peer.env.now(),
        readKeyId: keyId,
        seq: ++this.seq,
      }
      const c = await forgedWrite(this.ctx.crypto, this.peer.env, this.peer.key, this.r.pick(honest), h, rk, markerOps(marker), this.r)
      this.note(c, 'forge', 'rejected', 'change', marker)
      return `write as another ${c.id} to ${this.push([c.raw])}`
    }
    // The owner "adds" an accomplice as admin, with a signature that is not the owner's.
    const heads = rep.known ? rep.acl.headIds() : [this.ctx.spaceId]
    const lamport = rep.known ? Math.max(...heads.map((h) => rep.acl.entries.get(h)!.lamport)) + 1 : 1
    const who = this.r.pick(this.ctx.accomplices())
    const c = forgedAcl(this.ctx.spaceId, this.ctx.owner, heads, lamport, { type: 'add', identity: who, role: 'admin', keyId: randomId(this.r), key: this.r.bytes(80) }, this.r)
    this.note(c, 'forge', 'rejected', 'acl')
    return `owner's record ${c.id} to ${this.push([c.raw])}`
  }

  /** Flips bytes of a real change (one it holds, or a fresh write of its own). */
  private async tamper(): Promise<string> {
    const all = await this.peer.replica.allChanges()
    if (!all.length) return 'nothing to tamper with'
    const out: Uint8Array[] = []
    for (let i = 0; i < 1 + this.r.int(4); i++) {
      const src = this.r.pick(all)
      const bad = tamper(src.raw, this.r)
      const id = contentId(bad)
      if (id === src.id) continue
      let tree = src.treeId
      try {
        const c = decodeChange(bad)
        tree = c.treeId === '' ? c.id : c.treeId
      } catch {
        // Unparseable: still sent, still must never be held.
      }
      this.ledger.push({ id, tree, kind: 'tamper', seq: this.ctx.timeline.next(), expect: 'rejected', what: 'change', author: this.identity })
      out.push(bad)
    }
    return `${out.length} changes to ${this.push(out)}`
  }

  /** Sends frames it received earlier again, to whoever. */
  private replay(): string {
    if (!this.captured.length) return 'nothing captured'
    let n = 0
    for (const to of this.targets()) {
      for (let i = 0; i < 1 + this.r.int(8); i++) {
        this.send(to, this.r.pick(this.captured))
        n++
      }
    }
    return `${n} frames`
  }

  /**
   * A removed admin signs a record concurrent with its removal: at the removal's lamport with
   * an id ground below it (the (lamport, id) fold meets it first), or at a huge lamport (it
   * becomes the "latest" head). It adds an accomplice as admin, or removes an honest member.
   */
  private async backdateAcl(huge: boolean): Promise<string> {
    const rm = this.removal()
    if (!rm) return 'no removal yet'
    const judge = this.holderOf(rm.id)
    if (!judge) return 'removal not held'
    const before = judge.acl.stateAt(rm.prevIds)
    const keyId = before.readKeyId
    const rk = keyId ? this.peer.replica.keyring.get(keyId) : undefined
    if (!keyId || !rk) return 'never held the key'
    let record: AclRecord
    const env = this.peer.env
    const victims = before.readers().filter((id) => id !== this.ctx.owner && id !== this.identity && !this.ctx.accomplices().includes(id))
    if (this.r.chance(0.5) || !victims.length) {
      const who = this.r.pick(this.ctx.accomplices())
      record = { type: 'add', identity: who, role: 'admin', keyId, key: wrapKeyTo(env, publicKeyOf(who), rk) }
    } else {
      const victim = this.r.pick(victims)
      const next = env.randomBytes(32)
      const keys: Record<string, Uint8Array> = {}
      for (const id of before.readers()) if (id !== victim) keys[id] = wrapKeyTo(env, publicKeyOf(id), next)
      const rotation: Rotation = { keys, prev: seal(env, next, rk), prevKeyId: keyId }
      record = { type: 'remove', identity: victim, rotation }
    }
    const ts = rm.timestamp - this.r.int(60_000)
    let c: Change
    let label: string
    if (huge) {
      c = await signedAcl(this.ctx.crypto, this.peer.key, this.ctx.spaceId, rm.prevIds, 2 ** 40 + this.r.int(1000), ts, ++this.seq, record)
      label = 'lamport 2^40'
    } else {
      const g = await groundBelow(this.ctx.crypto, this.peer.key, this.ctx.spaceId, rm.prevIds, rm.lamport, ts, record, rm.id, GRIND_TRIES)
      c = g.change
      label = `lamport ${rm.lamport}, id ${g.ground ? 'below' : 'not below'} the removal's`
    }
    this.note(c, huge ? 'hugeLamportAcl' : 'backdateAcl', 'judged', 'acl')
    return `${record.type} ${record.identity.slice(0, 6)} ${c.id} (${label}) to ${this.push([c.raw], this.targets(2 + this.r.int(3)))}`
  }

  /**
   * A removed member keeps writing: on parents from before its removal, citing an ACL head from
   * before it, stamped before it (backdated) or now; or it creates an object and writes in it.
   */
  private async writeAfterRemoval(root: boolean): Promise<string> {
    const rm = this.removal()
    if (!rm) return 'no removal yet'
    const judge = this.holderOf(rm.id)
    if (!judge) return 'removal not held'
    const head = [...rm.prevIds].sort((a, b) => judge.acl.entries.get(b)!.lamport - judge.acl.entries.get(a)!.lamport)[0]
    const st = judge.acl.stateAt([head])
    if (!st.canWrite(this.identity)) return 'could not write before its removal either'
    const keyId = st.readKeyId ?? ''
    const rk = keyId ? this.peer.replica.keyring.get(keyId) : undefined
    if (!rk) return 'never held the key'
    const ts = this.r.chance(0.7) ? rm.timestamp - 1 - this.r.int(60_000) : this.peer.env.now()
    const marker = this.marker()
    if (root) {
      const rootChange = await signChange(this.ctx.crypto, this.peer.key, {
        spaceId: this.ctx.spaceId,
        treeId: '',
        prevIds: [],
        aclHeadId: head,
        seq: ++this.seq,
        lamport: 0,
        timestamp: ts,
        readKeyId: '',
        payload: encodeCanonical({ kind: 'object', nonce: this.r.bytes(16) }),
      })
      const seq = this.ctx.timeline.next()
      this.note(rootChange, 'rootAfterRemoval', 'judged', 'root', undefined, seq)
      const w = await sealedWrite(
        this.ctx.crypto,
        this.peer.env,
        this.peer.key,
        {
          spaceId: this.ctx.spaceId,
          treeId: rootChange.id,
          prevIds: [rootChange.id],
          aclHeadId: head,
          lamport: 1,
          timestamp: ts + 1,
          readKeyId: keyId,
          seq: ++this.seq,
        },
        rk,
        markerOps(marker),
      )
      this.note(w, 'rootAfterRemoval', 'judged', 'change', marker, seq)
      return `object ${rootChange.id} and write ${w.id} to ${this.push([rootChange.raw, w.raw])}`
    }
    const tree = this.pickTree()
    if (!tree) return 'no tree'
    const idx = await this.peer.replica.treeIndex(tree)
    // Parents that cite nothing newer than the head it cites (else: stale_acl_head).
    let parent: { id: string; lamport: number } | undefined
    for (const id of idx.ids()) {
      const n = idx.get(id)!
      const ok = n.aclHeadId === '' ? n.prevIds.length === 0 : judge.acl.precedesOrEquals(n.aclHeadId, head)
      if (ok && (!parent || n.lamport > parent.lamport)) parent = n
    }
    if (!parent) return 'no parent old enough'
    const w = await sealedWrite(
      this.ctx.crypto,
      this.peer.env,
      this.peer.key,
      {
        spaceId: this.ctx.spaceId,
        treeId: tree,
        prevIds: [parent.id],
        aclHeadId: head,
        lamport: parent.lamport + 1,
        timestamp: ts,
        readKeyId: keyId,
        seq: ++this.seq,
      },
      rk,
      markerOps(marker),
    )
    this.note(w, 'writeAfterRemoval', 'judged', 'change', marker)
    return `${w.id} (${ts < rm.timestamp ? 'backdated' : 'now'}) to ${this.push([w.raw])}`
  }

  /**
   * Writes as its replica would, whether or not it has been removed yet (it may not know): made
   * through its own replica, pushed to a few peers, and synced like any write.
   */
  private async liveWrite(): Promise<string> {
    const rep = this.peer.replica
    const tree = this.pickTree()
    if (!tree || !rep.known || !rep.acl.current().canWrite(this.identity)) return 'cannot write in its own view'
    const marker = this.marker()
    const seq = this.ctx.timeline.next()
    let id: string
    try {
      id = (await rep.write(tree, markerOps(marker))).changeId
    } catch (err) {
      return `refused locally: ${(err as Error).message}`
    }
    const raw = (await rep.rawChanges(tree, [id]))[0].raw
    this.note(decodeChange(raw), 'liveWrite', 'judged', 'change', marker, seq)
    return `${id} to ${this.push([raw])}`
  }

  /**
   * Asks to join without the invite's private key: a proof signed by a random key, or an honest
   * joiner's proof (bound to the honest joiner's identity) in a join of its own, for an invite
   * that is live (it reads them off honest replicas) or made up. Sent as `join` messages, or
   * pushed as an ACL change in steps. No honest peer may ever list such a request.
   */
  private async forgeJoin(): Promise<string> {
    const holders = this.ctx.honest().filter((p) => p.alive && p.replica?.known)
    const invites = holders.flatMap((p) => p.replica.acl.current().invites())
    const inviteId = invites.length && this.r.chance(0.85) ? this.r.pick(invites).recordId : randomId(this.r)
    const proofs = holders.flatMap((p) => [...p.replica.acl.entries.values()].flatMap((e) => (e.record.type === 'join' ? [e.record.proof] : [])))
    const stolen = proofs.length > 0 && this.r.chance(0.5)
    const proof = stolen ? this.r.pick(proofs) : signJoinProof(this.r.bytes(32), this.ctx.spaceId, this.identity, inviteId)
    const c = await signChange(this.ctx.crypto, this.peer.key, {
      spaceId: this.ctx.spaceId,
      treeId: this.ctx.spaceId,
      prevIds: [this.ctx.spaceId],
      aclHeadId: '',
      seq: 0,
      lamport: 1,
      timestamp: this.peer.env.now(),
      readKeyId: '',
      payload: encodeAclRecord({ type: 'join', invite: inviteId, proof, metadata: { name: `x${this.spec.index}` } }),
    })
    this.note(c, 'forgeJoin', 'rejected', 'join')
    const how = stolen ? 'stolen proof' : 'random proof'
    if (this.r.chance(0.5)) return `${how} ${c.id} pushed to ${this.push([c.raw])}`
    const targets = this.targets()
    for (const to of targets) await this.peer.driver.sendJoin(to, this.ctx.spaceId, c.raw).catch(() => false)
    return `${how} ${c.id} as join to ${targets.length}`
  }

  /** Unsigned object roots with seeds nobody expects. */
  private derivedRoots(): string {
    const roots = Array.from({ length: 1 + this.r.int(8) }, () => junkDerivedRoot(this.ctx.spaceId, this.r))
    for (const c of roots) this.note(c, 'derivedRoot', 'rejected', 'derived')
    return `${roots.length} to ${this.push(roots.map((c) => c.raw))}`
  }

  /** Signed changes whose parents never arrive, 16..96 KiB each: they can only be parked. */
  private async parkJunk(): Promise<string> {
    const rep = this.peer.replica
    const trees = rep.treeIds()
    const out: Uint8Array[] = []
    let bytes = 0
    while (bytes < JUNK_BYTES) {
      const size = 16 * 1024 + this.r.int(80 * 1024)
      const tree = trees.length && this.r.chance(0.5) ? this.r.pick(trees) : randomId(this.r)
      const c = await orphanChange(this.ctx.crypto, this.peer.key, this.ctx.spaceId, tree, this.ctx.spaceId, size, this.r)
      this.note(c, 'parkJunk', 'rejected', 'change')
      out.push(c.raw)
      bytes += c.raw.length
    }
    return `${out.length} changes, ${bytes} bytes, to ${this.push(out)}`
  }

  /** Malformed frames, oversized counts, and the step that asks the most work one step may ask. */
  private flood(): string {
    const frames = malformedFrames(this.ctx.spaceId, this.r, 50 + this.r.int(150))
    frames.push(encodeMessage(wholeSpaceRanges(this.ctx.spaceId, this.r)))
    for (const m of oversizedCounts(this.ctx.spaceId, this.r)) frames.push(encodeMessage(m))
    const targets = this.targets()
    for (const to of targets) for (const f of frames) this.send(to, f)
    return `${frames.length} frames to ${targets.length}`
  }

  /**
   * Mints peer ids for free: each comes up (linked to the honest peers only), sends each of them
   * a junk frame, and goes away. A storm mints more than the per-peer state bound, a batch at a
   * time.
   */
  private sybil(): string {
    const n = this.spec.sybilStorm && this.sybils === 0 ? this.ctx.sybilStormSize : 4 + this.r.int(12)
    const { net, sched } = this.ctx
    for (let i = 0; i < n; i++) {
      const id = `${this.peer.id}s${this.sybils++}`
      const junk = malformedFrames(this.ctx.spaceId, this.r, 1)[0]
      sched.after(Math.floor(i / SYBIL_BATCH) * SYBIL_GAP_MS, `sybil ${id}`, () => {
        if (!this.ctx.inSafety()) return
        const t = net.attach(id, (other) => other.startsWith('p'))
        sched.after(20, `sybil ${id} sends`, () => {
          for (const p of t.peers()) {
            try {
              t.send(p, junk)
            } catch (err) {
              if (!(err instanceof TransportError)) throw err
            }
          }
        })
        sched.after(60, `sybil ${id} leaves`, () => t.close())
      })
    }
    return `${n} peer ids`
  }
}
