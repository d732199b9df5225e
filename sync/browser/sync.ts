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
import { PeerGuard } from '../p2p/peer-guard.ts'
import { HubLinksCore, type HubAddress } from '../p2p/hub-links.ts'
import { HUB_WIRE, type HubCode, type HubUsage, type SpaceCode } from '../protocol/hub-wire.ts'
import type { Env } from '../core/env.ts'
import type { AccountEngine } from '../space/account-engine.ts'
import type { BrowserAccount } from './account.ts'
import { browserTimer, installSetImmediate } from './env.ts'
import { BrowserFiles, type ReadFileOptions } from './files.ts'
import type { FileInfo } from '../modules/files/service.ts'

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
  /** Redial delays of hubs whose link dropped (default 1 s doubling to 5 min, as the daemon's). */
  hubRedial?: { baseMs?: number; maxMs?: number }
}

/** A hub as `BrowserSync.hubs()` shows it (the daemon's `GET /v1/hubs`, times in ms). */
export interface BrowserHub {
  peerId: string
  multiaddr: string
  connected: boolean
  /** The hub's identity, once it proved it on head sync: a custodian of this account's spaces from then on. */
  identity: string | null
  /** Whether the hub admits this account (`ok`, `not_admitted`, `bad_token`): null until it answered. */
  admission: HubCode | 'unknown' | null
  usage: HubUsage | null
  failures: number
  lastError: string | null
  nextDialAt: number | null
  /** Each space this page holds: the hub's word on it (`kept`, `pending`, ...) and the last round with it that completed. */
  spaces: Array<{ spaceId: string; state: SpaceCode | 'unregistered'; lastSyncAt: number | null }>
}

/**
 * Head sync between this page and daemons of the account, over libp2p WebSockets with Noise
 * and Yamux: the daemon's own transport (sync/p2p/libp2p-transport.ts: the same protocol id,
 * framing, frame and queue limits), session, driver and scheduler, so there is no second
 * protocol. The page only dials (a page cannot listen); the daemon then treats it as any
 * device of the account. A hub (`addHub`) is used the way a daemon uses one, through the same
 * links (sync/p2p/hub-links.ts). Every change received is verified and checked by the replica's
 * ingest exactly as in the daemon.
 */
