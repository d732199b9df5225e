import { createServer, type Server } from 'node:http'
import { mkdirSync } from 'node:fs'
import { homedir } from 'node:os'
import { join } from 'node:path'
import type { AddressInfo } from 'node:net'
import { defaultCryptoProvider } from '../../sync/crypto/provider.ts'
import { keyPairFromSeed } from '../../sync/crypto/keys.ts'
import { encodePushReply, PUSH_PROTOCOL, PUSH_WIRE_LIMITS } from '../../sync/protocol/push-wire.ts'
import { createSvcNode, type SvcLibp2p } from '../p2p/libp2p-node.ts'
import { readOneFrame, writeFrame } from '../push/rpc.ts'
import { PushNodeCore, type PushNodeBounds, type PushNodeRates, type RetryPolicy } from './core.ts'
import { errField, scopedLogger, type Logger } from './log.ts'
import { PgSubscriptionStore } from './pg-store.ts'
import { SqliteSubscriptionStore } from './sqlite-store.ts'
import type { SubscriptionStore } from './store.ts'
import { ApnsProvider, type ApnsConfig } from './providers/apns.ts'
import { FcmProvider, type FcmConfig } from './providers/fcm.ts'
import { NtfyProvider, type NtfyConfig } from './providers/ntfy.ts'
import type { PushProvider } from './providers/provider.ts'
import { WebPushProvider, type WebPushConfig } from './providers/webpush.ts'

/** `svc push-node`'s configuration (a JSON file; docs/push.md "Hosting a push node"). */
export interface PushNodeConfig {
  /** 32-byte node key seed, hex: the node's libp2p peer id is stable across restarts. */
  keySeed: string
  /** libp2p listen multiaddrs (TCP). */
  listen: string[]
  /** Loopback port of the health and counters endpoint (0: any). */
  healthPort?: number
  /**
   * `sqlite:<path>`, a `postgresql://` URL, or (tests) `sqlite::memory:`. Default: the file
   * `push-node.db` in `dataDir`.
   */
  store?: string
  /** Where the default store lives (default `~/.local/share/svc-push-node`). */
  dataDir?: string
  providers: { ntfy?: NtfyConfig; fcm?: FcmConfig; webpush?: WebPushConfig; apns?: ApnsConfig }
  /** Rates per peer and per space key (default sync/modules/push/limits.ts). */
  rates?: PushNodeRates
  /** Subscription caps, the idle TTL and the queue's size (default core.ts PUSH_NODE_BOUNDS). */
  bounds?: PushNodeBounds
  /** Delivery retries (default core.ts PUSH_NODE_RETRY). */
  retry?: RetryPolicy
}

/** A request is one frame, read within this time; a silent peer does not hold a stream. */
const REQUEST_TIMEOUT_MS = 10_000
/** Streams one connection may hold at once: requests are short, so few are needed. */
const STREAMS_PER_CONNECTION = 32

/** How often a node sweeps idle registrations, and polls a shared store's queue. */
const SWEEP_MS = 3600_000
const SHARED_QUEUE_POLL_MS = 5_000

/** The environment is read by the CLI entry alone (test/architecture): a config's `dataDir` moves this. */
export function defaultPushNodeDir(): string {
  return join(homedir(), '.local', 'share', 'svc-push-node')
}

/**
 * The store a config names. By default a file: an in-memory store grows the process with every
 * registration a stranger makes (issue 33: 750 MB under a flood), a file only its disk, bounded
 * by the node's caps.
 */
export async function openStore(spec: string | undefined, dataDir = defaultPushNodeDir()): Promise<SubscriptionStore> {
  if (spec === undefined) {
    mkdirSync(dataDir, { recursive: true, mode: 0o700 })
    return new SqliteSubscriptionStore(join(dataDir, 'push-node.db'))
  }
  if (spec.startsWith('postgres://') || spec.startsWith('postgresql://')) return PgSubscriptionStore.open(spec)
  if (spec.startsWith('sqlite:') && spec.length > 'sqlite:'.length) return new SqliteSubscriptionStore(spec.slice('sqlite:'.length))
  throw new Error(`unknown store ${spec}: use sqlite:<path> or a postgresql:// URL`)
}

export function providersOf(c: PushNodeConfig['providers'], log?: Logger): PushProvider[] {
  const out: PushProvider[] = []
  if (c.ntfy) out.push(new NtfyProvider(c.ntfy, log?.child('ntfy')))
  if (c.fcm) out.push(new FcmProvider(c.fcm, undefined, log?.child('fcm')))
  if (c.webpush) out.push(new WebPushProvider(c.webpush))
  if (c.apns) out.push(new ApnsProvider(c.apns))
  return out
}

