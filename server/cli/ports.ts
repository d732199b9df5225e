/**
 * Without `agentsPort`, the agent control API listens on the API's port plus this (7001: 7010),
 * or any free port when the API's port is 0 or that one is taken: two daemons on one machine
 * never contend for one control port (issue 39, item 4). `svc agents` finds it the same way.
 */
export const AGENTS_PORT_OFFSET = 9

/** The control API's URL for a daemon's API URL, as `svc serve` picks its port by default. */
export function controlUrlOf(apiUrl: string): string {
  const u = new URL(apiUrl)
  u.port = String(Number(u.port || 80) + AGENTS_PORT_OFFSET)
  return u.origin
}
