import type { Logger } from '../core/log.ts'
import { JoinDriver } from './join-driver.ts'
import type { JoinStatusEvent, Offer, SharingNetwork } from './sharing-network.ts'
import type { SyncSession } from './session.ts'
import type { SyncDriver, Timer } from './sync-driver.ts'

export interface WireSharingOptions {
  session: SyncSession
  driver: SyncDriver
  timer: Timer
  /** Connected peers (those not authenticated yet are skipped, and get the join once they are). */
  peers(): string[]
  retryBaseMs?: number
  retryMaxMs?: number
  log?: Logger
}

/**
 * SharingNetwork over a head-sync session and its driver: joins go out through a JoinDriver,
 * the session's `joined` answers come back as status events, and offers the session's
 * OfferGate lets through reach the one handler. Build it before traffic flows and pass
 * `offered` to the session as its `offered` option.
 */
export class WireSharing implements SharingNetwork {
  readonly joins: JoinDriver
  private offerHandler?: (o: Offer) => Promise<void>
  private readonly stops: Array<() => void> = []

  constructor(private readonly o: WireSharingOptions) {
    this.joins = new JoinDriver({
      send: (peer, spaceId, change) => o.driver.sendJoin(peer, spaceId, change),
      peers: () => o.peers().filter((p) => o.session.identityOf(p) !== undefined),
      timer: o.timer,
      retryBaseMs: o.retryBaseMs,
      retryMaxMs: o.retryMaxMs,
      log: o.log,
    })
    this.stops.push(
      o.session.events.on('joinAnswer', (e) => this.joins.answered(e)),
      o.session.events.on('authenticated', ({ peer }) => this.joins.peerUp(peer)),
    )
  }

  /** The session's `offered` option: hands an offer to the handler, if one is set. */
  readonly offered = (spaceId: string, identity: string, peer: string): Promise<void> => (this.offerHandler ? this.offerHandler({ spaceId, identity, peer }) : Promise.resolve())

  join(spaceId: string, change: Uint8Array): void {
    this.joins.ask(spaceId, change)
  }

  stopJoin(spaceId: string): void {
    this.joins.stop(spaceId)
  }

  joining(): string[] {
    return this.joins.spaces()
  }

  onJoinStatus(fn: (e: JoinStatusEvent) => void): () => void {
    return this.joins.events.on('status', fn)
  }

  onOffer(fn: (o: Offer) => Promise<void>): () => void {
    this.offerHandler = fn
    return () => {
      if (this.offerHandler === fn) this.offerHandler = undefined
    }
  }

  async syncWith(spaceId: string, peer: string): Promise<boolean> {
    return (await this.o.driver.syncSpace(peer, spaceId)).ok
  }

  close(): void {
    for (const s of this.stops.splice(0)) s()
    this.joins.close()
  }
}