/**
 * A push node: a libp2p service on `/svc/push/1.0.0` (TCP, Noise, Yamux: the daemons' own
 * stack), one request and one reply per stream, judged by PushNodeCore; and a loopback-only
 * HTTP endpoint (`GET /health`) with its counters.
 */
export class PushNodeServer {
  private constructor(
    readonly node: SvcLibp2p,
    readonly core: PushNodeCore,
    private readonly store: SubscriptionStore,
    private readonly providers: PushProvider[],
    private readonly health: Server,
    readonly healthUrl: string,
    /** Whether this server made its node (and stops it), or runs on another's (a hub's). */
    private readonly ownNode: boolean,
  ) {}

  get peerId(): string {
    return this.node.peerId.toString()
  }
  get addrs(): string[] {
    return this.node.getMultiaddrs().map((a) => a.toString())
  }

  /**
   * Starts a push node. With `on.node` it serves its protocol on that libp2p node (a hub running
   * the push node too, docs/hub.md "Push"), and `keySeed` and `listen` are not used.
   */
  static async start(cfg: PushNodeConfig, on: { node?: SvcLibp2p } = {}): Promise<PushNodeServer> {
    const crypto = await defaultCryptoProvider()
    const log = scopedLogger('push-node')
    const store = await openStore(cfg.store, cfg.dataDir)
    const providers = providersOf(cfg.providers, log.child('providers'))
    if (cfg.providers.ntfy && !cfg.providers.ntfy.server && !cfg.providers.ntfy.allowedOrigins?.length)
      log.warn('ntfy has neither a server nor allowedOrigins: every UnifiedPush endpoint is refused')
    if (cfg.providers.webpush?.allowPrivateEndpoints) log.warn('webpush.allowPrivateEndpoints is on: subscribers can aim the node at private addresses (tests only)')
    const core = new PushNodeCore({
      store,
      providers,
      crypto,
      log,
      ...(cfg.rates ? { rates: cfg.rates } : {}),
      ...(cfg.bounds ? { bounds: cfg.bounds } : {}),
      ...(cfg.retry ? { retry: cfg.retry } : {}),
    })
    core.start({ sweepMs: SWEEP_MS, ...(store.kind === 'postgres' ? { pollMs: SHARED_QUEUE_POLL_MS } : {}) })
    const node = on.node ?? (await createSvcNode({ deviceKey: keyPairFromSeed(Buffer.from(cfg.keySeed, 'hex')), listen: cfg.listen, mdns: false }))
    await node.handle(
      PUSH_PROTOCOL,
      async (stream, connection) => {
        const peer = connection.remotePeer.toString()
        try {
          const req = await readOneFrame(stream, PUSH_WIRE_LIMITS.maxFrameBytes, REQUEST_TIMEOUT_MS)
          writeFrame(stream, encodePushReply(await core.handle(peer, req)))
          await stream.close()
        } catch (err) {
          // A peer that sent nothing in time, or hung up: its stream goes, the node carries on.
          log.child('stream').info('push request stream failed', { err: errField(err) })
          stream.abort(new Error('push request failed'))
        }
      },
      { maxInboundStreams: STREAMS_PER_CONNECTION },
    )
    // eslint-disable-next-line @typescript-eslint/no-misused-promises -- the handler catches its own failures and always answers
    const health = createServer(async (req, res) => {
      if (req.method !== 'GET' || req.url !== '/health') return void res.writeHead(404).end()
      const state = await Promise.all([store.totals(), core.queue()]).catch((err: unknown) => {
        log.child('health').error('store unreadable', { err: errField(err) })
        return undefined
      })
      res.writeHead(state ? 200 : 503, { 'content-type': 'application/json' })
      res.end(
        JSON.stringify({
          ok: !!state,
          peerId: node.peerId.toString(),
          addrs: node.getMultiaddrs().map((a) => a.toString()),
          store: store.kind,
          platforms: core.platforms,
          counters: core.counters,
          ...(state ? { totals: state[0], queue: state[1] } : {}),
        }),
      )
    })
    await new Promise<void>((resolve, reject) => {
      health.once('error', reject)
      health.listen(cfg.healthPort ?? 0, '127.0.0.1', resolve)
    })
    const url = `http://127.0.0.1:${(health.address() as AddressInfo).port}/health`
    return new PushNodeServer(node, core, store, providers, health, url, on.node === undefined)
  }

  async close(): Promise<void> {
    await new Promise<void>((r) => this.health.close(() => r()))
    if (this.ownNode) await this.node.stop()
    else await this.node.unhandle(PUSH_PROTOCOL)
    await this.core.close()
    for (const p of this.providers) await p.close?.()
    await this.store.close()
  }
}
