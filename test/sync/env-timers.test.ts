import { describe, expect, it } from 'vitest'
import type { Env } from '../../sync/core/env.ts'
import { defaultCryptoProvider } from '../../sync/crypto/provider.ts'
import { AccountEngine } from '../../sync/space/account-engine.ts'
import { watchDirectory, type IdentitiesFrame } from '../../sync/space/directory.ts'
import { MemoryStorageAdapter } from '../../sync/storage/memory.ts'
import { idFor, keyFor, seededEnv } from '../helpers.ts'

/** An Env whose timers fire only when the test says so (as the simulator's event queue does). */
function manualTimers(seed: number) {
  const pending: Array<{ ms: number; fn: () => void; cancelled: boolean }> = []
  const env: Env = {
    ...seededEnv(seed),
    setTimer: (ms, fn) => {
      const t = { ms, fn, cancelled: false }
      pending.push(t)
      return () => {
        t.cancelled = true
      }
    },
  }
  const fire = () => {
    for (const t of pending.splice(0)) if (!t.cancelled) t.fn()
  }
  return { env, pending, fire }
}

const DIRECTORY_SETTLE_MS = 20

const until = async (cond: () => boolean) => {
  for (let i = 0; i < 200 && !cond(); i++) await new Promise((r) => setTimeout(r, 10))
}

describe('Env timers', () => {
  it('the directory watch debounces on the Env, never on a real timer', async () => {
    const { env, pending, fire } = manualTimers(3)
    const account = await AccountEngine.open({ storage: new MemoryStorageAdapter(), crypto: await defaultCryptoProvider(), env, accountKey: keyFor(1) })
    const frames: IdentitiesFrame[] = []
    const stop = watchDirectory(account, (f) => frames.push(f))

    const info = await account.createSpace({ name: 'Team' })
    await account.space(info.id).replica.addMember(idFor(2), 'writer')
    await until(() => pending.length > 0)
    // One debounce for the burst, on the Env's clock (the profile publisher's 50 ms debounce,
    // sync/space/profiles.ts, runs on it too).
    expect(pending.filter((t) => !t.cancelled && t.ms === DIRECTORY_SETTLE_MS)).toHaveLength(1)
    await new Promise((r) => setTimeout(r, 100))
    expect(frames).toEqual([])

    fire()
    await until(() => frames.length > 0)
    expect(frames.flatMap((f) => f.added.map((e) => e.identity))).toContain(idFor(2))

    await account.patchSpace(info.id, { name: 'Team 2' })
    await until(() => pending.some((t) => !t.cancelled && t.ms === DIRECTORY_SETTLE_MS))
    stop()
    expect(pending.filter((t) => t.ms === DIRECTORY_SETTLE_MS).every((t) => t.cancelled)).toBe(true)
  })
})
