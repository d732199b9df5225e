import { describe, expect, it } from 'vitest'
import { drawConfig, FAULT_KINDS } from '../../sim/config.ts'
import { nodeSyncCryptoProvider } from '../../sim/node-crypto.ts'
import { runSeed } from '../../sim/runner.ts'
import { defaultCryptoProvider } from '../../sync/crypto/provider.ts'

describe('simulator determinism', () => {
  // The first seed that draws every fault kind at once (drawing a config is cheap).
  let seed = 1
  while (drawConfig(seed, { maxPeers: 8 }).faults.length < FAULT_KINDS.length) seed++

  it(`seed ${seed} (every fault kind) gives the same trace twice, and passes`, async () => {
    const crypto = nodeSyncCryptoProvider()
    const a = await runSeed(seed, { maxPeers: 8, crypto })
    const b = await runSeed(seed, { maxPeers: 8, crypto })
    expect(a.faults).toEqual([...FAULT_KINDS])
    expect(b.traceHash).toBe(a.traceHash)
    expect(b.stats).toEqual(a.stats)
    expect(a.failures).toEqual([])
  })

  it('the signature provider does not change the trace (Ed25519 is deterministic)', async () => {
    const a = await runSeed(3, { maxPeers: 5, crypto: nodeSyncCryptoProvider() })
    const b = await runSeed(3, { maxPeers: 5, crypto: await defaultCryptoProvider() })
    expect(b.traceHash).toBe(a.traceHash)
  })

  it('a seed with hostile peers and concurrent admins gives the same trace twice', async () => {
    const crypto = nodeSyncCryptoProvider()
    const a = await runSeed(5, { maxPeers: 4, adversaries: 2, crypto })
    const b = await runSeed(5, { maxPeers: 4, adversaries: 2, crypto })
    expect(Object.values(a.attacks).reduce((n, k) => n + (k ?? 0), 0)).toBeGreaterThan(10)
    expect(b.traceHash).toBe(a.traceHash)
    expect(b.stats).toEqual(a.stats)
    expect(b.failures).toEqual(a.failures)
  })

  it('another seed gives another trace', async () => {
    const crypto = nodeSyncCryptoProvider()
    const a = await runSeed(3, { maxPeers: 5, crypto })
    const b = await runSeed(4, { maxPeers: 5, crypto })
    expect(b.traceHash).not.toBe(a.traceHash)
  })
})
