import { SvcError } from '../../sync/core/errors.ts'
import type { AccountEngine } from '../../sync/space/account-engine.ts'
import { instant } from '../../sync/space/rows.ts'
import type { P2PService } from './p2p-service.ts'

export type SyncState = 'unknown' | 'offline' | 'syncing' | 'synced' | 'error'

/** Body of a space's sync-status snapshot and of its `status` frames (our design). */
export interface SpaceSyncStatus {
  spaceId: string
  state: SyncState
  /** Connected peers. */
  peers: number
  lastSyncAt: { $date: string } | null
  lastErr: string | null
  /** Objects with local changes not yet carried by a completed round. */
  pending: number
  /** Each of this account's hubs (docs/hub.md): whether connected, where the space stands there, its last round. */
  hubs?: HubSpaceStatus[]
}

/** Where a space stands with one hub (node/hubs/hub-links.ts). */
export interface HubSpaceStatus {
  peerId: string
  connected: boolean
  state: string
  lastSyncAt: { $date: string } | null
}

export interface ObjectSyncStatus {
  spaceId: string
  objectId: string
  state: SyncState
  lastSyncAt: { $date: string } | null
  pending: boolean
}

interface Track {
  pending: Set<string>
  /** Objects pending when the running rounds started: cleared when one of them succeeds. */
  inRound: Set<string>
  lastOk: number | null
  lastErr: string | null
  lastEndedOk: boolean | null
}

/**
 * The sync-status rollup per space and per object: derived from the scheduler's rounds, the
 * connected peers and local commits. Every change of a space's status is announced on the
 * account's events (`syncStatus`).
 */
export class SyncStatusService {
  private readonly tracks = new Map<string, Track>()
  private readonly last = new Map<string, string>()
  private readonly stops: Array<() => void> = []
  /** Per held space, the stop of its commit listener. */
  private readonly watches = new Map<string, () => void>()
  /** The hub link's answer, once it runs (it starts after this service). */
  private hubStates?: (spaceId: string) => HubSpaceStatus[]

  /** Shows each hub's state per space (the hub link calls it when it starts). */
  attachHubs(states: ((spaceId: string) => HubSpaceStatus[]) | undefined): void {
    this.hubStates = states
  }

  constructor(
    private readonly account: AccountEngine,
    private readonly p2p: P2PService | undefined,
  ) {
    const watchSpace = (spaceId: string) => {
      const s = account.held(spaceId)
      if (!s) return
      this.watches.get(spaceId)?.()
      this.watches.set(
        spaceId,
        s.replica.addCommitListener((info) => {
          const t = this.track(spaceId)
          // Remote and local commits alike: the next round carries them to the other peers.
          for (const tree of info.treeIds) if (tree !== spaceId) t.pending.add(tree)
          this.changed(spaceId)
        }),
      )
    }
    for (const s of account.openSpaces()) watchSpace(s.spaceId)
    this.stops.push(account.events.on('spacesOpened', (e) => e.spaceIds.forEach(watchSpace)))
    // A space closed under the memory budget: its replica is let go (it opens again on demand).
    this.stops.push(
      account.events.on('spacesClosed', (e) => {
        for (const id of e.spaceIds) {
          this.watches.get(id)?.()
          this.watches.delete(id)
        }
      }),
    )
    this.stops.push(() => {
      for (const stop of this.watches.values()) stop()
      this.watches.clear()
    })
    if (p2p) {
      this.stops.push(
        p2p.scheduler.onRound((e) => {
          const t = this.track(e.spaceId)
          if (e.phase === 'start') {
            for (const o of t.pending) t.inRound.add(o)
          } else if (e.result) {
            const r = e.result
            const benign = r.outcome === 'unknown_space' || (r.outcome === 'error' && r.error === 'not_member')
            if (r.ok) {
              t.lastOk = Date.now()
              t.lastErr = null
              for (const o of t.inRound) t.pending.delete(o)
              t.inRound.clear()
              t.lastEndedOk = true
            } else if (!benign) {
              t.lastErr = r.error ?? r.outcome
              t.lastEndedOk = false
            }
          }
          this.changed(e.spaceId)
        }),
      )
      this.stops.push(p2p.scheduler.onPeersChanged(() => account.openSpaces().forEach((s) => this.changed(s.spaceId))))
    }
  }

  private track(spaceId: string): Track {
    let t = this.tracks.get(spaceId)
    if (!t) this.tracks.set(spaceId, (t = { pending: new Set(), inRound: new Set(), lastOk: null, lastErr: null, lastEndedOk: null }))
    return t
  }

  space(spaceId: string): SpaceSyncStatus {
    if (!this.account.held(spaceId)) throw new SvcError('space.not_found', 'space not found', { spaceId })
    const t = this.track(spaceId)
    const peers = this.p2p?.scheduler.connectedPeers().length ?? 0
    const running = this.p2p?.scheduler.running(spaceId) ?? 0
    let state: SyncState
    if (!this.p2p || peers === 0) state = 'offline'
    else if (running > 0 || t.pending.size > 0) state = 'syncing'
    else if (t.lastEndedOk === false) state = 'error'
    else if (t.lastOk !== null) state = 'synced'
    else state = 'unknown'
    const hubs = this.hubStates?.(spaceId)
    return { spaceId, state, peers, lastSyncAt: t.lastOk === null ? null : instant(t.lastOk), lastErr: t.lastErr, pending: t.pending.size, ...(hubs?.length ? { hubs } : {}) }
  }

  object(spaceId: string, objectId: string): ObjectSyncStatus {
    const sp = this.space(spaceId)
    const engine = this.account.held(spaceId)!
    if (!engine.replica.treeMeta(objectId)) throw new SvcError('object.not_found', 'object not found', { objectId })
    const pending = this.track(spaceId).pending.has(objectId)
    const state: SyncState = sp.state === 'offline' || sp.state === 'unknown' || sp.state === 'error' ? sp.state : pending ? 'syncing' : 'synced'
    return { spaceId, objectId, state, lastSyncAt: sp.lastSyncAt, pending }
  }

  all(): SpaceSyncStatus[] {
    return this.account.openSpaces().map((s) => this.space(s.spaceId))
  }

  /** Called with a space id whenever that space's status changed (the account's `syncStatus` event). */
  watch(fn: (spaceId: string) => void): () => void {
    return this.account.events.on('syncStatus', (e) => fn(e.spaceId))
  }

  private changed(spaceId: string) {
    if (!this.account.held(spaceId)) return
    const now = JSON.stringify(this.space(spaceId))
    if (this.last.get(spaceId) === now) return
    this.last.set(spaceId, now)
    this.account.events.emit('syncStatus', { spaceId })
  }

  stop() {
    for (const s of this.stops) s()
  }
}
