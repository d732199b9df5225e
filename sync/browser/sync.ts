import { createLibp2p } from 'libp2p'
import { webSockets } from '@libp2p/websockets'
import { generateKeyPairFromSeed } from '@libp2p/crypto/keys'
import { multiaddr } from '@multiformats/multiaddr'
import type { SyncSession } from '../protocol/session.ts'
import type { RoundResult } from '../protocol/sync-driver.ts'
import type { RoundEvent, SchedulerOptions, SyncScheduler } from '../protocol/sync-scheduler.ts'
import { SyncStack } from '../protocol/sync-stack.ts'
import { accountSyncHost, followAccountSpaces } from '../p2p/account-sync.ts'
import { errField, silentLogger, type Logger } from '../core/log.ts'
import { svcNodeOptions, type SvcLibp2p } from '../p2p/node-options.ts'
import { Libp2pTransport } from '../p2p/libp2p-transport.ts'
import type { Env } from '../core/env.ts'
import type { BrowserAccount } from './account.ts'
import { browserTimer, installSetImmediate } from './env.ts'

/**
 * Answer steps whose ingest may still run while the next message is read (SyncSession
 * `ingestAhead`): in a page, storage commits (IndexedDB, a round trip to the browser process
 * per request) cost as much as checking the changes, so checking the next batch while the last
 * one commits nearly halves a backlog's time (bench/browser.ts). The daemon keeps 0 to answer
 * its HTTP API sooner (sync/p2p/constants.ts); a page has no API to keep waiting.
 */
export const BROWSER_INGEST_AHEAD = 2

export interface BrowserSyncOptions {
  scheduler?: SchedulerOptions
  /** A round not finished after this long is abandoned (default 10 s, as the daemon's). */
  roundTimeoutMs?: number
  /** Where the page's sync logs (default: nowhere). */
  log?: Logger
}

/**
 * Head sync between this page and daemons of the account, over libp2p WebSockets with Noise
 * and Yamux: the daemon's own transport (sync/p2p/libp2p-transport.ts: the same protocol id,
 * framing, frame and queue limits), session, driver and scheduler, so there is no second
 * protocol. The page only dials (a page cannot listen); the daemon then treats it as any
 * device of the account. Every change received is verified and checked by the replica's
 * ingest exactly as in the daemon.
 */
export class BrowserSync {
  private constructor(
    readonly node: SvcLibp2p,
    readonly transport: Libp2pTransport,
    readonly stack: SyncStack,
    private readonly stops: Array<() => void>,
    private readonly env: Env,
  ) {}

  static async start(acc: BrowserAccount, o: BrowserSyncOptions = {}): Promise<BrowserSync> {
    installSetImmediate()
    const { account, keys, crypto, env } = acc
    const node: SvcLibp2p = await createLibp2p(
      svcNodeOptions({
        privateKey: await generateKeyPairFromSeed('Ed25519', keys.device.privateKey),
        listen: [],
        transports: [webSockets()],
        maxConnections: 8,
        // libp2p's browser default refuses ws:// and private addresses; the page dials only the
        // daemons it is told to, and a daemon on this machine is both.
        connectionGater: { denyDialMultiaddr: () => false },
      }),
    )
    const transport = await Libp2pTransport.start(node)
    const log = o.log ?? silentLogger
    const stack = new SyncStack({
      transport,
      session: {
        // Spaces of this account the page has not opened yet (the daemon created them).
        host: accountSyncHost(account, (spaceId, err) => log.warn('a space of this account could not be opened for a device of it', { spaceId, err: errField(err) })),
        key: keys.account,
        crypto,
        env,
        ingestAhead: BROWSER_INGEST_AHEAD,
      },
      timer: browserTimer,
      roundTimeoutMs: o.roundTimeoutMs,
      spaceIds: () => account.openSpaces().map((s) => s.spaceId),
      log,
    })
    stack.startScheduling(o.scheduler, () => env.now())
    const stops = [followAccountSpaces(stack, account)]
    return new BrowserSync(node, transport, stack, stops, env)
  }

  get session(): SyncSession {
    return this.stack.session
  }

  private get scheduler(): SyncScheduler {
    const s = this.stack.scheduler
    if (!s) throw new Error('sync has stopped')
    return s
  }

  /** This page's peer id (the device id). */
  get peerId(): string {
    return this.transport.peerId
  }

  /**
   * Dials a daemon at a WebSocket multiaddr ending in `/p2p/<peer id>` and resolves once the
   * link is up and the daemon proved it holds this account (or `timeoutMs` passed: rejects).
   * Rounds for every held space start by themselves from then on.
   */
  async dial(addr: string, timeoutMs = 30_000): Promise<string> {
    const ma = multiaddr(addr)
    const peer = ma.getComponents().findLast((c) => c.name === 'p2p')?.value
    if (!peer) throw new Error('the address must end in /p2p/<peer id>')
    await this.node.dial(ma, { signal: AbortSignal.timeout(timeoutMs) })
    const end = this.env.now() + timeoutMs
    while (!(this.transport.peers().includes(peer) && this.session.identityOf(peer))) {
      if (this.env.now() > end) throw new Error(`no authenticated link to ${peer} after ${timeoutMs} ms`)
      await new Promise<void>((r) => this.env.setTimer(50, r))
    }
    return peer
  }

  /** Closes every connection to a peer (the page goes offline for it). */
  async hangUp(peer: string): Promise<void> {
    for (const c of this.node.getConnections()) if (c.remotePeer.toString() === peer) await c.close().catch(() => c.abort(new Error('hang up')))
  }

  /** Authenticated peers with a link up now. */
  peers(): string[] {
    return this.scheduler.connectedPeers()
  }

  /** A round with every connected peer about the space; resolves when all are done. */
  syncNow(spaceId: string): Promise<RoundResult[]> {
    return this.scheduler.syncNow(spaceId)
  }

  onRound(fn: (e: RoundEvent) => void): () => void {
    return this.scheduler.onRound(fn)
  }

  async stop(): Promise<void> {
    for (const s of this.stops) s()
    await this.stack.close()
    await this.transport.close()
    await this.node.stop()
  }
}
