import { describe, expect, it } from 'vitest'
import { defaultCryptoProvider } from '../../sync/crypto/provider.ts'
import { DEFAULT_MODULES } from '../../sync/modules/index.ts'
import { AccountEngine } from '../../sync/space/account-engine.ts'
import { OBJECT_BYTES, SPACE_BASE_BYTES } from '../../sync/space/space-engine.ts'
import { MemoryStorageAdapter } from '../../sync/storage/memory.ts'
import { keyFor, seededEnv } from '../helpers.ts'

const SPACES = 2_000
const OBJECTS = 3

/**
 * Issue 41: 2,000 small spaces on the memory adapter under a small budget. The budget holds
 * (after each space is used, what the open spaces hold by estimate is within the budget plus
 * the space just used), and every space stays queryable, with its own objects.
 */
describe('one memory budget over many spaces', () => {
  it('2,000 small spaces: the budget holds while every space stays queryable', async () => {
    const storage = new MemoryStorageAdapter()
    const crypto = await defaultCryptoProvider()
    const first = await AccountEngine.open({ storage, crypto, env: seededEnv(1), accountKey: keyFor(1), modules: DEFAULT_MODULES })
    const ids: string[] = []
    for (let s = 0; s < SPACES; s++) {
      const { id } = await first.createSpace({ name: `Space ${s}` })
      const space = first.space(id)
      for (let i = 0; i < OBJECTS; i++) await space.createObject({ initialProperties: { core: { name: `S${s} O${i}` } } })
      ids.push(id)
    }
    await first.close()

    // About 20 spaces' worth.
    const budget = 20 * (SPACE_BASE_BYTES + (OBJECTS + 1) * OBJECT_BYTES)
    const account = await AccountEngine.open({
      storage,
      crypto,
      env: seededEnv(1),
      accountKey: keyFor(1),
      modules: DEFAULT_MODULES,
      spacesInBackground: true,
      memoryBudget: { bytes: budget, minIdleMs: 0, idleMs: 0, sweepMs: 3_600_000 },
    })
    try {
      await account.allLoaded()
      expect(account.residencyStats().openBytes).toBeLessThanOrEqual(budget)
      let most = 0
      for (const [s, id] of ids.entries()) {
        const space = (await account.opened(id))!
        const names = [...space.objectDocs()].map((d) => (d.core as { name?: string } | undefined)?.name).filter((n) => n?.startsWith(`S${s} `))
        expect(names.sort()).toEqual(Array.from({ length: OBJECTS }, (_, i) => `S${s} O${i}`))
        await account.enforceBudget()
        most = Math.max(most, account.residencyStats().openBytes)
      }
      expect(most).toBeLessThanOrEqual(budget + space1(account, ids.at(-1)!))
      const stats = account.residencyStats()
      expect(stats.open + stats.closed).toBe(SPACES)
      expect(stats.closed).toBeGreaterThan(SPACES - 40)
      // Listed from summaries, every one with its name.
      const listed = await account.listSpaces()
      expect(listed.length).toBe(SPACES)
      expect(new Set(listed.map((i) => i.name)).size).toBe(SPACES)
    } finally {
      await account.close()
    }
  }, 600_000)
})

/** What one open space holds by estimate (the one just used may be over the budget until it goes idle). */
function space1(account: AccountEngine, id: string): number {
  return account.held(id)?.memoryEstimate() ?? SPACE_BASE_BYTES + (OBJECTS + 1) * OBJECT_BYTES
}
