import type { Env } from '../../sync/core/env.ts'
import { errField, type Logger } from '../../sync/core/log.ts'
import { identityOf, type KeyPair } from '../../sync/crypto/keys.ts'
import type { CryptoProvider } from '../../sync/crypto/provider.ts'
import { HubCore } from '../../sync/hub/hub-core.ts'
import type { HubQuotas } from '../../sync/hub/constants.ts'
import { P2P } from '../../sync/p2p/constants.ts'
import { Libp2pTransport } from '../../sync/p2p/libp2p-transport.ts'
import { PeerGuard } from '../../sync/p2p/peer-guard.ts'
import type { SyncSession } from '../../sync/protocol/session.ts'
import { SyncStack } from '../../sync/protocol/sync-stack.ts'
import { realTimer } from '../p2p/real-timer.ts'
import { createSvcNode, type SvcLibp2p } from '../p2p/libp2p-node.ts'
import { handleControl } from './control-protocol.ts'
import { HubBlocks } from './hub-blocks.ts'
import { startHubEvents } from './hub-events.ts'
import { HUB_CLI_DEFAULTS, HUB_INBOUND, HUB_SCHEDULER } from './hub-constants.ts'
import { KeptSpaces } from './kept-spaces.ts'
import { OperatorEndpoint, type HubHealth } from './operator-http.ts'
import { RateMeter } from './rate-meter.ts'
import type { HubStore } from './store/hub-store.ts'

export interface HubServerOptions {
  /** The hub's key: its libp2p peer id and the identity it proves on head sync and signs admission tokens with. */
  key: KeyPair
  store: HubStore
  crypto: CryptoProvider
  env: Env
  /** libp2p listen multiaddrs (TCP; WebSockets on loopback are added as on a daemon). */
  listen: string[]
  /** Accounts admitted by configuration. */
  allow?: readonly string[]
  /** Open connections at most (default HUB_CLI_DEFAULTS.maxConnections). */
  maxConnections?: number
  /** Change bytes the open spaces may hold in memory (default HUB_CLI_DEFAULTS.maxOpenBytes). */
  maxOpenBytes?: number
  quotas?: Partial<HubQuotas>
  /** The operator endpoint (`/health`, `/metrics`): host and port (port 0: any; undefined: none). */
  operator?: { host: string; port: number }
  log: Logger
}

/**
 * A hub process (`svc hub`, docs/hub.md): a libp2p node speaking head sync for the spaces it
 * keeps (HubCore over keyless replicas, written through to SQLite or PostgreSQL), the control
 * protocol by which devices register spaces, the block exchange for files, and an operator
 * endpoint. It holds no read key: everything it stores and sends is ciphertext.
 */
export class HubServer {
  private closing?: Promise<void>

  private constructor(
    readonly identity: string,
    readonly node: SvcLibp2p,
    readonly core: HubCore,
    readonly stack: SyncStack,
    private readonly kept: KeptSpaces,
    private readonly blocks: HubBlocks,
    private readonly operator: OperatorEndpoint | undefined,
    private readonly store: HubStore,
    private readonly stops: Array<() => void>,
    private readonly log: Logger,
  ) {}

  get peerId(): string {
    return this.node.peerId.toString()
  }
  get addrs(): string[] {
    return this.node.getMultiaddrs().map((a) => a.toString())
  }
  get operatorUrl(): string | undefined {
    return this.operator?.url
  }

