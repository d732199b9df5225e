import type { SchedulerOptions } from '../../sync/protocol/sync-scheduler.ts'

/**
 * How a hub schedules head sync. It relays what it stores at once (the "within a
 * second"), and leaves the periodic round to the devices: a hub with hundreds of peers on
 * hundreds of spaces would otherwise run a round per pair every 30 s for nothing.
 */
export const HUB_SCHEDULER: SchedulerOptions = { relayMs: 50, debounceMs: 50, periodMs: 300_000 }

/**
 * Connections a hub process holds at once (`svc hub --max-connections`). A daemon's 64
 * (P2P.maxConnections) would turn away most of a team: every device of every member keeps a
 * connection to its hubs. bench/hub.ts measured under 1 MB of the hub's RSS per connected
 * peer syncing two small spaces (docs/performance.md, "The hub").
 */
export const HUB_MAX_CONNECTIONS = 1_024

/**
 * Inbound connections per second from one host, and handshakes in flight: libp2p's 5 and 10
 * suit a device, but a hub's devices often share an address (a proxy, a load balancer, one
 * office NAT, the tests' loopback), and 5 a second turned most of them away after a restart.
 * Each still costs a Noise handshake, bounded by these and by the connection limit.
 */
export const HUB_INBOUND = { perHostPerSecond: 100, pending: 64 } as const

/** Defaults of `svc hub` (docs/hub.md). */
export const HUB_CLI_DEFAULTS = {
  listen: '/ip4/0.0.0.0/tcp/4410',
  operatorHost: '127.0.0.1',
  operatorPort: 4411,
  keyFile: 'hub.key',
  sqliteFile: 'hub.sqlite',
  maxConnections: HUB_MAX_CONNECTIONS,
  /**
   * Change bytes the open kept spaces may hold in memory; past it the least recently used close
   * and reopen from the store on demand (a replica holds about its change bytes and a few hundred
   * bytes per change on top: docs/hub.md "Memory").
   */
  maxOpenBytes: 512 * 1024 * 1024,
} as const
