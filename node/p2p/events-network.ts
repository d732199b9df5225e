import { EVENTS } from '../../sync/core/events-limits.ts'
import type { BusNetwork, EventBus } from '../../sync/modules/events/bus.ts'
import { type BusEvent, dataBytes, validTarget, validType, withinTopicBudget } from '../../sync/modules/events/envelope.ts'
import { ownsType } from '../../sync/modules/events/namespace.ts'
import { EventsReceiver } from '../../sync/protocol/events-receiver.ts'
import { isFullMember } from '../../sync/replica/full-membership.ts'
import { encodeEventFrame, type EventBody } from '../../sync/protocol/events-wire.ts'
import { RateBuckets } from '../../sync/protocol/rate-buckets.ts'
import type { Json } from '../../sync/crdt/ops.ts'
import { Libp2pTransport } from '../../sync/p2p/libp2p-transport.ts'
import { P2P } from '../../sync/p2p/constants.ts'
import type { P2pProtocolContext } from './protocols/protocol.ts'

export interface EventsNetworkOptions extends P2pProtocolContext {
  /** The account's bus (its `eventsModule` service): peers' events are delivered to it, its network-scope events sent. */
  bus: EventBus
}

/** Whether a body a peer sent is one a local publisher could have sent (envelope.ts's rules). */
function acceptable(body: EventBody, signer: string): boolean {
  if (!validType(body.type) || !ownsType(body.type, signer)) return false
  if (body.target !== undefined && !validTarget(body.target)) return false
  return withinTopicBudget(body.type, body.target) && (body.data === undefined || dataBytes(body.data) <= EVENTS.maxDataBytes)
}

/**
 * Network-scope events over their own libp2p protocol (`/svc/events/1.0.0`): one framed stream
 * each way per peer (the head-sync transport's code, with small frames). An account event goes
 * to every connected peer that proved this account; a space event to every connected peer
 * whose account is a full member of the space at our ACL state; both to our hubs, which relay
 * them (node/hub/hub-events.ts). Each is sent once per peer
 * and never stored or retried (at most once). Our own publishing keeps to the peers' rate
 * (publishBurst, then 30/s), so an honest daemon is never dropped by the receivers' bucket;
 * past it the network copy of an event is dropped (the local delivery stands).
 */
export class EventsNetwork implements BusNetwork {
  private readonly outgoing: RateBuckets
  readonly receiver: EventsReceiver
  /** Events not sent, by reason (counted, never answered). */
  readonly unsent: Record<string, number> = {}
  /** The last send in line (bounded by the outgoing rate: at most a burst of sends wait). */
  private sending: Promise<void> = Promise.resolve()

  private constructor(
    private readonly o: EventsNetworkOptions,
    private readonly transport: Libp2pTransport,
  ) {
    const spaces = o.spaces
    this.outgoing = new RateBuckets(EVENTS.publishBurst, EVENTS.publishRefillMs, 1, () => o.env.now())
    this.receiver = new EventsReceiver(
      {
        accountId: spaces.accountId,
        techSpaceId: spaces.techSpaceId,
        replica: (id) => spaces.replica(id),
        accept: (body, _scope, signer) => acceptable(body, signer),
        relay: (peer) => o.custodian?.(peer) === true,
      },
      o.crypto,
      () => o.env.now(),
    )
  }

  static async start(o: EventsNetworkOptions): Promise<EventsNetwork> {
    const transport = await Libp2pTransport.start(o.node, {
      protocol: EVENTS.protocol,
      maxFrameBytes: EVENTS.maxFrameBytes,
      maxQueuedSendBytes: EVENTS.maxQueuedSendBytes,
      sendWatermarkBytes: EVENTS.sendWatermarkBytes,
      maxQueuedFrames: EVENTS.maxQueuedFrames,
      maxReadBufferBytes: EVENTS.maxFrameBytes + 16 + P2P.maxStreamWindowBytes,
    })
    transport.setPeerFilter((peer) => o.refused(peer))
    transport.onPeerFault((peer) => o.fault(peer, 'max'))
    const net = new EventsNetwork(o, transport)
    const bus = o.bus
    transport.onMessage(async (peer, bytes) => {
      const r = await net.receiver.receive(peer, o.identityOf(peer), bytes)
      if (typeof r === 'string') {
        // A forgery or garbage from a proved peer is a fault; rate and duplicates are not.
        if (r === 'bad_signature' || r === 'malformed' || r === 'signer_mismatch' || r === 'bad_payload') o.fault(peer)
        return
      }
      const event: BusEvent = { type: r.body.type, scope: r.scope }
      if (r.scope === 'space') event.spaceId = r.spaceId
      if (r.body.target !== undefined) event.target = r.body.target
      if (r.body.data !== undefined) event.data = r.body.data as Json
      bus.deliverRemote(event, r.identity)
    })
    bus.attachNetwork(net)
    return net
  }

  publish(event: BusEvent): void {
    if (event.scope === 'device') return
    const spaces = this.o.spaces
    const replica = spaces.replica(event.scope === 'account' ? spaces.techSpaceId : event.spaceId!)
    if (!replica) {
      this.count('no_space')
      return
    }
    const keyId = replica.acl.current().readKeyId
    const key = keyId === undefined ? undefined : replica.keyring.get(keyId)
    if (!keyId || !key) {
      this.count('no_key')
      return
    }
    // Our hubs too: a hub forwards the frame to the space's members connected to it (or, for an
    // account event, to our other devices), who may not reach us directly.
    const to = this.transport.peers().filter((p) => {
      const id = this.o.identityOf(p)
      if (id === undefined) return false
      if (this.o.custodian?.(p) === true) return true
      return event.scope === 'account' ? id === spaces.accountId : isFullMember(replica, id)
    })
    if (to.length === 0) {
      this.count('no_peer')
      return
    }
    if (!this.outgoing.take('')) {
      this.count('rate')
      return
    }
    const body: EventBody = { type: event.type, ...(event.target !== undefined ? { target: event.target } : {}), ...(event.data !== undefined ? { data: event.data } : {}) }
    const framed = encodeEventFrame({
      scope: event.scope,
      spaceId: replica.spaceId,
      readKeyId: keyId,
      readKey: key,
      body,
      key: this.o.accountKey,
      crypto: this.o.crypto,
      env: this.o.env,
    })
    // Signatures run in parallel on the thread pool; frames leave in publish order.
    this.sending = this.sending
      .then(() => framed)
      .then((frame) => {
        for (const p of to) {
          try {
            this.transport.send(p, frame)
          } catch {
            this.count('send_failed')
          }
        }
      })
      .catch(() => this.count('encode_failed'))
  }

  stats() {
    return { unsent: { ...this.unsent }, dropped: { ...this.receiver.drops } satisfies Record<string, number> }
  }

  private count(reason: string) {
    this.unsent[reason] = (this.unsent[reason] ?? 0) + 1
  }

  async close(): Promise<void> {
    this.o.bus.attachNetwork(undefined)
    await this.transport.close()
  }
}