  static async start(o: HubServerOptions): Promise<HubServer> {
    const log = o.log
    const identity = identityOf(o.key.publicKey)
    const guard = new PeerGuard({ now: () => o.env.now() })
    const node = await createSvcNode({
      deviceKey: o.key,
      listen: o.listen,
      mdns: false,
      refuse: (p) => guard.refused(p),
      maxConnections: o.maxConnections ?? HUB_CLI_DEFAULTS.maxConnections,
      inbound: HUB_INBOUND,
      log: log.child('libp2p'),
    })
    const hangUp = (peer: string) => {
      for (const c of node.getConnections()) if (c.remotePeer.toString() === peer) c.abort(new Error('peer backed off for misbehaving'))
    }
    const fault = (peer: string, weight = 1) => {
      if (guard.fault(peer, weight)) hangUp(peer)
    }
    // eslint-disable-next-line prefer-const -- the kept spaces' growth callback reaches the core built after them
    let core!: HubCore
    const kept = new KeptSpaces({ store: o.store, key: o.key, crypto: o.crypto, env: o.env, log: log.child('kept'), grew: () => core.fitBudget() })
    // eslint-disable-next-line prefer-const -- the core's `opened` callback reaches the stack built after it
    let stack!: SyncStack
    core = keptCore(o, kept, () => stack)
    for (const a of o.allow ?? []) await o.store.admit(a, 'config', o.env.now())
    const transport = await Libp2pTransport.start(node, { log: log.child('head-sync-transport') })
    transport.setPeerFilter((p) => guard.refused(p))
    transport.onPeerFault((peer) => fault(peer, guard.maxFaults))
    stack = new SyncStack({
      transport,
      session: { host: core, key: o.key, crypto: o.crypto, env: o.env, ingestAhead: P2P.ingestAhead },
      timer: realTimer,
      spaceIds: () => core.openSpaceIds(),
      faults: { fault: (p) => fault(p) },
      log: log.child('sync'),
    })
    stack.startScheduling(HUB_SCHEDULER, () => o.env.now())
    stack.adoptLinkedPeers()
    const session = stack.session
    const stops: Array<() => void> = [() => kept.stop()]
    stops.push(hangUpUnproved(node, session, hangUp))
    const identityOfPeer = (p: string) => session.identityOf(p)
    const controlInFlight = await handleControl({ node, core, provedBy: (peer, waitMs) => provedBy(session, peer, waitMs), fault: (p) => fault(p), log: log.child('control') })
    const { events, blocks } = await beside(node, core, o, identityOfPeer, guard, fault, stops)
    const meter = new RateMeter(() => o.env.now())
    const interval = setInterval(() => meter.sample(kept.appended.changes), 1_000)
    interval.unref()
    stops.push(() => clearInterval(interval))
    const health = async (): Promise<HubHealth> => {
      const totals = await o.store.totals()
      const queues = { appends: kept.pendingAppends(), control: controlInFlight(), blocks: blocks.queued(), rounds: stack.scheduler?.inflightRounds() ?? 0 }
      return {
        identity,
        peerId: node.peerId.toString(),
        addrs: node.getMultiaddrs().map((a) => a.toString()),
        store: o.store.name,
        spacesKept: totals.spaces,
        spacesOpen: kept.size,
        bytesStored: totals.bytes + totals.blockBytes,
        changesStored: totals.changes,
        blocksStored: totals.blocks,
        peersConnected: transport.peers().length,
        changesPerSecond: meter.perSecond(),
        queues,
        blocks: { ...blocks.counters },
        events: { relayed: events.relay.relayed, ...events.relay.drops },
      }
    }
    stops.push(followStore(o.store, core, kept, o.maxOpenBytes ?? HUB_CLI_DEFAULTS.maxOpenBytes, log))
    const operator = o.operator ? await OperatorEndpoint.start(o.operator, health, log.child('operator')) : undefined
    log.info('hub started', { identity, peerId: node.peerId.toString(), addrs: node.getMultiaddrs().map((a) => a.toString()), store: o.store.name })
    return new HubServer(identity, node, core, stack, kept, blocks, operator, o.store, stops, log)
  }

  /**
   * Graceful shutdown: stop taking connections and rounds, let appends under way reach the
   * store, then close it. Whatever a peer sent that was not stored yet was never acknowledged:
   * the peer offers it again to whichever hub it reaches next.
   */
  close(): Promise<void> {
    this.closing ??= (async () => {
      await this.operator?.close()
      await this.stack.close()
      await this.blocks.close().catch((err: unknown) => this.log.warn('closing the block exchange failed', { err: errField(err) }))
      await this.node.stop()
      for (const s of this.stops) s()
      await this.store.close()
    })()
    return this.closing
  }
}

