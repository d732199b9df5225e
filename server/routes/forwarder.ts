import { EVENT_SUBSCRIBER_BUFFER } from '../../sync/core/limits.ts'
import type { SseStream } from '../sse.ts'

/**
 * The spec's event subscriber buffer (16) in front of a stream: frames queue and go out on the
 * next tick; past 16 pending the newest are dropped and counted, and a `lagged {total}` frame
 * says how many, so the client knows to re-read (the stream has no replay).
 */
export function forwarder(stream: SseStream, event: string, depth = EVENT_SUBSCRIBER_BUFFER): (frame: unknown) => void {
  const queue: unknown[] = []
  let dropped = 0
  let scheduled = false
  const flush = () => {
    scheduled = false
    while (queue.length && !stream.closed) stream.send(event, queue.shift())
    if (dropped && !stream.closed) {
      stream.send('lagged', { total: dropped })
      dropped = 0
    }
  }
  return (frame) => {
    if (stream.closed) return
    if (queue.length >= depth) dropped++
    else queue.push(frame)
    if (!scheduled) {
      scheduled = true
      setImmediate(flush)
    }
  }
}
