import { SvcError } from '../../core/errors.ts'
import { errField, type Logger } from '../../core/log.ts'
import type { AccountModuleContext } from '../../space/module.ts'
import type { SpaceEngine } from '../../space/space-engine.ts'
import { SerialQueue } from '../../core/serial-queue.ts'
import { chatReadModule } from '../chat/read-state/module.ts'
import { pushKeysOf } from './keys.ts'
import { fromBase64 } from '../../core/base64.ts'
import { toBase58 } from '../../core/ids.ts'
import { PUSH_LIMITS } from './limits.ts'
import { PushOutbox, type PushNodeLink, type PushPlatform } from './outbox.ts'
import { asMode, readModes, topicsFor, type SpaceModes } from './reconcile.ts'
import { PushSender } from './sender.ts'

export interface PushToken {
  platform: PushPlatform
  token: string
}

/**
 * Where this device's token is kept: the account's device-local storage (never synced: a token
 * names this device's push channel), so an acknowledged registration survives a restart.
 */
const TOKEN_STORE = 'push_device'
const TOKEN_KEY = 'token'

/** What the account engine offers beyond the module context (duck-typed: the simulator's may not). */
interface AccountExtras {
  openSpaces?(): SpaceEngine[]
  tech?: SpaceEngine
  info?(spaceId: string): Promise<{ settings: Record<string, unknown> }>
  /** Spaces closed under the memory budget, with the push keys their summary keeps (AccountEngine). */
  closedPushKeys?(): Array<{ spaceId: string; spaceKey: string }>
  opened?(spaceId: string): Promise<SpaceEngine | undefined>
}

/**
 * Push for one account: the node link (attached by the daemon's push protocol once a push node
 * is configured), this device's token, the outbox every space's sender fills, and the topic
 * reconcile loop. Without a link every push route is 409 `push.disabled` and writes push nothing.
 */
export class PushService {
  private link: PushNodeLink | undefined
  private token: PushToken | undefined
  readonly outbox: PushOutbox
  private readonly senders = new WeakMap<SpaceEngine, PushSender>()
  /** What the node holds for us, by space key (the last reconcile's answer). */
  private held = new Map<string, string[]>()
  /** When each held set was last sent: the node evicts registrations idle past its TTL, so they are renewed. */
  private heldAt = new Map<string, number>()
  /** Last-known-good modes by space id: a space whose chats cannot be read reuses them. */
  private readonly lastGood = new Map<string, SpaceModes>()
  private readonly lane = new SerialQueue()
  private stopTick: () => void = () => undefined
  private pendingReconcile = false
  private closed = false
  readonly reconcileStats = { passes: 0, subscribeRequests: 0, skippedSpaces: 0, failures: 0 }

  /** The kept token, read once; every token route waits for it. */
  private readonly loaded: Promise<void>

  private readonly log: Logger

  constructor(private readonly ctx: AccountModuleContext) {
    this.log = ctx.log.child('push')
    this.outbox = new PushOutbox(ctx.env, () => this.link, this.log.child('outbox'))
    this.loaded = this.loadToken()
    const x = ctx as AccountModuleContext & AccountExtras
    ctx.events.on('spacesOpened', () => this.schedule())
    ctx.events.on('members', () => this.schedule())
    // Both knobs (settings.notifyMode, chat.notifyMode) live in the tech space. Its own emitter,
    // not the account's: an account-wide listener would make every commit allocate its event.
    x.tech?.events.on('change', () => this.schedule())
  }

  get enabled(): boolean {
    return this.link !== undefined
  }

  requireEnabled(): void {
    if (!this.link) throw new SvcError('push.disabled', 'no push node is configured (push.peerId, push.addrs)')
  }

  /** The daemon's push protocol hands its node link here; the 5-minute tick starts. */
  attach(link: PushNodeLink): void {
    this.link = link
    this.tick()
    this.schedule()
  }

  detach(): void {
    this.link = undefined
    this.stopTick()
  }

  private tick() {
    this.stopTick()
    if (this.closed) return
    this.stopTick = this.ctx.env.setTimer(PUSH_LIMITS.reconcileTickMs, () => {
      this.schedule()
      this.tick()
    })
  }