/** A connection that never proves an account only holds a slot: hung up on after the auth timeout. Returns the stop. */
function hangUpUnproved(node: SvcLibp2p, session: SyncSession, hangUp: (peer: string) => void): () => void {
  const onConnect = (evt: CustomEvent<{ toString(): string }>) => {
    const peer = evt.detail.toString()
    realTimer.after(P2P.authTimeoutMs, () => {
      if (!session.identityOf(peer) && node.getConnections().some((c) => c.remotePeer.toString() === peer)) hangUp(peer)
    })
  }
  node.addEventListener('peer:connect', onConnect)
  return () => node.removeEventListener('peer:connect', onConnect)
}

/** The account a peer proved on head sync, waiting up to `waitMs` for its proof (a control request may come first). */
function provedBy(session: SyncSession, peer: string, waitMs: number): Promise<string | undefined> {
  return new Promise<string | undefined>((resolve) => {
    const now = session.identityOf(peer)
    if (now !== undefined) {
      resolve(now)
      return
    }
    const done = (identity: string | undefined) => {
      off()
      cancel()
      resolve(identity)
    }
    const off = session.events.on('authenticated', (e) => e.peer === peer && done(e.identity))
    const cancel = realTimer.after(waitMs, () => done(session.identityOf(peer)))
  })
}

/**
 * Keeps this process's open spaces in step with the store: a space another process stored
 * changes of opens here, so the readers connected here hear of them (a member added there is
 * offered the space here); and every kept space opens in the background after start, up to the
 * memory budget (the rest open when a peer asks), so a reader that connects gets its rounds and
 * offers. Returns the stop.
 */
function followStore(store: HubStore, core: HubCore, kept: KeptSpaces, budget: number, log: Logger): () => void {
  const stop = store.onAppend((spaceId, _seq, local) => {
    if (!local && !core.openReplica(spaceId)) void core.space(spaceId)
  })
  void (async () => {
    for (const id of await store.keptSpaces()) {
      if (kept.totalBytes() >= budget) break
      await core.space(id)
    }
  })().catch((err: unknown) => log.error('opening the kept spaces failed', { err: errField(err) }))
  return stop
}

/** The hub's core over the kept spaces: what opens feeds the stack's rounds, what closes leaves them. */
function keptCore(o: HubServerOptions, kept: KeptSpaces, stack: () => SyncStack): HubCore {
  return new HubCore({
    key: o.key,
    crypto: o.crypto,
    env: o.env,
    registry: o.store,
    openReplica: (spaceId) => kept.open(spaceId),
    allowlist: o.allow,
    quotas: o.quotas,
    opened: (spaceId, replica) => {
      stack().watch(spaceId, replica)
      stack().spacesAdded([spaceId])
    },
    openBudget: {
      maxBytes: o.maxOpenBytes ?? HUB_CLI_DEFAULTS.maxOpenBytes,
      sizeOf: (spaceId) => kept.sizeOf(spaceId),
      closed: (spaceId) => {
        stack().unwatch(spaceId)
        kept.close(spaceId)
      },
    },
    log: o.log.child('core'),
  })
}

/** The protocols beside head sync on the hub's node: the events relay and the block exchange. */
async function beside(
  node: SvcLibp2p,
  core: HubCore,
  o: HubServerOptions,
  identityOfPeer: (peer: string) => string | undefined,
  guard: PeerGuard,
  fault: (peer: string) => void,
  stops: Array<() => void>,
) {
  const log = o.log
  const events = await startHubEvents({
    node,
    core,
    crypto: o.crypto,
    now: () => o.env.now(),
    identityOf: identityOfPeer,
    refused: (p) => guard.refused(p),
    fault: (p) => fault(p),
    log: log.child('events'),
  })
  stops.push(() => void events.close().catch((err: unknown) => log.warn('closing the events relay failed', { err: errField(err) })))
  const blocks = await HubBlocks.start({
    node,
    core,
    store: o.store,
    identityOf: identityOfPeer,
    refused: (p) => guard.refused(p),
    fault: (p) => fault(p),
    log: log.child('blocks'),
  })
  return { events, blocks }
}
