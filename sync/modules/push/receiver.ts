import { fromBase64 } from '../../core/base64.ts'
import { openEnvelope, type PushEnvelope, type PushPayload } from './payload.ts'

/**
 * Where a receiver keeps its keys: on a phone, the operating system's keystore. Append-only:
 * nothing here deletes.
 */
export interface PushKeyStore {
  get(spaceId: string, encKeyId: string): string | undefined
  /** Every (spaceId, encKeyId) pair held, for a lookup by key id alone. */
  entries(): Iterable<{ spaceId: string; encKeyId: string; encKey: string }>
  put(spaceId: string, encKeyId: string, encKey: string): void
}

export class MemoryPushKeyStore implements PushKeyStore {
  private readonly map = new Map<string, Map<string, string>>()
  get(spaceId: string, encKeyId: string) {
    return this.map.get(spaceId)?.get(encKeyId)
  }
  *entries() {
    for (const [spaceId, keys] of this.map) for (const [encKeyId, encKey] of keys) yield { spaceId, encKeyId, encKey }
  }
  put(spaceId: string, encKeyId: string, encKey: string) {
    let m = this.map.get(spaceId)
    if (!m) {
      m = new Map()
      this.map.set(spaceId, m)
    }
    m.set(encKeyId, encKey)
  }
}

/** A space row's `push` field, as `GET /v1/spaces` and the space-list stream show it. */
export interface SpaceRowPush {
  spaceKey: string
  encKey: string
  encKeyId: string
}

/** What a push renders: the decrypted payload, or the generic notice of a cache miss. */
export type ReceivedPush = { kind: 'message'; spaceId: string; payload: PushPayload } | { kind: 'generic' }

/**
 * The receiver's cache contract (chat.md "Push notifications"): an append-only map of
 * `encKeyId` to `encKey` per space, refreshed from space rows on every foreground and while the
 * space-list stream is open, never evicted on rotation (a notification sealed just before a
 * rotation must still open). A miss, or bytes that do not open, give the generic notice; a hit
 * decrypts. Exported from sync/ so a browser or a mobile client reuses it.
 */
export class PushReceiver {
  constructor(readonly store: PushKeyStore = new MemoryPushKeyStore()) {}

  /** Records a space row's push keys (no-op for a row the key mirror has not reached). */
  remember(spaceId: string, push: SpaceRowPush | undefined): void {
    if (!push || typeof push.encKey !== 'string' || typeof push.encKeyId !== 'string') return
    if (this.store.get(spaceId, push.encKeyId) === undefined) this.store.put(spaceId, push.encKeyId, push.encKey)
  }

  /** Records every row of a space list (`{spaceId, push?}` rows). */
  rememberRows(rows: Iterable<{ spaceId: string; push?: SpaceRowPush }>): void {
    for (const r of rows) this.remember(r.spaceId, r.push)
  }

  receive(envelope: Pick<PushEnvelope, 'keyId' | 'payload'>): ReceivedPush {
    for (const e of this.store.entries()) {
      if (e.encKeyId !== envelope.keyId) continue
      try {
        return { kind: 'message', spaceId: e.spaceId, payload: openEnvelope(fromBase64(e.encKey), envelope) }
      } catch {
        return { kind: 'generic' }
      }
    }
    return { kind: 'generic' }
  }
}
