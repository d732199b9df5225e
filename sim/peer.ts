import type { Env } from '../sync/core/env.ts'
import type { CryptoProvider } from '../sync/crypto/provider.ts'
import { identityOf, keyPairFromSeed, type KeyPair } from '../sync/crypto/keys.ts'
import { SpaceReplica } from '../sync/replica/space-replica.ts'
import { MemoryStorageAdapter } from '../sync/storage/memory.ts'
import type { SyncSession } from '../sync/protocol/session.ts'
import type { RoundResult, SyncDriver } from '../sync/protocol/sync-driver.ts'
import type { SchedulerOptions, SyncScheduler } from '../sync/protocol/sync-scheduler.ts'
import type { JoinStatusEvent } from '../sync/protocol/sharing-network.ts'
import { SyncStack } from '../sync/protocol/sync-stack.ts'
import { PeerGuard } from '../sync/p2p/peer-guard.ts'
import type { SimNetwork, SimTransport } from './network.ts'
import type { Prng } from './prng.ts'
import type { Scheduler } from './scheduler.ts'
import { CrashableStorage } from './storage.ts'
import { SIM_POLICY } from './module-workload.ts'

/** Virtual time 0 is this wall-clock instant (ms), so change timestamps look real. */
export const EPOCH_MS = 1_700_000_000_000

/** The key of simulated account `n` (the same on every device of that account). */
const keys = new Map<number, KeyPair>()
export const accountKey = (n: number): KeyPair => {
  let k = keys.get(n)
  if (!k) keys.set(n, (k = keyPairFromSeed(new Uint8Array(32).fill(n + 1))))
  return k
}

export interface PeerContext {
  sched: Scheduler
  net: SimNetwork
  crypto: CryptoProvider
  spaceId: string
  roundTimeoutMs: number
  /** When rounds run, as the daemon decides it; undefined once the run stops scheduling (liveness). */
  scheduling: () => SchedulerOptions | undefined
  /** Every round a peer's (or a hub's) scheduler ran, when it ends. */
  onRound: (p: { readonly id: string }, r: RoundResult) => void
  onCrash: (p: SimPeer) => void
  /** Every `joined` answer a joining peer gets (the workload decides what it means). */
  onJoinStatus?: (p: SimPeer, e: JoinStatusEvent) => void
  /** A peer opened its replica of the space (the run registers honest peers with its hubs). */
  onOpened?: (p: SimPeer) => Promise<void>
}

/** The names of a peer's timers in the trace, by the role the sync stack gives them. */
export const TIMER_LABEL = { rounds: 'timeout', scheduling: 'sched', joins: 'join' } as const

/**
 * One simulated device: durable data that survives crashes, and an incarnation (storage view,
 * replica, sync stack, transport) that a crash throws away. A restart opens the replica again
 * from the durable data, exactly as the daemon does after `kill -9`. The sync stack is the
 * daemon's (sync/protocol/sync-stack.ts: session, driver, sharing over the wire, the scheduler
 * on virtual time), over the simulated network instead of libp2p.
 *
 * The daemon's peer guard runs too, observing: a peer it would back off is recorded in
 * `backedOff` rather than cut, so adversaries keep attacking for the whole run (the attacks are
 * what the checks are about), and the checks prove the guard never backs off an honest peer.
 */
export class SimPeer {
  readonly key: KeyPair
  readonly identity: string
  readonly data = new MemoryStorageAdapter()
  readonly env: Env
  alive = false
  incarnation = 0
  crashes = 0
  storage!: CrashableStorage
  replica!: SpaceReplica
  transport!: SimTransport
  stack!: SyncStack
  /**
   * The join (or cancel) change this account repeats while its row is `joining`: durable like
   * the daemon's account row, so a restarted peer asks again. The sharing is per incarnation.
   */
  joinChange?: Uint8Array
  /** Peers the daemon's guard would have backed off for misbehaving, by this peer's judgement. */
  readonly backedOff = new Set<string>()
  /**
   * Identities of the hubs that keep this peer's spaces (docs/hub.md): its session treats them
   * as allowed to sync the space (`SyncHost.custodian`). Empty without hubs, and for adversaries.
   */
  custodians: readonly string[] = []
  /** Changes this peer took in, over all its incarnations: from hubs, and from honest peers directly. */
  readonly accepted = { viaHub: 0, direct: 0 }
  private guard?: PeerGuard

  constructor(
    readonly id: string,
    readonly index: number,
    readonly account: number,
    private readonly skew: number,
    private readonly prng: Prng,
    private readonly ctx: () => PeerContext,
  ) {
    this.key = accountKey(account)
    this.identity = identityOf(this.key.publicKey)
    const sched = () => this.ctx().sched
    this.env = {
      now: () => EPOCH_MS + sched().now + this.skew,
      randomBytes: (n) => this.prng.bytes(n),
      setTimer: (ms, fn) => sched().after(ms, `timer ${this.id}`, fn),
    }
  }

