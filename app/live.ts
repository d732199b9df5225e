/**
 * Live streams: the API's SSE surfaces read with fetch and a streaming body, since windowed
 * queries are POSTs (spec Events rule 3) that EventSource cannot send. A stream that ends, by
 * a `closed` frame (overflow, drifted, shutdown) or a dropped connection, is opened again with a
 * fresh request after a short pause: the spec offers no resume, so the new snapshot replaces
 * what was held.
 */
export type FrameHandler = (event: string, data: unknown) => void

export interface StreamOptions {
  method?: 'GET' | 'POST'
  body?: unknown
  /** Called with false when the stream drops and true once it is live again. */
  onLive?: (live: boolean) => void
}

const RETRY_MS = [250, 500, 1000, 2000, 4000]

/** Opens `path` and hands every frame to `onFrame` until the returned function is called. */
export function openStream(path: string, onFrame: FrameHandler, opts: StreamOptions = {}): () => void {
  let stopped = false
  let controller: AbortController | undefined
  let failures = 0

  const once = async (): Promise<void> => {
    controller = new AbortController()
    const res = await fetch(path, {
      method: opts.method ?? (opts.body === undefined ? 'GET' : 'POST'),
      headers: { accept: 'text/event-stream', ...(opts.body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: opts.body === undefined ? undefined : JSON.stringify(opts.body),
      signal: controller.signal,
    })
    if (!res.ok || !res.body) {
      const text = await res.text().catch(() => '')
      onFrame('error', safeJson(text))
      // A client error will not get better by asking again.
      if (res.status >= 400 && res.status < 500) stopped = true
      return
    }
    const reader = res.body.pipeThrough(new TextDecoderStream()).getReader()
    let buffer = ''
    for (;;) {
      const { value, done } = await reader.read()
      if (done) return
      buffer += value
      let end: number
      while ((end = buffer.indexOf('\n\n')) >= 0) {
        const block = buffer.slice(0, end)
        buffer = buffer.slice(end + 2)
        let event = 'message'
        const data: string[] = []
        for (const line of block.split('\n')) {
          if (line.startsWith('event:')) event = line.slice(6).trim()
          else if (line.startsWith('data:')) data.push(line.slice(5).trimStart())
        }
        if (data.length === 0 && event === 'message') continue
        if (event === 'ready') {
          failures = 0
          opts.onLive?.(true)
        }
        onFrame(event, safeJson(data.join('\n')))
        if (event === 'closed') return
      }
    }
  }

  const loop = async () => {
    while (!stopped) {
      try {
        await once()
      } catch (err) {
        if (stopped) return
        console.warn('svc app: stream dropped', path, err)
      }
      if (stopped) return
      opts.onLive?.(false)
      await new Promise((r) => setTimeout(r, RETRY_MS[Math.min(failures++, RETRY_MS.length - 1)]))
    }
  }
  void loop()
  return () => {
    stopped = true
    controller?.abort()
  }
}

function safeJson(text: string): unknown {
  try {
    return text ? JSON.parse(text) : {}
  } catch {
    return text
  }
}

export interface Row {
  id: string
  [key: string]: unknown
}

export interface WindowChange {
  added?: Array<{ id: string; doc: Row }>
  updated?: Array<{ id: string; doc: Row }>
  removed?: Array<{ id: string; reason: string }>
}

/**
 * A windowed live query (snapshot, then changes) kept as an ordered list of rows. `onRemoved`
 * hears why a row left (deleted, filtered-out, displaced), so a table can say why.
 */
export function liveQuery(
  path: string,
  body: unknown,
  onRows: (rows: Row[]) => void,
  hooks: { onRemoved?: (id: string, reason: string) => void; onError?: (err: unknown) => void } = {},
): () => void {
  let rows = new Map<string, Row>()
  const emit = () => onRows([...rows.values()])
  return openStream(
    path,
    (event, data) => {
      if (event === 'snapshot') {
        rows = new Map(((data as { records?: Row[] }).records ?? []).map((r) => [r.id, r]))
        emit()
      } else if (event === 'changes') {
        for (const change of data as WindowChange[]) {
          for (const a of change.added ?? []) rows.set(a.id, a.doc)
          for (const u of change.updated ?? []) rows.set(u.id, u.doc)
          for (const r of change.removed ?? []) {
            rows.delete(r.id)
            hooks.onRemoved?.(r.id, r.reason)
          }
        }
        emit()
      } else if (event === 'error') {
        hooks.onError?.(data)
      }
    },
    { body },
  )
}
