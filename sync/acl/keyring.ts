import type { KeyPair } from '../crypto/keys.ts'
import { identityOf } from '../crypto/keys.ts'
import { unwrapKey } from '../crypto/wrap.ts'
import { open } from '../crypto/box.ts'
import type { AclLog } from './state.ts'
import { pairReadKey } from './pair.ts'

/**
 * The read keys one member can reach: keys wrapped to them directly, and every older key
 * reachable by opening `prev` (and `others`) links from a key they hold. A member removed before a rotation
 * has no wrap of the new key and no link into it, so it reads nothing sealed after.
 */
export class Keyring {
  private readonly cache = new Map<string, Uint8Array>()
  private readonly me: string

  constructor(
    private readonly acl: AclLog,
    private readonly key: KeyPair,
  ) {
    this.me = identityOf(key.publicKey)
  }

  /** The read key with this id, or undefined when this member cannot reach it. */
  get(keyId: string): Uint8Array | undefined {
    // Asked once per applied change: a hit must not allocate.
    return this.cache.get(keyId) ?? this.reach(keyId, new Set())
  }

  private reach(keyId: string, visiting: Set<string>): Uint8Array | undefined {
    const hit = this.cache.get(keyId)
    if (hit) return hit
    if (visiting.has(keyId)) return undefined
    visiting.add(keyId)
    const st = this.acl.current()
    const info = st.keys.get(keyId)
    if (!info) return undefined
    if (info.pair) {
      // A one-to-one space's first key: agreed with the other account, never wrapped.
      if (!info.pair.includes(this.me)) return undefined
      const k = pairReadKey(this.key.privateKey, info.pair[0] === this.me ? info.pair[1] : info.pair[0], this.acl.spaceId)
      this.cache.set(keyId, k)
      return k
    }
    const wrapped = info.wrapped.get(this.me)
    if (wrapped) {
      try {
        const k = unwrapKey(this.key.privateKey, wrapped)
        this.cache.set(keyId, k)
        return k
      } catch {
        // Not ours after all: fall through to the chain.
      }
    }
    for (const [laterId, later] of st.keys) {
      const sealed = later.prevKeyId === keyId ? later.prev : later.others?.get(keyId)
      if (!sealed) continue
      const laterKey = this.reach(laterId, visiting)
      if (!laterKey) continue
      try {
        const k = open(laterKey, sealed)
        this.cache.set(keyId, k)
        return k
      } catch {
        continue
      }
    }
    return undefined
  }
}
