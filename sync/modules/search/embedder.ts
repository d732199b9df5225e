import { SEARCH_LIMITS } from './limits.ts'

/**
 * What vector search needs from a model: texts in, one vector each out. The default is none
 * (vector search `disabled`); `HttpEmbedder` speaks the OpenAI-compatible embeddings shape, so
 * a local Ollama or llama.cpp server works. Vectors come back normalized to unit length.
 */
export interface Embedder {
  /** Names the vector space: vectors of another model are never compared with these. */
  readonly model: string
  /** Throws `EmbedderUnavailable` when the model cannot answer now. */
  embed(texts: readonly string[]): Promise<Float32Array[]>
}

export class EmbedderUnavailable extends Error {
  constructor(message: string) {
    super(message)
    this.name = 'EmbedderUnavailable'
  }
}

export type FetchLike = (
  url: string,
  init: { method: string; headers: Record<string, string>; body: string; signal: AbortSignal },
) => Promise<{ ok: boolean; status: number; json(): Promise<unknown> }>

/** `POST <url>` with `{model, input: [texts]}`, answered `{data: [{embedding: number[], index}]}`. */
export class HttpEmbedder implements Embedder {
  constructor(
    readonly url: string,
    readonly model: string,
    private readonly fetchImpl: FetchLike = globalThis.fetch,
    private readonly timeoutMs: number = SEARCH_LIMITS.embedTimeoutMs,
  ) {}

  async embed(texts: readonly string[]): Promise<Float32Array[]> {
    if (texts.length === 0) return []
    let body: unknown
    try {
      const signal = AbortSignal.timeout(this.timeoutMs)
      const res = await this.fetchImpl(this.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ model: this.model, input: texts }),
        signal,
      })
      if (!res.ok) throw new EmbedderUnavailable(`embedder answered ${res.status}`)
      body = await res.json()
    } catch (err) {
      throw err instanceof EmbedderUnavailable ? err : new EmbedderUnavailable('embedder unreachable')
    }
    return parseEmbeddings(body, texts.length)
  }
}

/** The reply's vectors in input order; anything malformed is the embedder being unavailable. */
export function parseEmbeddings(body: unknown, n: number): Float32Array[] {
  const data = (body as { data?: unknown })?.data
  if (!Array.isArray(data) || data.length !== n) throw new EmbedderUnavailable('embedder reply has the wrong number of vectors')
  const out: Float32Array[] = new Array<Float32Array>(n)
  let dims = -1
  data.forEach((d: unknown, i) => {
    const e = (d as { embedding?: unknown })?.embedding
    const at = typeof (d as { index?: unknown })?.index === 'number' ? (d as { index: number }).index : i
    if (!Array.isArray(e) || e.length === 0 || e.length > SEARCH_LIMITS.maxDims || !Number.isInteger(at) || at < 0 || at >= n || out[at])
      throw new EmbedderUnavailable('malformed embedding')
    if (dims >= 0 && e.length !== dims) throw new EmbedderUnavailable('embeddings of different sizes')
    dims = e.length
    const v = new Float32Array(e.length)
    for (let j = 0; j < e.length; j++) {
      const x: unknown = e[j]
      if (typeof x !== 'number' || !Number.isFinite(x)) throw new EmbedderUnavailable('malformed embedding')
      v[j] = x
    }
    out[at] = unit(v)
  })
  return out
}

export function unit(v: Float32Array): Float32Array {
  let s = 0
  for (let i = 0; i < v.length; i++) s += v[i] * v[i]
  const n = Math.sqrt(s)
  if (n > 0) for (let i = 0; i < v.length; i++) v[i] /= n
  return v
}
