/**
 * Reads Server-Sent Events from a fetch body, calling `onFrame` for each `event`/`data` pair
 * (keepalive comments are skipped). Resolves when the body ends; `onFrame` returning true
 * stops reading early.
 */
// eslint-disable-next-line @typescript-eslint/no-invalid-void-type -- a frame handler returns true to stop, or nothing
export async function readSseFrames(body: ReadableStream<Uint8Array>, onFrame: (event: string, data: unknown) => boolean | void): Promise<void> {
  const decoder = new TextDecoder()
  let buffer = ''
  for await (const chunk of body as unknown as AsyncIterable<Uint8Array>) {
    buffer += decoder.decode(chunk, { stream: true })
    let i
    while ((i = buffer.indexOf('\n\n')) >= 0) {
      const block = buffer.slice(0, i)
      buffer = buffer.slice(i + 2)
      const event = /^event: (.*)$/m.exec(block)?.[1]
      const data = /^data: (.*)$/m.exec(block)?.[1]
      if (event === undefined || data === undefined) continue
      if (onFrame(event, JSON.parse(data))) return
    }
  }
}
