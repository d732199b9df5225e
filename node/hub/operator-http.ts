import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { errField, type Logger } from '../../sync/core/log.ts'

/** What `GET /health` answers (docs/hub.md "Operations"). */
export interface HubHealth {
  identity: string
  peerId: string
  addrs: string[]
  store: string
  spacesKept: number
  spacesOpen: number
  bytesStored: number
  changesStored: number
  blocksStored: number
  peersConnected: number
  changesPerSecond: number
  queues: { appends: number; control: number; blocks: number; rounds: number }
  blocks: Record<string, number>
  /** Live events relayed, and dropped by reason. */
  events: Record<string, number>
}

/** Prometheus text exposition of the health figures: one gauge each, named svc_hub_*. */
export function prometheusText(h: HubHealth): string {
  const lines: string[] = []
  const gauge = (name: string, help: string, value: number, labels = '') => {
    if (!lines.some((l) => l.startsWith(`# HELP svc_hub_${name} `))) lines.push(`# HELP svc_hub_${name} ${help}`, `# TYPE svc_hub_${name} gauge`)
    lines.push(`svc_hub_${name}${labels} ${value}`)
  }
  gauge('spaces_kept', 'Spaces at least one admitted account asked this hub to keep.', h.spacesKept)
  gauge('spaces_open', 'Kept spaces whose replicas are open in this process.', h.spacesOpen)
  gauge('bytes_stored', 'Bytes of changes and file blocks in the store.', h.bytesStored)
  gauge('changes_stored', 'Changes in the store.', h.changesStored)
  gauge('blocks_stored', 'File blocks in the store.', h.blocksStored)
  gauge('peers_connected', 'Peers connected to this process.', h.peersConnected)
  gauge('changes_per_second', 'Changes this process stored per second, over the last ten seconds.', h.changesPerSecond)
  for (const [q, n] of Object.entries(h.queues)) gauge('queue_depth', 'Work waiting in each of the hub process queues.', n, `{queue="${q}"}`)
  for (const [k, n] of Object.entries(h.blocks)) gauge('block_requests', 'Block exchange requests since start, by outcome.', n, `{outcome="${k}"}`)
  for (const [k, n] of Object.entries(h.events)) gauge('live_events', 'Live events since start: relayed, or dropped by reason.', n, `{outcome="${k}"}`)
  return lines.join('\n') + '\n'
}

/**
 * The operator's endpoint: `GET /health` (JSON) and `GET /metrics` (Prometheus text), on the
 * address the operator gives (loopback by default): the figures name no space and no account,
 * but they are the operator's, not the peers'.
 */
export class OperatorEndpoint {
  private constructor(
    private readonly server: Server,
    readonly url: string,
  ) {}

  static async start(at: { host: string; port: number }, health: () => Promise<HubHealth>, log: Logger): Promise<OperatorEndpoint> {
    // eslint-disable-next-line @typescript-eslint/no-misused-promises -- the handler catches its own failures and always answers
    const server = createServer(async (req, res) => {
      const path = (req.url ?? '').split('?')[0]
      if (req.method !== 'GET' || (path !== '/health' && path !== '/metrics')) return void res.writeHead(404).end()
      try {
        const h = await health()
        if (path === '/metrics') res.writeHead(200, { 'content-type': 'text/plain; version=0.0.4' }).end(prometheusText(h))
        else res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ ok: true, ...h }))
      } catch (err) {
        log.error('the store could not be read for health', { err: errField(err) })
        res.writeHead(503, { 'content-type': 'application/json' }).end(JSON.stringify({ ok: false }))
      }
    })
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject)
      server.listen(at.port, at.host, resolve)
    })
    const addr = server.address() as AddressInfo
    return new OperatorEndpoint(server, `http://${at.host}:${addr.port}`)
  }

  close(): Promise<void> {
    return new Promise((r) => this.server.close(() => r()))
  }
}
