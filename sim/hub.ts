/**
 * A simulated hub (docs/simulation.md, "Hubs"; docs/hub.md): an always-on peer without read
 * keys that keeps the team's space so that devices rarely online together still sync. It runs
 * the runtime-neutral core the node's hub process runs (sync/hub/hub-core.ts: registrations,
 * quotas, keyless replicas) as the session host of the daemon's sync stack, over the simulated
 * network, with memory storage, a seeded env on the virtual clock and a key of its own. Hubs do
 * not crash.
 *
 * The control protocol (/svc/hub/1.0.0: register, unregister) is modelled by direct calls of
 * `HubCore.handle` when a peer opens the space (SimPeer.start); head sync goes over the wire.
 *
 * Every frame the hub sends is inspected: a change of the space sent to an account that cannot
 * read it at the hub's ACL state is a leak (`hubLeaked`), except the ACL records of a removal
 * notice to the member it removed (sync/protocol/removal-notice.ts), and ACL records to an
 * account the hub trusts while it knows no ACL yet (the accounts that registered the space).
 */
import type { Env } from '../sync/core/env.ts'
import { contentId } from '../sync/crypto/hash.ts'
import { identityOf, type KeyPair } from '../sync/crypto/keys.ts'
import { readEnvelope } from '../sync/dag/envelope-reader.ts'
import { HubCore } from '../sync/hub/hub-core.ts'
import { MemoryHubRegistry } from '../sync/hub/memory-registry.ts'
import { PeerGuard } from '../sync/p2p/peer-guard.ts'
import { utf8 } from '../sync/core/encoding.ts'
import { decodeMessage } from '../sync/protocol/messages.ts'
import { latestRemoval } from '../sync/protocol/removal-notice.ts'
import type { SchedulerOptions } from '../sync/protocol/sync-scheduler.ts'
import { SyncStack } from '../sync/protocol/sync-stack.ts'
import type { Transport } from '../sync/protocol/transport.ts'
import { SpaceReplica } from '../sync/replica/space-replica.ts'
import { MemoryStorageAdapter } from '../sync/storage/memory.ts'
import { SIM_POLICY } from './module-workload.ts'
import type { SimTransport } from './network.ts'
import { accountKey, EPOCH_MS, TIMER_LABEL, type PeerContext } from './peer.ts'
import type { Prng } from './prng.ts'

/** What a hub did, for the summary. */
export interface HubStats {
  /** Changes it sent in steps (to readers: what it relayed). */
  changesOut: number
  /** Changes it took in from peers. */
  changesIn: number
  /** Frames it sent with a change to someone who may not have it (each a `hubLeaked`). */
  leaks: number
}

export class SimHub {
  readonly key: KeyPair
  readonly identity: string
  readonly env: Env
  readonly core: HubCore
  readonly registry = new MemoryHubRegistry()
  readonly stats: HubStats = { changesOut: 0, changesIn: 0, leaks: 0 }
  /** Peers the daemon's guard would have backed off, by the hub's judgement (observe-only, as on peers). */
  readonly backedOff = new Set<string>()
  stack!: SyncStack
  private transport!: SimTransport
  private readonly storage = new Map<string, MemoryStorageAdapter>()

  constructor(
    readonly id: string,
    readonly account: number,
    private readonly prng: Prng,
    private readonly ctx: () => PeerContext,
    allowlist: readonly string[],
    /** Told of every leak found in what the hub sends. */
    private readonly onLeak: (line: string) => void,
  ) {
    this.key = accountKey(account)
    this.identity = identityOf(this.key.publicKey)
    const sched = () => this.ctx().sched
    this.env = {
      now: () => EPOCH_MS + sched().now,
      randomBytes: (n) => this.prng.bytes(n),
      setTimer: (ms, fn) => sched().after(ms, `timer ${this.id}`, fn),
    }
    this.core = new HubCore({
      key: this.key,
      crypto: ctx().crypto,
      env: this.env,
      registry: this.registry,
      allowlist,
      openReplica: (spaceId) => this.openReplica(spaceId),
      // Its commits (changes taken in) schedule rounds with its peers, as a device's do.
      opened: (spaceId, replica) => {
        this.stack.watch(spaceId, replica)
        this.stack.spacesAdded([spaceId])
      },
    })
  }

  private async openReplica(spaceId: string): Promise<SpaceReplica> {
    let storage = this.storage.get(spaceId)
    if (!storage) this.storage.set(spaceId, (storage = new MemoryStorageAdapter()))
    return SpaceReplica.open({ storage, crypto: this.ctx().crypto, env: this.env, policy: SIM_POLICY, keyless: true }, spaceId, this.key)
  }

