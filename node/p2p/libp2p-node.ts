import { errField, silentLogger, type Logger } from '../../sync/core/log.ts'
import { createLibp2p, type Libp2p } from 'libp2p'
import { tcp } from '@libp2p/tcp'
import { webSockets } from '@libp2p/websockets'
import { mdns } from '@libp2p/mdns'
import { generateKeyPairFromSeed } from '@libp2p/crypto/keys'
import type { KeyPair } from '../../sync/crypto/keys.ts'
import { P2P } from '../../sync/p2p/constants.ts'
import { svcNodeOptions, type SvcLibp2p } from '../../sync/p2p/node-options.ts'

export type { SvcLibp2p }

export interface NodeOptions {
  /** The device key: its Ed25519 public key is the peer id. */
  deviceKey: KeyPair
  /** Where the node's own background work logs (default: nowhere). */
  log?: Logger
  /**
   * Multiaddrs to listen on; default all interfaces, random port, so LAN peers can reach us.
   * WebSocket addresses (`.../tcp/N/ws`) among them are where browsers dial in; when none is
   * given, WebSockets listen on loopback only (`DEFAULT_WS_LISTEN`): a page on this machine can
   * sync, the LAN cannot reach that listener unless configured to.
   */
  listen?: string[]
  /** LAN discovery over mDNS (only ever inside a private network namespace in tests). */
  mdns?: boolean
  mdnsIntervalMs?: number
  /** Peers to refuse for now (backed off for misbehaving): no dial to them, no connection from them. */
  refuse?: (peerId: string) => boolean
  /** Open connections at most (default P2P.maxConnections, a device's; a hub serves many more). */
  maxConnections?: number
  /** Inbound connection rates (sync/p2p/node-options.ts); libp2p's defaults when absent. */
  inbound?: { perHostPerSecond: number; pending: number }
}

/** The TCP listener when the configuration names none: every interface, any free port (the last run's, node/p2p/stable-port.ts). */
export const DEFAULT_TCP_LISTEN: readonly string[] = ['/ip4/0.0.0.0/tcp/0']

/** The WebSockets listener when the configuration names none: loopback, any free port. */
export const DEFAULT_WS_LISTEN = '/ip4/127.0.0.1/tcp/0/ws'

const isWebSocketAddr = (ma: string) => /\/(ws|wss|tls\/ws)(\/|$)/.test(ma)

/** The listen addresses with a WebSockets listener added on loopback when none is configured. */
export function withWebSocketListen(listen: readonly string[]): string[] {
  return listen.some(isWebSocketAddr) ? [...listen] : [...listen, DEFAULT_WS_LISTEN]
}

/**
 * A libp2p node as svc uses it: TCP and WebSockets (browsers), Noise, Yamux, identify, and
 * optionally mDNS. Peers found by mDNS are dialled at once, so two daemons on one LAN connect
 * with no address given. A browser peer is a peer like any other: the same gater, guard,
 * connection limit and head-sync transport see it (only the socket differs).
 */
export async function createSvcNode(opts: NodeOptions): Promise<SvcLibp2p> {
  const privateKey = await generateKeyPairFromSeed('Ed25519', opts.deviceKey.privateKey)
  const refuse = opts.refuse ?? (() => false)
  const log = opts.log ?? silentLogger
  const node = await createLibp2p(
    svcNodeOptions({
      privateKey,
      listen: withWebSocketListen(opts.listen ?? DEFAULT_TCP_LISTEN),
      transports: [tcp(), webSockets()],
      peerDiscovery: opts.mdns ? [mdns({ interval: opts.mdnsIntervalMs ?? P2P.mdnsIntervalMs, serviceTag: P2P.mdnsServiceTag })] : [],
      maxConnections: opts.maxConnections ?? P2P.maxConnections,
      ...(opts.inbound ? { inbound: opts.inbound } : {}),
      // Checked once Noise has authenticated the remote key, before any protocol runs.
      connectionGater: {
        denyDialPeer: (peer) => refuse(peer.toString()),
        denyInboundEncryptedConnection: (peer) => refuse(peer.toString()),
        denyOutboundEncryptedConnection: (peer) => refuse(peer.toString()),
      },
    }),
  )
  hardenWebSocketListeners(node)
  node.addEventListener('peer:discovery', (evt) => {
    const { id, multiaddrs } = evt.detail
    if (id.equals(node.peerId)) return
    // Dial what mDNS found; a failure just means that peer is not reachable now.
    node.dial(multiaddrs.length ? multiaddrs : id).catch((err: unknown) => log.debug('dialing a peer found by mDNS failed', { peer: id.toString(), err: errField(err) }))
  })
  return node
}

/**
 * Two holes in @libp2p/websockets' listener (10.1), closed here on each WebSockets listener:
 * - Its `ws` server buffers a whole WebSocket message before libp2p sees a byte of it, up to
 *   `ws`'s default of 100 MiB, with no option to lower it: a stranger could make each of
 *   maxConnections sockets hold that much before Noise ran. The server reads
 *   `options.maxPayload` at every upgrade, so it is lowered to P2P.maxWebSocketMessageBytes
 *   (a browser sends one Noise frame, at most 64 KiB, per message).
 * - It sets no 'error' listener on the sockets it accepts, and `ws` reports a peer's protocol
 *   error (a message over the limit, a bad opcode, an unmasked frame) as an 'error' event: with
 *   no listener that throws, and one malformed frame from any local process ended the daemon
 *   (test/security/browser-peers.test.ts). Each accepted socket now gets a listener; `ws`
 *   closes the socket itself (1009, 1002, ...) and libp2p sees a reset connection.
 * Both reach into the listener's fields (`wsServer`, `onWsServerConnection`); the test above
 * fails if a new version of the transport moves them.
 */
function hardenWebSocketListeners(node: Libp2p): void {
  type WsListener = {
    wsServer?: { options?: { maxPayload?: number } }
    onWsServerConnection?: (socket: { on(event: 'error', fn: (err: Error) => void): void }, req: unknown) => void
  }
  const listeners = (node as unknown as { components?: { transportManager?: { getListeners(): unknown[] } } }).components?.transportManager?.getListeners() ?? []
  for (const l of listeners as WsListener[]) {
    if (!l.wsServer?.options || typeof l.onWsServerConnection !== 'function') continue
    l.wsServer.options.maxPayload = P2P.maxWebSocketMessageBytes
    const accept = l.onWsServerConnection.bind(l)
    // onUpgrade reads this property for every upgrade, so the wrapper sees every socket.
    l.onWsServerConnection = (socket, req) => {
      socket.on('error', () => undefined)
      accept(socket, req)
    }
  }
}
