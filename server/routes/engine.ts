import type { FastifyInstance } from 'fastify'
import type { DaemonEngine } from '../../node/daemon/daemon-engine.ts'

/** Every route area served by the engine, each a plugin over the booted account's engine. */
export function engineRoutes(engine: DaemonEngine): Array<(app: FastifyInstance) => Promise<void>> {
  void engine
  return []
}