  /** The kept replica of the run's space, once someone registered it. */
  get replica(): SpaceReplica | undefined {
    return this.core.openReplica(this.ctx().spaceId)
  }

  /** Joins the network; its scheduler runs rounds for the spaces it keeps while the run schedules. */
  start() {
    const ctx = this.ctx()
    this.transport = ctx.net.attach(this.id)
    const guard = new PeerGuard({ now: () => this.env.now() })
    this.stack = new SyncStack({
      transport: this.inspected(this.transport),
      session: { host: this.core, key: this.key, crypto: ctx.crypto, env: this.env },
      timer: (role) => ctx.sched.timer(`${TIMER_LABEL[role]} ${this.id}`),
      roundTimeoutMs: ctx.roundTimeoutMs,
      spaceIds: () => this.core.openSpaceIds(),
      faults: {
        fault: (peer) => {
          if (guard.fault(peer)) this.backedOff.add(peer)
        },
      },
    })
    const opts: SchedulerOptions | undefined = ctx.scheduling()
    if (opts)
      this.stack
        .startScheduling(opts, () => ctx.sched.now)
        .onRound((e) => {
          if (e.phase === 'end' && e.result) ctx.onRound(this, e.result)
        })
  }

  /** The control protocol's register, called directly (see the file's comment). */
  async register(identity: string, spaceId: string): Promise<void> {
    const st = await this.core.handle(identity, { kind: 'register', reqId: 1, token: utf8(''), spaceIds: [spaceId] })
    if (st.kind !== 'status' || st.code !== 'ok') throw new Error(`${this.id} refused to register ${spaceId} for ${identity.slice(0, 8)}: ${JSON.stringify(st)}`)
  }

  stopScheduling() {
    this.stack.stopScheduling()
  }

  /** Changes taken in, from the session's counters (the hub never restarts, so they are whole). */
  changesIn(): number {
    let n = 0
    for (const c of this.stack.session.allCounters().values()) n += c.changesAccepted
    return n
  }

  /** The transport as the stack sees it: every frame sent is inspected after it leaves. */
  private inspected(t: SimTransport): Transport {
    return {
      get peerId() {
        return t.peerId
      },
      get maxFrameBytes() {
        return t.maxFrameBytes
      },
      get ordered() {
        return t.ordered
      },
      send: (p, b) => {
        t.send(p, b)
        this.inspect(p, b)
      },
      drain: (p) => t.drain(p),
      onMessage: (h) => t.onMessage(h),
      onPeerUp: (h) => t.onPeerUp(h),
      onPeerDown: (h) => t.onPeerDown(h),
      peers: () => t.peers(),
      close: () => t.close(),
    }
  }

  private inspect(to: string, bytes: Uint8Array) {
    let m
    try {
      m = decodeMessage(bytes)
    } catch {
      return
    }
    if (m.type !== 'step' || m.changes.length === 0) return
    this.stats.changesOut += m.changes.length
    const r = this.core.openReplica(m.spaceId)
    const who = this.stack.session.identityOf(to)
    for (const raw of m.changes) {
      const why = this.refusal(m.spaceId, r, who, raw)
      if (!why) continue
      this.stats.leaks++
      this.onLeak(`${this.id} sent ${to} (${who?.slice(0, 8) ?? 'unauthenticated'}) a change of ${m.spaceId.slice(0, 8)}: ${why}`)
      return
    }
  }

  /** Why sending `raw` to `who` is a leak, or undefined when it is not. */
  private refusal(spaceId: string, r: SpaceReplica | undefined, who: string | undefined, raw: Uint8Array): string | undefined {
    if (!who) return 'to a peer that proved no account'
    if (!r) return 'of a space it does not keep'
    const env = readEnvelope(raw)
    const [, space, tree] = (env?.header ?? []) as [number, string, string]
    const acl = (space === spaceId && tree === spaceId) || (space === '' && tree === '' && contentId(raw) === spaceId)
    if (!r.known) return acl && this.core.trusts(spaceId, who) ? undefined : `before it knew the ACL, to an account that did not register it`
    if (r.acl.current().canRead(who)) return undefined
    if (acl && latestRemoval(r, who)) return undefined
    const st = r.acl.current()
    const standing = latestRemoval(r, who) ? `removed by ${latestRemoval(r, who)!.slice(0, 8)}` : `role ${st.roleOf(who) ?? 'none'}`
    return `${acl ? 'an ACL record' : `tree change ${contentId(raw).slice(0, 8)}`} to an account that cannot read at its ACL state (${standing}, ${r.acl.entries.size} records)`
  }
}
