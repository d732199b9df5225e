import { createServer, type Server } from 'node:http'

/**
 * A deterministic embedder on loopback speaking the OpenAI-compatible `/v1/embeddings` shape:
 * each word (lower case, diacritics off) and a few synonym classes hash into 64 dimensions, so
 * texts that share words or synonyms are close. `down` makes it answer 503; `calls` counts
 * requests. The only fake in the search tests: a model server is outside this machine.
 */
export interface TestEmbedder {
  url: string
  calls: number
  down: boolean
  /** While set, requests wait (a slow model): resolve it to let them through. */
  hold?: Promise<void>
  close(): Promise<void>
}

const DIMS = 64
/** Words that mean the same to this "model" (hybrid finds a synonym full-text misses). */
const SYNONYMS: Record<string, string> = {
  car: 'auto',
  automobile: 'auto',
  vehicle: 'auto',
  physician: 'doctor',
  medic: 'doctor',
  film: 'movie',
  cinema: 'movie',
  puppy: 'dog',
  canine: 'dog',
  kitten: 'cat',
  feline: 'cat',
}

function hash(s: string): number {
  let h = 2166136261
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 16777619)
  return h >>> 0
}

export function embedText(text: string, extra: Record<string, string> = {}): number[] {
  const v = new Array<number>(DIMS).fill(0)
  for (const raw of text
    .normalize('NFD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .match(/[\p{L}\p{N}]+/gu) ?? []) {
    const w = extra[raw] ?? SYNONYMS[raw] ?? raw
    v[hash(w) % DIMS] += 1
    v[hash(w + '#') % DIMS] += 0.5
  }
  return v
}

export async function startEmbedder(opts: { synonyms?: Record<string, string> } = {}): Promise<TestEmbedder> {
  const state: { calls: number; down: boolean; hold?: Promise<void> } = { calls: 0, down: false }
  const server: Server = createServer((req, res) => {
    let body = ''
    req.on('data', (c) => (body += c))
    req.on('end', async () => {
      await state.hold
      state.calls++
      if (state.down || req.url !== '/v1/embeddings') {
        res.writeHead(state.down ? 503 : 404).end()
        return
      }
      const { input } = JSON.parse(body) as { input: string[] }
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ data: input.map((t, index) => ({ index, embedding: embedText(t, opts.synonyms) })) }))
    })
  })
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
  const addr = server.address() as { port: number }
  return {
    url: `http://127.0.0.1:${addr.port}/v1/embeddings`,
    get calls() {
      return state.calls
    },
    set calls(n) {
      state.calls = n
    },
    get down() {
      return state.down
    },
    set down(d) {
      state.down = d
    },
    get hold() {
      return state.hold
    },
    set hold(h) {
      state.hold = h
    },
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections()
        server.close(() => r())
      }),
  }
}
