import type { FastifyInstance, FastifyReply } from 'fastify'
import { LiveWindow, type ChangesFrame, type SubscribeBody } from '../../sync/query/index.ts'
import type { LiveFeed } from '../../sync/space/live-feeds.ts'
import type { SpaceChange } from '../../sync/space/space-engine.ts'
import type { CloseReason } from '../sse.ts'
import { openShared } from './live-share.ts'

/**
 * Windowed query/subscribe streams (spec Events): `ready`, one `snapshot` frame
 * `{records, total?, hasNext?}`, then `changes` frames `[{versionId, added, updated, removed}]`
 * (one entry per write; writes that arrive while a frame is being built share one frame), and
 * a terminal `closed`: `overflow` (the stream's mailbox, `mailboxCapacity`), `drifted` (the
 * window fell short beyond `driftBudgetPercent`), `sdk_closed` (the subscribed object was
 * deleted), `server_shutdown` / `deauthorized` (the hub).
 *
 * A feed (sync/space/live-feeds.ts, or a module's) translates the space's changes; this file
 * only streams them. Feeds with `share` (the object rows) skip the per-stream pump: see
 * live-share.ts.
 */
export async function openLive(app: FastifyInstance, reply: FastifyReply, body: SubscribeBody, feed: LiveFeed): Promise<void> {
  if (feed.share && feed.refill) {
    openShared(app, reply, body, feed, feed.share, feed.refill)
    return
  }
  const pending: SpaceChange[] = []
  let kick: (() => void) | undefined = undefined
  const off = feed.listen((c) => {
    pending.push(c)
    kick?.()
  })
  let window: LiveWindow
  try {
    const docs = await feed.load()
    window = new LiveWindow(docs, body.query, { driftBudgetPercent: body.driftBudgetPercent, ...(feed.refill ? { refill: feed.refill } : {}) })
  } catch (err) {
    off()
    throw err
  }
  const stream = app.sse.open(reply, { mailboxCapacity: body.mailboxCapacity })
  if (stream.closed) {
    off()
    return
  }
  stream.onClose(() => off())
  stream.send('snapshot', window.snapshot)

  let running = false
  const pump = async () => {
    if (running) return
    running = true
    try {
      while (pending.length > 0 && !stream.closed) {
        const frames: ChangesFrame[] = []
        let end: CloseReason | undefined
        for (const c of pending.splice(0)) {
          const t = await feed.translate(c, window)
          if (!t) continue
          const frame = window.apply(t.set, t.ops)
          if (frame) frames.push(frame)
          if (window.drifted) end = 'drifted'
          else if (t.end) end = t.end
          if (end) break
        }
        if (frames.length > 0) stream.send('changes', frames)
        if (end) stream.close(end)
      }
    } catch (err) {
      reply.log.error({ err }, 'live query failed')
      stream.close('sdk_closed')
    } finally {
      running = false
    }
  }
  kick = () => void pump()
  if (pending.length > 0) kick()
}
