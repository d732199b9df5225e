import { describe, expect, it } from 'vitest'
import { describeLivenessFailure } from '../../sim/liveness-report.ts'
import { nodeSyncCryptoProvider } from '../../sim/node-crypto.ts'
import { replayCommand } from '../../sim/replay.ts'
import { runSeed, type SeedResult } from '../../sim/runner.ts'

const crypto = nodeSyncCryptoProvider()
const OPTS = { maxPeers: 6, adversaries: 2, hubs: 1 }

/**
 * Seeds with one hub (docs/simulation.md, "Hubs"): direct links between honest peers are cut
 * for most of the run, some pairs never link, some peers reach only the hub, peers go offline
 * for long stretches, and the adversaries talk to the hub too. Every check must stay zero, and
 * the hub must have carried what no direct link could.
 */
describe('simulator seeds with a hub', () => {
  const results: SeedResult[] = []
  it.each([1, 2, 3, 4, 5, 6, 7, 8])('seed %i', async (seed) => {
    const r = await runSeed(seed, { ...OPTS, crypto, tail: 30 })
    results.push(r)
    const checks = {
      diverged: r.diverged,
      lostWrites: r.lostWrites,
      leakedReads: r.leakedReads,
      voidApplied: r.voidApplied,
      memoryOver: r.memoryOver,
      honestBackedOff: r.honestBackedOff,
      hubLeaked: r.hubLeaked,
      hubDiverged: r.hubDiverged,
    }
    const bad = Object.values(checks).some((v) => v !== 0)
    const why = r.livenessFailure ? `\n${describeLivenessFailure(r.livenessFailure).join('\n')}` : ''
    const detail = bad ? `\n${r.failures.join('\n')}${why}\ntrace tail:\n${r.tail.join('\n')}\nreplay: ${replayCommand(seed, OPTS)}` : ''
    expect(checks, detail).toEqual({ diverged: 0, lostWrites: 0, leakedReads: 0, voidApplied: 0, memoryOver: 0, honestBackedOff: 0, hubLeaked: 0, hubDiverged: 0 })
    expect(r.hub?.hubs).toBe(1)
  })

  it('delivered through the hub what no direct link could', () => {
    expect(results.length).toBe(8)
    const sum = (f: (h: NonNullable<SeedResult['hub']>) => number) => results.reduce((n, r) => n + (r.hub ? f(r.hub) : 0), 0)
    // Converged members that never had a direct link, and members that linked to no honest
    // peer at all yet accepted changes, every one of them from the hub.
    expect(sum((h) => h.neverLinkedPairs)).toBeGreaterThan(0)
    expect(sum((h) => h.hubOnlyFed)).toBeGreaterThan(0)
    expect(sum((h) => h.relayed)).toBeGreaterThan(0)
    expect(sum((h) => h.viaHub)).toBeGreaterThan(sum((h) => h.direct))
    // The topology and the adversaries were there: frames cut, peers offline, attacks made.
    expect(results.reduce((n, r) => n + r.stats.cutDrops, 0)).toBeGreaterThan(0)
    expect(results.reduce((n, r) => n + Object.values(r.attacks).reduce((a, b) => a + (b ?? 0), 0), 0)).toBeGreaterThan(0)
  })
})
