import type { Env } from '../sync/core/env.ts'
import type { CryptoProvider } from '../sync/crypto/provider.ts'
import { identityOf, keyPairFromSeed, type KeyPair } from '../sync/crypto/keys.ts'
import { SpaceReplica } from '../sync/replica/space-replica.ts'
import { MemoryStorageAdapter } from '../sync/storage/memory.ts'
import { SyncSession } from '../sync/protocol/session.ts'
import { SyncDriver, type RoundResult } from '../sync/protocol/sync-driver.ts'
import { ScheduledPeers, SyncScheduler, type SchedulerOptions } from '../sync/protocol/sync-scheduler.ts'
import { JoinDriver } from '../sync/protocol/join-driver.ts'
import type { JoinStatusEvent } from '../sync/protocol/sharing-network.ts'
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
  /** Every round a peer's scheduler ran, when it ends. */
  onRound: (p: SimPeer, r: RoundResult) => void
  onCrash: (p: SimPeer) => void
  /** Every `joined` answer a joining peer gets (the workload decides what it means). */
  onJoinStatus?: (p: SimPeer, e: JoinStatusEvent) => void
}

/**
 * One simulated device: durable data that survives crashes, and an incarnation (storage view,
 * replica, session, driver, transport, scheduler) that a crash throws away. A restart opens the
 * replica again from the durable data, exactly as the daemon does after `kill -9`. The
 * scheduler is the daemon's (`SyncScheduler`) on virtual time, fed what the daemon feeds it:
 * peers coming up and going down, and every commit (local writes, changes received).
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
  session!: SyncSession
  driver!: SyncDriver
  transport!: SimTransport
  scheduler?: SyncScheduler
  /**
   * The join (or cancel) change this account repeats while its row is `joining`: durable like
   * the daemon's account row, so a restarted peer asks again. The driver is per incarnation.
   */
  joinChange?: Uint8Array
  joinDriver?: JoinDriver
  private unschedule?: () => void

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
    // Joins arrive over the wire as in the daemon: the replica judges them (SpaceReplica.ingestJoin).
    const joins = { accept: async (spaceId: string, raw: Uint8Array, from: string) => (spaceId === ctx.spaceId ? replica.ingestJoin(raw, from) : undefined) }
    this.session = new SyncSession({ host: { space: (id) => (id === ctx.spaceId ? replica : undefined) }, key: this.key, peerId: this.id, crypto: ctx.crypto, env: this.env, joins })
    this.transport = ctx.net.attach(this.id)
    this.driver = new SyncDriver({ transport: this.transport, session: this.session, timer: ctx.sched.timer(`timeout ${this.id}`), timeoutMs: ctx.roundTimeoutMs })
    this.alive = true
    if (this.joinChange) this.askJoin(this.joinChange)
    const opts = ctx.scheduling()
    if (opts) this.schedule(opts)
  }

  private schedule(opts: SchedulerOptions) {
    const ctx = this.ctx()
    const s = new SyncScheduler(this.driver, () => [ctx.spaceId], ctx.sched.timer(`sched ${this.id}`), () => ctx.sched.now, opts)
    this.scheduler = s
    // As the daemon's P2P service: peers that proved an account, after the driver saw them, and
    // every commit.
    const transport = this.transport
    const peers = new ScheduledPeers(() => s, this.session, () => transport.peers())
    transport.onPeerUp((p) => peers.up(p))
    transport.onPeerDown((p) => peers.down(p))
    const unwatch = this.replica.addCommitListener((info) => s.changed(ctx.spaceId, info.local))
    this.unschedule = () => {
      s.stop()
      peers.stop()
      unwatch()
    }
    s.onRound((e) => {
      if (e.phase === 'end' && e.result) ctx.onRound(this, e.result)
    })
  }

  /**
   * Repeats `change` (a join, or a cancel after one) to every authenticated peer with backoff,
   * as the daemon's SharingNetwork does, until `stopJoin`.
   */
  askJoin(change: Uint8Array) {
    this.joinChange = change
    if (!this.alive) return
    if (!this.joinDriver) {
      const ctx = this.ctx()
      const driver = this.driver
      const session = this.session
      const jd = new JoinDriver({ send: (peer, spaceId, c) => driver.sendJoin(peer, spaceId, c), peers: () => this.transport.peers().filter((x) => session.identityOf(x) !== undefined), timer: ctx.sched.timer(`join ${this.id}`) })
      session.events.on('joinAnswer', (e) => jd.answered(e))
      session.events.on('authenticated', (e) => jd.peerUp(e.peer))
      jd.events.on('status', (e) => ctx.onJoinStatus?.(this, e))
      this.joinDriver = jd
    }
    this.joinDriver.ask(this.ctx().spaceId, change)
  }

  stopJoin() {
    this.joinChange = undefined
    this.joinDriver?.close()
    this.joinDriver = undefined
  }

  /** Scheduling stops (the liveness phase runs its own rounds); rounds under way finish. */
  stopScheduling() {
    this.unschedule?.()
    this.unschedule = undefined
    this.scheduler = undefined
  }

  /** The process dies: the incarnation is dropped, durable data stays. */
  stop() {
    if (!this.alive) return
    this.alive = false
    this.crashes++
    this.stopScheduling()
    this.joinDriver?.close()
    this.joinDriver = undefined
    void this.transport.close()
    if (!this.storage.crashed) this.storage.crashNow()
  }
}
