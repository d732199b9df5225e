import { describe, expect, it } from 'vitest'
import { runChatSeed } from '../../sim/chat-workload.ts'
import { nodeSyncCryptoProvider } from '../../sim/node-crypto.ts'

describe('the chat read-state simulation', () => {
  it('engine flags and counters equal a from-scratch recomputation on every device, and a seed replays exactly', async () => {
    const crypto = nodeSyncCryptoProvider()
    for (const seed of [1, 2, 3]) {
      const r = await runChatSeed(seed, crypto)
      expect(r.failures).toEqual([])
      expect(r.checks).toBeGreaterThan(r.devices)
    }
    const [a, b] = [await runChatSeed(7, crypto), await runChatSeed(7, crypto)]
    expect(a.traceHash).toBe(b.traceHash)
  }, 60_000)
})