  private newStorage(): CrashableStorage {
    const inc = ++this.incarnation
    return new CrashableStorage(this.data, this.id, () => {
      if (this.incarnation === inc) this.ctx().onCrash(this)
    })
  }

  /** Creates the space (the owner, before the run starts). */
  async createSpace(crypto: CryptoProvider): Promise<string> {
    this.storage = this.newStorage()
    this.replica = await SpaceReplica.create({ storage: this.storage, crypto, env: this.env, policy: SIM_POLICY }, this.key)
    return this.replica.spaceId
  }

  /** Opens (or reopens) the replica from durable data and joins the network. */
  async start(): Promise<void> {
    const ctx = this.ctx()
    if (this.alive) return
    if (!this.storage || this.storage.crashed) this.storage = this.newStorage()
    const deps = { storage: this.storage, crypto: ctx.crypto, env: this.env, policy: SIM_POLICY }
    this.replica = await SpaceReplica.open(deps, ctx.spaceId, this.key)
    const replica = this.replica
    await ctx.onOpened?.(this)
    const hubs = this.custodians
    // Joins arrive over the wire as in the daemon: the replica judges them (SpaceReplica.ingestJoin).
    const joins = { accept: async (spaceId: string, raw: Uint8Array, from: string) => (spaceId === ctx.spaceId ? replica.ingestJoin(raw, from) : undefined) }
    this.transport = ctx.net.attach(this.id)
    const guard = (this.guard ??= new PeerGuard({ now: () => this.env.now() }))
    this.stack = new SyncStack({
      transport: this.transport,
      session: {
        host: {
          space: (id) => (id === ctx.spaceId ? replica : undefined),
          ...(hubs.length ? { custodian: (_spaceId: string, id: string) => hubs.includes(id) } : {}),
        },
        key: this.key,
        crypto: ctx.crypto,
        env: this.env,
        joins,
      },
      timer: (role) => ctx.sched.timer(`${TIMER_LABEL[role]} ${this.id}`),
      roundTimeoutMs: ctx.roundTimeoutMs,
      spaceIds: () => [ctx.spaceId],
      faults: {
        fault: (peer) => {
          if (guard.fault(peer)) this.backedOff.add(peer)
        },
      },
    })
    this.stack.sharing.onJoinStatus((e) => ctx.onJoinStatus?.(this, e))
    this.stack.watch(ctx.spaceId, replica)
    this.alive = true
    if (this.joinChange) this.askJoin(this.joinChange)
    const opts = ctx.scheduling()
    if (opts) this.schedule(opts)
  }

  get session(): SyncSession {
    return this.stack.session
  }

  get driver(): SyncDriver {
    return this.stack.driver
  }

  get scheduler(): SyncScheduler | undefined {
    return this.alive ? this.stack.scheduler : undefined
  }

  private schedule(opts: SchedulerOptions) {
    const ctx = this.ctx()
    this.stack
      .startScheduling(opts, () => ctx.sched.now)
      .onRound((e) => {
        if (e.phase === 'end' && e.result) ctx.onRound(this, e.result)
      })
  }

  /**
   * Repeats `change` (a join, or a cancel after one) to every authenticated peer with backoff,
   * as the daemon's SharingNetwork does, until `stopJoin`.
   */
  askJoin(change: Uint8Array) {
    this.joinChange = change
    if (this.alive) this.stack.sharing.join(this.ctx().spaceId, change)
  }

  stopJoin() {
    this.joinChange = undefined
    if (this.alive) this.stack.sharing.stopJoin(this.ctx().spaceId)
  }

  /** Scheduling stops (the liveness phase runs its own rounds); rounds under way finish. */
  stopScheduling() {
    this.stack?.stopScheduling()
  }

  /** Adds this incarnation's accepted changes to `accepted` (its session dies with it). */
  foldAccepted() {
    if (!this.stack) return
    for (const [peer, c] of this.stack.session.allCounters()) {
      if (peer.startsWith('h')) this.accepted.viaHub += c.changesAccepted
      else if (peer.startsWith('p')) this.accepted.direct += c.changesAccepted
    }
  }

  /** The process dies: the incarnation is dropped, durable data stays. */
  stop() {
    if (!this.alive) return
    this.foldAccepted()
    this.alive = false
    this.crashes++
    // A crash: nothing is closed in order (the driver's rounds just never hear back).
    this.stack.stopScheduling()
    this.stack.sharing.close()
    void this.transport.close()
    if (!this.storage.crashed) this.storage.crashNow()
  }
}