export class BrowserSync {
  private constructor(
    readonly node: SvcLibp2p,
    readonly transport: Libp2pTransport,
    readonly stack: SyncStack,
    private readonly stops: Array<() => void>,
    private readonly env: Env,
    private readonly hubBook: Map<string, HubAddress>,
    private readonly hubLinks: HubLinksCore,
    private readonly account: AccountEngine,
    private readonly filesPart: BrowserFiles | undefined,
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
        // daemons and hubs it is told to, and one on this machine is both.
        connectionGater: { denyDialMultiaddr: () => false },
      }),
    )
    const log = o.log ?? silentLogger
    // The daemon's misbehaviour accounting (node/daemon/p2p-service.ts): a peer past its fault
    // score is hung up on and its streams refused for a while, whichever protocol it faulted on.
    const guard = new PeerGuard({ now: () => env.now() })
    const hangUp = (peer: string) => {
      for (const c of node.getConnections()) if (c.remotePeer.toString() === peer) c.abort(new Error('peer backed off for misbehaving'))
    }
    const fault = (peer: string, weight?: 'max') => {
      if (guard.fault(peer, weight === 'max' ? guard.maxFaults : 1)) hangUp(peer)
    }
    const transport = await Libp2pTransport.start(node)
    transport.setPeerFilter((p) => guard.refused(p))
    transport.onPeerFault((peer) => fault(peer, 'max'))
    // The page's hubs, once they proved their identities: custodians of every space it holds.
    const custodians = new Set<string>()
    const stack = new SyncStack({
      transport,
      session: {
        host: {
          // Spaces of this account the page has not opened yet (the daemon created them).
          ...accountSyncHost(account, (spaceId, err) => log.warn('a space of this account could not be opened for a device of it', { spaceId, err: errField(err) })),
          custodian: (_spaceId, identity) => custodians.has(identity),
        },
        key: keys.account,
        crypto,
        env,
        ingestAhead: BROWSER_INGEST_AHEAD,
      },
      timer: browserTimer,
      roundTimeoutMs: o.roundTimeoutMs,
      spaceIds: () => account.openSpaces().map((s) => s.spaceId),
      faults: { fault: (peer) => fault(peer) },
      log,
    })
    stack.startScheduling(o.scheduler, () => env.now())
    const stops = [followAccountSpaces(stack, account)]
    const hubBook = new Map<string, HubAddress>()
    const hubLinks = new HubLinksCore({
      node,
      session: stack.session,
      scheduler: () => stack.scheduler,
      custodians,
      spaces: {
        spaceIds: () => account.openSpaces().map((s) => s.spaceId),
        onSpacesOpened: (fn) => account.events.on('spacesOpened', ({ spaceIds }) => fn(spaceIds)),
      },
      directory: {
        list: () => [...hubBook.values()],
        get: (peerId) => hubBook.get(peerId),
        tokenTaken: (peerId) => {
          const h = hubBook.get(peerId)
          if (h) delete h.token
        },
      },
      timer: browserTimer,
      now: () => env.now(),
      log: log.child('hubs'),
      redial: o.hubRedial,
    })
    // Files' blocks over the same links (BrowserFiles): trusted only as far as head sync proved.
    const files = await BrowserFiles.start(account, {
      node,
      env,
      log: log.child('blocks'),
      identityOf: (p) => stack.session.identityOf(p),
      custodian: (p) => {
        const id = stack.session.identityOf(p)
        return id !== undefined && custodians.has(id)
      },
      refused: (p) => guard.refused(p),
      fault,
    })
    return new BrowserSync(node, transport, stack, stops, env, hubBook, hubLinks, account, files)
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
    const peer = peerOf(addr)
    await this.node.dial(multiaddr(addr), { signal: AbortSignal.timeout(timeoutMs) })
    await this.until(timeoutMs, `no authenticated link to ${peer}`, () => this.transport.peers().includes(peer) && this.session.identityOf(peer) !== undefined)
    return peer
  }

  /**
   * Uses a hub (docs/hub.md) as a daemon does: dials it at a WebSocket multiaddr ending in
   * `/p2p/<peer id>` (`/ws`, or `/tls/ws` behind a TLS proxy) and keeps it connected (redialled
   * with backoff when the link drops, until `removeHub` or `stop`). Once the hub proves its
   * identity on head sync it is trusted as the custodian of this account's spaces (it syncs them
   * as a reader would and cannot read them), every space the page holds, and each it opens
   * later, is registered with it (`/svc/hub/1.0.0`, again every minute), and rounds about them
   * run with it like with any peer. `token` is an admission token (`svc hub admit`), needed only
   * if no device of the account was admitted yet; the page drops it once the hub took it.
   * Resolves with the hub's state once it answered the first registration (or rejects after
   * `timeoutMs`); `admission` says whether it keeps this account's spaces (a hub that does not
   * still syncs the spaces other admitted members registered).
   */
  async addHub(addr: string, o: { token?: string; timeoutMs?: number } = {}): Promise<BrowserHub> {
    const peerId = peerOf(addr)
    if (peerId === this.peerId) throw new Error('that is this page')
    const t = o.token
    if (t !== undefined && (t.length === 0 || t.length > HUB_WIRE.maxTokenBytes || !/^[1-9A-HJ-NP-Za-km-z]+$/.test(t))) {
      throw new Error('token must be the admission token the hub operator gave (base58)')
    }
    const old = this.hubBook.get(peerId)
    const token = t ?? old?.token
    const hub: HubAddress = { peerId, multiaddr: multiaddr(addr).toString(), ...(token ? { token } : {}) }
    this.hubBook.set(peerId, hub)
    this.hubLinks.watch(hub)
    const timeoutMs = o.timeoutMs ?? 30_000
    await this.until(timeoutMs, `hub ${peerId} did not answer`, () => this.hubLinks.state(peerId).admission !== null).catch((err: unknown) => {
      const last = this.hubLinks.state(peerId).dial?.lastError
      throw new Error(`${(err as Error).message}${last ? ` (last dial: ${last})` : ''}`)
    })
    return this.hubRecord(hub)
  }

  /** Stops using a hub: no more redials, no longer a custodian of this account's spaces; its link is closed. */
  async removeHub(peerId: string): Promise<void> {
    if (!this.hubBook.delete(peerId)) return
    this.hubLinks.unwatch(peerId)
    await this.hangUp(peerId)
  }

  /** The hubs added, with where each of the page's spaces stands with them. */
  hubs(): BrowserHub[] {
    return [...this.hubBook.values()].map((h) => this.hubRecord(h))
  }

  private hubRecord(h: HubAddress): BrowserHub {
    const st = this.hubLinks.state(h.peerId)
    const stats = this.stack.scheduler?.stats
    return {
      peerId: h.peerId,
      multiaddr: h.multiaddr,
      connected: st.connected,
      identity: st.identity,
      admission: st.admission,
      usage: st.usage,
      failures: st.dial?.failures ?? 0,
      lastError: st.dial?.lastError ?? null,
      nextDialAt: st.dial?.nextDialAt ?? null,
      spaces: this.account.openSpaces().map(({ spaceId }) => ({
        spaceId,
        state: this.hubLinks.spaceState(h.peerId, spaceId),
        lastSyncAt: stats?.get(spaceId)?.peek(h.peerId)?.lastSyncAt ?? null,
      })),
    }
  }

  private async until(timeoutMs: number, what: string, done: () => boolean): Promise<void> {
    const end = this.env.now() + timeoutMs
    while (!done()) {
      if (this.env.now() > end) throw new Error(`${what} after ${timeoutMs} ms`)
      await new Promise<void>((r) => this.env.setTimer(50, r))
    }
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

  private get files(): BrowserFiles {
    if (!this.filesPart) throw new Error('the account runs without the files module')
    return this.filesPart
  }

  /**
   * The live files of a space (or of one object), as the daemon's `GET {S}/files` lists them;
   * `cached` says whether every block of one is in this page already.
   */
  listFiles(spaceId: string, objectId?: string): Promise<FileInfo[]> {
    return this.files.list(spaceId, objectId)
  }

  /**
   * A file's bytes as a Blob of its media type. Blocks this page lacks are fetched block by
   * block from its hubs and connected daemons that may read the space, each checked against its
   * address, stored in the account's IndexedDB database, and decrypted in the page; a read of
   * blocks already here needs no network. `onProgress` gets the bytes read so far after each
   * block. Rejects with `file.not_found` (no such file, or its record has not synced yet) or
   * `file.not_available` (no reachable peer delivered a block; what arrived stays stored).
   */
  readFile(spaceId: string, fileId: string, o: ReadFileOptions = {}): Promise<Blob> {
    return this.files.read(spaceId, fileId, o)
  }

  /** Counters of the page's block exchange (blocks fetched, served, refused by reason). */
  fileExchangeStats(): ReturnType<BrowserFiles['stats']> | undefined {
    return this.filesPart?.stats()
  }

  async stop(): Promise<void> {
    this.hubLinks.stop()
    await this.filesPart?.close()
    for (const s of this.stops) s()
    await this.stack.close()
    await this.transport.close()
    await this.node.stop()
  }
}

/** The peer id an address ends in (`/p2p/<peer id>`). */
function peerOf(addr: string): string {
  const peer = multiaddr(addr)
    .getComponents()
    .findLast((c) => c.name === 'p2p')?.value
  if (!peer) throw new Error('the address must end in /p2p/<peer id>')
  return peer
}
