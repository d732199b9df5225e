import { describe, expect, it } from 'vitest'
import { FAULT_KINDS, type FaultKind } from '../../sim/config.ts'
import { nodeSyncCryptoProvider } from '../../sim/node-crypto.ts'
import { describeLivenessFailure } from '../../sim/liveness-report.ts'
import { replayCommand } from '../../sim/replay.ts'
import { runSeed, type SeedResult } from '../../sim/runner.ts'

export const CI_MAX_PEERS = 20
const crypto = nodeSyncCryptoProvider()

/**
 * Runs seeds `from..to` of 3 to 20 peers each with every fault kind drawn per seed, asserting
 * zero divergence, zero lost writes and zero leaked reads; a failure names the seed and how to
 * replay it. The last test checks the range covered every fault kind and the peer range ends.
 */
export function seedSuite(from: number, to: number) {
  describe(`simulator seeds ${from}..${to}`, () => {
    const results: SeedResult[] = []
    const seeds = Array.from({ length: to - from + 1 }, (_, i) => from + i)
    it.each(seeds)('seed %i', async (seed) => {
      const r = await runSeed(seed, { maxPeers: CI_MAX_PEERS, crypto, tail: 30 })
      results.push(r)
      const bad = r.diverged + r.lostWrites + r.leakedReads
      const why = r.livenessFailure ? `\n${describeLivenessFailure(r.livenessFailure).join('\n')}` : ''
      const detail = bad ? `\n${r.failures.join('\n')}${why}\ntrace tail:\n${r.tail.join('\n')}\nreplay: ${replayCommand(seed, { maxPeers: CI_MAX_PEERS })}` : ''
      expect({ diverged: r.diverged, lostWrites: r.lostWrites, leakedReads: r.leakedReads }, detail).toEqual({ diverged: 0, lostWrites: 0, leakedReads: 0 })
    })
    it('covered every fault kind and peer counts from 3 to 20', () => {
      expect(results.length).toBe(seeds.length)
      const kinds = new Set<FaultKind>(results.flatMap((r) => r.faults))
      expect([...kinds].sort()).toEqual([...FAULT_KINDS].sort())
      const peers = results.map((r) => r.peers)
      expect(Math.min(...peers)).toBe(3)
      expect(Math.max(...peers)).toBeGreaterThanOrEqual(18)
      // The faults actually happened: frames lost, duplicated and cut, peers crashed, members removed.
      const sum = (f: (r: SeedResult) => number) => results.reduce((n, r) => n + f(r), 0)
      expect(sum((r) => r.stats.lost)).toBeGreaterThan(0)
      expect(sum((r) => r.stats.duplicated)).toBeGreaterThan(0)
      expect(sum((r) => r.stats.cutDrops)).toBeGreaterThan(0)
      expect(sum((r) => r.stats.crashes)).toBeGreaterThan(0)
      expect(sum((r) => r.stats.removed)).toBeGreaterThan(0)
    })
  })
}
