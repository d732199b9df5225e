import { EVENT_SUBSCRIBER_BUFFER } from '../../sync/core/limits.ts'
import type { SseStream } from '../sse.ts'

/**
 * A 16-deep forwarder (spec Limits "event subscriber buffer"): frames queue per stream and go
 * out on the next tick; when more are pending the newest are dropped and counted, and a
 * `lagged {total}` frame says how many.
 */
export function forwarder(stream: SseStream, event: string) {
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
  return (frame: unknown) => {
    if (queue.length >= EVENT_SUBSCRIBER_BUFFER) dropped++
    else queue.push(frame)
    if (!scheduled) {
      scheduled = true
      setImmediate(flush)
    }
  }
}
