import type { FastifyBaseLogger, FastifyInstance, FastifyReply } from 'fastify'
import { LiveWindow, type SubscribeBody } from '../../sync/query/index.ts'
import type { SpaceChange } from '../../sync/space/space-engine.ts'
import { type CloseReason, type SseStream, sseFrame } from '../sse.ts'
import type { LiveFeed, SharedTranslate } from '../../sync/space/live-feeds.ts'

/**
 * Shared windows: subscriptions to one collection with the same query body share one
 * LiveWindow. A write is applied once per distinct query and its `changes` frame serialized
 * once; the text then goes to every member's own stream, synchronously, from the change
 * listener. Each member keeps its own SSE stream and mailbox (`mailboxCapacity`), so a slow
 * reader overflows and closes alone.
 *
 * Why it is exact: the feed's windows refill from the whole collection, so a window always
 * shows the true top of the matching set, and the frame of a write depends only on the query,
 * the window before it and the write. A joiner builds its own window (its snapshot, `total`
 * included) and joins a group only when that window equals the group's, document for
 * document; otherwise (a write not yet announced to the group) it gets a group of its own.
 */

interface Share {
  scope: object
  translate: SharedTranslate
}

/**
 * The open window groups of one app, per collection (`scope`); buildApp decorates the app with
 * one (`app.liveShares`), so two apps in one process never share a window.
 */
export class LiveShares {
  private readonly byScope = new WeakMap<object, Map<string, WindowGroup>>()

  groups(scope: object): Map<string, WindowGroup> {
    let groups = this.byScope.get(scope)
    if (!groups) {
      groups = new Map()
      this.byScope.set(scope, groups)
    }
    return groups
  }
}

declare module 'fastify' {
  interface FastifyInstance {
    /** Shared live windows (live-share.ts). */
    liveShares: LiveShares
  }
}

/** The fields that decide what a window shows and how it reports it. */
function groupKey(body: SubscribeBody): string {
  return JSON.stringify([body.filter ?? null, body.sort ?? null, body.limit ?? null, body.offset, body.projection ?? null, body.driftBudgetPercent])
}

class WindowGroup {
  private readonly members = new Set<SseStream>()
  private readonly off: () => void
  private dissolved = false

  constructor(
    readonly window: LiveWindow,
    feed: LiveFeed,
    private readonly share: Share,
    private readonly log: FastifyBaseLogger,
    private readonly forget: (g: WindowGroup) => void,
  ) {
    this.off = feed.listen((c) => this.onChange(c))
  }

  add(stream: SseStream): void {
    this.members.add(stream)
    stream.onClose(() => {
      this.members.delete(stream)
      if (this.members.size === 0) this.dissolve()
    })
  }

  dissolve(): void {
    if (this.dissolved) return
    this.dissolved = true
    this.off()
    this.forget(this)
  }

  private onChange(c: SpaceChange): void {
    if (this.dissolved) return
    let text: string | undefined
    let end: CloseReason | undefined
    try {
      const t = this.share.translate(c)
      if (!t) return
      const frame = this.window.apply(t.set, t.ops)
      if (frame) text = sseFrame('changes', [frame])
      if (this.window.drifted) end = 'drifted'
      else if (t.end) end = t.end
    } catch (err) {
      this.log.error({ err }, 'live query failed')
      end = 'sdk_closed'
    }
    for (const s of this.members) {
      if (text !== undefined) s.sendFrame(text)
      if (end) s.close(end)
    }
    if (end) this.dissolve()
  }
}

/** Opens a stream on a feed with `share`: joins (or starts) the group of its query. */
export function openShared(app: FastifyInstance, reply: FastifyReply, body: SubscribeBody, feed: LiveFeed, share: Share, refill: NonNullable<LiveFeed['refill']>): void {
  // Nothing below awaits: no write can land between this window's read and its joining.
  const window = new LiveWindow(refill(), body.query, { driftBudgetPercent: body.driftBudgetPercent, refill })
  const groups = app.liveShares.groups(share.scope)
  const key = groupKey(body)
  const known = groups.get(key)
  let group: WindowGroup
  if (known && known.window.sameWindow(window)) group = known
  else {
    const registry = groups
    group = new WindowGroup(window, feed, share, app.log, (g) => {
      if (registry.get(key) === g) registry.delete(key)
    })
    if (!known) groups.set(key, group)
  }
  const stream = app.sse.open(reply, { mailboxCapacity: body.mailboxCapacity })
  if (!stream.closed) stream.send('snapshot', window.snapshot)
  if (!stream.closed) group.add(stream)
  else if (group !== known) group.dissolve()
}