  /** The sender of a space (built with the space's push service). */
  senderFor(space: SpaceEngine): PushSender {
    let s = this.senders.get(space)
    if (s) return s
    s = new PushSender(
      space,
      this.outbox,
      this.ctx.env,
      () => this.enabled,
      () => this.token?.token,
    )
    this.senders.set(space, s)
    const sender = s
    // The read-state service is built in the same pass as ours: reach it once the pass is done.
    queueMicrotask(() => {
      try {
        space.services.of(chatReadModule).onRead((chatId) => sender.read(chatId))
      } catch (err) {
        // No read state in this module list: reads push nothing.
        this.log.debug('reads push nothing: no chat read state', { spaceId: space.spaceId, err: errField(err) })
      }
    })
    return s
  }

  // ------------------------------------------------------------------ token

  async getToken(): Promise<{ registered: boolean; platform?: PushPlatform }> {
    this.requireEnabled()
    await this.loaded
    return this.token ? { registered: true, platform: this.token.platform } : { registered: false }
  }

  /** Resolves once the token is kept: a restart registers it again. */
  async setToken(t: PushToken): Promise<void> {
    this.requireEnabled()
    await this.loaded
    await this.keepToken(t)
    const old = this.token
    this.token = t
    if (old && (old.token !== t.token || old.platform !== t.platform)) this.unregister(old)
    this.held = new Map()
    this.heldAt = new Map()
    this.schedule()
  }

  /** Local delete wins: the node is told when reachable, never waited for. */
  async deleteToken(): Promise<void> {
    this.requireEnabled()
    await this.loaded
    await this.keepToken(undefined)
    const old = this.token
    this.token = undefined
    this.held = new Map()
    this.heldAt = new Map()
    if (old) this.unregister(old)
  }

  private async loadToken(): Promise<void> {
    try {
      const raw = await this.ctx.storage.get(TOKEN_STORE, TOKEN_KEY)
      if (!raw || this.token) return
      const t = JSON.parse(new TextDecoder().decode(raw)) as Partial<PushToken>
      if (typeof t.platform === 'string' && typeof t.token === 'string') this.token = { platform: t.platform, token: t.token }
    } catch (err) {
      // Unreadable: as if none was registered (the app registers again).
      this.log.warn('the kept push token is unreadable; the app must register again', { err: errField(err) })
    }
  }

  private keepToken(t: PushToken | undefined): Promise<void> {
    const key = { store: TOKEN_STORE, key: TOKEN_KEY }
    return this.ctx.storage.commit(t ? { puts: [{ ...key, value: new TextEncoder().encode(JSON.stringify(t)) }], dels: [] } : { puts: [], dels: [key] })
  }

  private unregister(t: PushToken) {
    this.outbox.enqueue((link) => link.unregister({ platform: t.platform, token: t.token, ts: this.ctx.env.now() }))
  }

  subscriptions(): Array<{ spaceKey: string; topic: string }> {
    this.requireEnabled()
    const out: Array<{ spaceKey: string; topic: string }> = []
    for (const [spaceKey, topics] of [...this.held].sort(([a], [b]) => (a < b ? -1 : 1))) for (const topic of topics) out.push({ spaceKey, topic })
    return out
  }

  // ------------------------------------------------------------------ reconcile

  /** Runs a reconcile pass soon (coalesced: many triggers, one pass). */
  schedule(): void {
    if (this.pendingReconcile || this.closed || !this.link || !this.token) return
    this.pendingReconcile = true
    void this.lane.run(async () => {
      this.pendingReconcile = false
      await this.reconcile().catch((err: unknown) => {
        this.reconcileStats.failures++
        // Tried again on the next tick or change.
        this.log.warn('reconciling push subscriptions with the push node failed', { err: errField(err) })
      })
    })
  }

