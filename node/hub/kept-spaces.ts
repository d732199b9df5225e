import type { Env } from '../../sync/core/env.ts'
import { errField, type Logger } from '../../sync/core/log.ts'
import { SerialQueue } from '../../sync/core/serial-queue.ts'
import type { KeyPair } from '../../sync/crypto/keys.ts'
import type { CryptoProvider } from '../../sync/crypto/provider.ts'
import { decodeChange, type Change } from '../../sync/dag/change.ts'
import { SpaceReplica } from '../../sync/replica/space-replica.ts'
import type { HubStore } from './store/hub-store.ts'
import { WriteThroughStorage } from './write-through-storage.ts'

/** Changes read from the store per page while a space opens or catches up. */
const PAGE = 5_000

interface Kept {
  replica: SpaceReplica
  storage: WriteThroughStorage
  /** Change bytes the replica holds in memory (what the open budget counts). */
  bytes: number
  /** The store's sequence this process has taken in up to. */
  seenSeq: number
  catchUp: SerialQueue
}

/**
 * The kept spaces' keyless replicas of one hub process. A space opens from the store (every
 * change, in the order the store took them, which is causal: a process stores a change only
 * after what it builds on), and follows what other processes sharing the store append: the
 * store's notice (PostgreSQL NOTIFY) makes this process read the new changes and apply them,
 * and its head sync then pushes them to the readers connected here.
 */
export class KeptSpaces {
  private readonly kept = new Map<string, Kept>()
  /** Changes this process appended, and their bytes, since start (for the rate in /health). */
  appended = { changes: 0, bytes: 0 }
  private readonly stopFollowing: () => void

  constructor(
    private readonly o: {
      store: HubStore
      key: KeyPair
      crypto: CryptoProvider
      env: Env
      log: Logger
      /** An open space took in changes (the hub checks its memory budget). */
      grew?: () => void
    },
  ) {
    this.stopFollowing = o.store.onAppend((spaceId, lastSeq, local) => {
      if (local) return
      const k = this.kept.get(spaceId)
      if (!k || k.seenSeq >= lastSeq) return
      void k.catchUp
        .run(() => this.catchUp(spaceId, k))
        .catch((err: unknown) => o.log.error('taking in changes another hub process stored failed', { spaceId, err: errField(err) }))
    })
  }

  /** Opens a kept space's replica from the store (HubCoreOptions.openReplica). */
  async open(spaceId: string): Promise<SpaceReplica> {
    // eslint-disable-next-line prefer-const -- the storage's callback reaches the entry made after it
    let k!: Kept
    const storage = new WriteThroughStorage(spaceId, this.o.store, (n, bytes) => {
      this.appended.changes += n
      this.appended.bytes += bytes
      k.bytes += bytes
      this.o.grew?.()
    })
    const replica = await SpaceReplica.open({ storage, crypto: this.o.crypto, env: this.o.env, keyless: true }, spaceId, this.o.key)
    k = { replica, storage, bytes: 0, seenSeq: 0, catchUp: new SerialQueue() }
    await this.catchUp(spaceId, k)
    this.kept.set(spaceId, k)
    // A notice that came while the space was opening found it not open yet: read once more.
    void k.catchUp
      .run(() => this.catchUp(spaceId, k))
      .catch((err: unknown) => this.o.log.error('taking in changes stored while a space opened failed', { spaceId, err: errField(err) }))
    return replica
  }

  /** Applies what the store holds past `seenSeq`: already verified by whichever process stored it. */
  private async catchUp(spaceId: string, k: Kept): Promise<void> {
    for (;;) {
      const page = await this.o.store.changesSince(spaceId, k.seenSeq, PAGE)
      if (!page.length) return
      const changes: Array<{ change: Change }> = []
      for (const s of page) {
        k.storage.fromStore.add(s.id)
        changes.push({ change: decodeChange(s.raw) })
        k.bytes += s.raw.byteLength
      }
      try {
        await k.replica.applyVerified(changes)
      } finally {
        for (const s of page) k.storage.fromStore.delete(s.id)
      }
      k.seenSeq = page[page.length - 1].seq
      if (page.length < PAGE) return
    }
  }

  /** Change bytes an open space holds in memory (0 when it is not open here). */
  sizeOf(spaceId: string): number {
    return this.kept.get(spaceId)?.bytes ?? 0
  }

  /** Change bytes every open space holds. */
  totalBytes(): number {
    let n = 0
    for (const k of this.kept.values()) n += k.bytes
    return n
  }

  /** Forgets a space's replica (the hub closed it for its memory budget); it reopens from the store. */
  close(spaceId: string): void {
    this.kept.delete(spaceId)
  }

  /** Appends under way across kept spaces. */
  pendingAppends(): number {
    let n = 0
    for (const k of this.kept.values()) n += k.storage.pending
    return n
  }

  get size(): number {
    return this.kept.size
  }

  stop(): void {
    this.stopFollowing()
  }
}
