import { unreachable, type ClientContext } from './client.ts'
import { EXIT } from './io.ts'
import { readSseFrames } from './sse-frames.ts'

/**
 * Opens an SSE stream and hands each frame to `onFrame` until the stream ends; resolves with the
 * CLI's exit code: 0 on a `closed` frame or when `signal` aborts, 1 on a 4xx and 2 on a 5xx
 * (the error envelope's code and message on stderr), 3 when the server is unreachable or the
 * stream drops without a `closed` frame. Every streaming command shares these rules.
 */
export async function streamSse(ctx: ClientContext, url: string, init: RequestInit, signal: AbortSignal, onFrame: (event: string, data: any) => void): Promise<number> {
  let res: Response
  try {
    res = await fetch(url, { ...init, headers: { accept: 'text/event-stream', ...(init.headers as Record<string, string> | undefined) }, signal })
  } catch {
    if (signal.aborted) return EXIT.ok
    return unreachable(ctx)
  }
  if (!res.ok || !res.body) {
    const text = await res.text().catch(() => '')
    let err: { code?: string; message?: string } | undefined
    try {
      err = (JSON.parse(text) as { error?: typeof err }).error
    } catch {
      // not an envelope
    }
    ctx.io.stderr.write(`svc: ${res.status} ${err?.code ?? 'error'}: ${err?.message ?? res.statusText}\n`)
    return res.status >= 500 ? EXIT.server : EXIT.user
  }
  let closed = false
  try {
    await readSseFrames(res.body, (event, data) => {
      onFrame(event, data)
      if (event === 'closed') closed = true
    })
  } catch {
    if (signal.aborted) return EXIT.ok
  }
  if (closed || signal.aborted) return EXIT.ok
  ctx.io.stderr.write('svc: the stream ended without a closed frame\n')
  return EXIT.unreachable
}
