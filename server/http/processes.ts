import { ProcessRegistry } from '../../node/daemon/processes.ts'

/**
 * Runs a route's long work as a process of the daemon's registry (`GET /v1/processes` past 3 s,
 * announced on the event bus by the registry: node/daemon/processes.ts): `id` joins work of the
 * same id, `work` gets a progress reporter. A host without a registry (a bare app) just runs it.
 */
export async function asProcess<T>(host: unknown, id: string, kind: string, work: (progress: (p: Record<string, number>) => void) => Promise<T>): Promise<T> {
  const registry = (host as { processes?: unknown }).processes
  if (!(registry instanceof ProcessRegistry)) return work(() => undefined)
  const end = registry.start(id, kind)
  try {
    return await work((p) => registry.progress(id, p))
  } finally {
    end()
  }
}

/** A body passed through, its byte count reported as `{bytes}` as chunks arrive. */
export async function* counted(body: AsyncIterable<Uint8Array>, report: (p: Record<string, number>) => void): AsyncIterable<Uint8Array> {
  let bytes = 0
  for await (const chunk of body) {
    bytes += chunk.length
    report({ bytes })
    yield chunk
  }
}
