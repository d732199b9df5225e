import type { FastifyInstance } from 'fastify'

/** Spec Limits: in-flight requests and streams get up to 10 s to drain on shutdown. */
export const DRAIN_MS = 10_000

/**
 * Stops accepting connections, closes every SSE stream with `server_shutdown`, waits for
 * in-flight requests (cutting the connections left after `drainMs`), then tears the account
 * down and releases its lock (the app's onClose).
 */
export async function stopGracefully(app: FastifyInstance, drainMs = DRAIN_MS): Promise<void> {
  const cut = setTimeout(() => app.server.closeAllConnections(), drainMs)
  try {
    await app.close()
  } finally {
    clearTimeout(cut)
  }
}
