import { MemoryStorageAdapter } from '../sync/storage/memory.ts'
import { defaultCryptoProvider } from '../sync/crypto/provider.ts'
import { keyPairFromSeed, identityOf, type KeyPair } from '../sync/crypto/keys.ts'
import { SpaceReplica, type ReplicaDeps } from '../sync/replica/space-replica.ts'
import type { Env } from '../sync/core/env.ts'
import type { StorageAdapter } from '../sync/storage/adapter.ts'

/** A deterministic byte stream (xorshift32) from a seed: a test env's `randomBytes`. */
export function xorshiftBytes(seed: number): (n: number) => Uint8Array {
  let s = seed >>> 0 || 1
  return (n) => {
    const out = new Uint8Array(n)
    for (let i = 0; i < n; i++) {
      s ^= s << 13
      s ^= s >>> 17
      s ^= s << 5
      out[i] = s & 0xff
    }
    return out
  }
}

/** A deterministic env: counter clock and a xorshift byte stream from a seed (timers are real ones). */
export function seededEnv(seed: number, clockStart = 1_700_000_000_000): Env {
  let t = clockStart
  return {
    now: () => (t += 1),
    randomBytes: xorshiftBytes(seed),
    setTimer: (ms, fn) => {
      const timer = setTimeout(fn, ms)
      return () => clearTimeout(timer)
    },
  }
}

export const keyFor = (n: number): KeyPair => keyPairFromSeed(new Uint8Array(32).fill(n))
export const idFor = (n: number) => identityOf(keyFor(n).publicKey)

export async function deps(seed = 1, storage: StorageAdapter = new MemoryStorageAdapter()): Promise<ReplicaDeps> {
  return { storage, crypto: await defaultCryptoProvider(), env: seededEnv(seed) }
}

/** Delivers every change `from` holds to `to`; returns the ingest report. */
export async function pushAll(from: SpaceReplica, to: SpaceReplica) {
  return to.ingest((await from.allChanges()).map(({ id, raw }) => ({ id, raw })))
}