  /**
   * One pass: for every held space, the topics the knobs give; a space whose set differs from
   * what the node holds gets one signed subscribe (replacing its set). Spaces gone since get an
   * empty set. Answers the number of subscribe requests made.
   */
  async reconcile(): Promise<number> {
    const token = this.token
    const link = this.link
    if (!token || !link) return 0
    this.reconcileStats.passes++
    const x = this.ctx as AccountModuleContext & AccountExtras
    const me = this.ctx.accountId
    const spaces = (x.openSpaces?.() ?? []).filter((s) => s !== x.tech)
    const want = new Map<string, { topics: string[]; space: SpaceEngine | undefined }>()
    for (const space of spaces) {
      const keys = pushKeysOf(space.replica)
      if (!keys) continue
      const modes = await this.modesOf(space, x)
      if (!modes) {
        this.reconcileStats.skippedSpaces++
        // Unknown knobs and no last-known-good: leave what the node holds for this space alone.
        if (this.held.has(keys.spaceKey)) want.set(keys.spaceKey, { topics: this.held.get(keys.spaceKey)!, space })
        continue
      }
      want.set(keys.spaceKey, { topics: topicsFor(modes, me), space })
    }
    // A closed space keeps what the node holds for it while that is fresh; its renewal opens it
    // (push keeps open the spaces it needs: the renewal is signed with the space's push key).
    for (const { spaceId, spaceKey: rowKey } of x.closedPushKeys?.() ?? []) {
      // The row mirrors the key in base64 (module.ts); the node's sets go by its base58 id.
      const spaceKey = toBase58(fromBase64(rowKey))
      const have = this.held.get(spaceKey)
      if (!have || want.has(spaceKey)) continue
      if (this.ctx.env.now() - (this.heldAt.get(spaceKey) ?? 0) < PUSH_LIMITS.subscriptionRefreshMs) {
        want.set(spaceKey, { topics: have, space: undefined })
        continue
      }
      const space = await x.opened?.(spaceId)
      const modes = space && pushKeysOf(space.replica) ? await this.modesOf(space, x) : undefined
      if (space && modes) want.set(spaceKey, { topics: topicsFor(modes, me), space })
    }
    let requests = 0
    const next = new Map<string, string[]>()
    const nextAt = new Map<string, number>()
    const keep = (spaceKey: string, topics: string[] | undefined) => {
      if (!topics) return
      next.set(spaceKey, topics)
      nextAt.set(spaceKey, this.heldAt.get(spaceKey) ?? 0)
    }
    for (const [spaceKey, w] of want) {
      const have = this.held.get(spaceKey)
      const fresh = this.ctx.env.now() - (this.heldAt.get(spaceKey) ?? 0) < PUSH_LIMITS.subscriptionRefreshMs
      if ((have && same(have, w.topics) && fresh) || !w.space) {
        keep(spaceKey, have)
        continue
      }
      const keys = pushKeysOf(w.space.replica)!
      requests++
      try {
        const at = this.ctx.env.now()
        const r = await link.subscribe({ pushKey: keys.pushKey, platform: token.platform, token: token.token, topics: w.topics, ts: at })
        if (r.ok) {
          next.set(spaceKey, w.topics)
          nextAt.set(spaceKey, at)
        } else keep(spaceKey, have)
      } catch {
        keep(spaceKey, have)
      }
    }
    this.reconcileStats.subscribeRequests += requests
    // Token unchanged while we worked: what the node now holds is `next`.
    if (this.token === token) {
      this.held = next
      this.heldAt = nextAt
    }
    return requests
  }

  private async modesOf(space: SpaceEngine, x: AccountExtras): Promise<SpaceModes | undefined> {
    try {
      const spaceMode = asMode((await x.info?.(space.spaceId))?.settings?.notifyMode)
      const read = space.services.of(chatReadModule)
      const modes = await readModes(
        space,
        spaceMode,
        (row) => read.isChatRow(row as never),
        (ids) => space.services.types.scoped.rowsOf(space.spaceId, ids),
      )
      this.lastGood.set(space.spaceId, modes)
      return modes
    } catch {
      return this.lastGood.get(space.spaceId)
    }
  }

  close(): void {
    this.closed = true
    this.stopTick()
    this.outbox.close()
  }
}

const same = (a: readonly string[], b: readonly string[]) => a.length === b.length && a.every((t, i) => t === b[i])
