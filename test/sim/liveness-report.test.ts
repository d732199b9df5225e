import { describe, expect, it } from 'vitest'
import { describeLivenessFailure } from '../../sim/liveness-report.ts'
import { nodeSyncCryptoProvider } from '../../sim/node-crypto.ts'
import { replayCommand } from '../../sim/replay.ts'
import { runSeed } from '../../sim/runner.ts'

const crypto = nodeSyncCryptoProvider()

/**
 * A liveness bound too small for the seed makes it fail the way a real liveness bug would, and
 * the result must say why: who agrees with whom, on which trees, and what each side lacks.
 */
describe('a seed that does not converge within its liveness bound', () => {
  it('names the groups of members, the trees they disagree on and the heads each lacks', async () => {
    // Seed 381 at up to 6 peers: p2 is behind p0 on two object trees when the safety phase ends.
    const r = await runSeed(381, { maxPeers: 6, maxLivenessRounds: 0, crypto })
    expect(r.diverged).toBe(1)
    expect(r.failures[0]).toBe('not converged after 0 liveness rounds: p2 differ from p0')
    const f = r.livenessFailure
    if (!f) throw new Error('no liveness report')
    expect(f.rounds).toBe(0)
    expect(f.maxRounds).toBe(0)
    expect(f.groups[0]).toContain('p0')
    expect(f.groups.slice(1).flat()).toEqual(['p2'])
    expect(f.trees.length).toBe(2)
    for (const t of f.trees) {
      expect(t.acl).toBe(false)
      expect(t.heads[0]).not.toEqual(t.heads[1])
      // What p2 lacks outright is what p0 heads there (p0 holds everything p2 does).
      expect(t.lacking).toEqual([{ group: 1, ids: t.heads[0] }])
    }
    const lines = describeLivenessFailure(f)
    expect(lines[0]).toMatch(/^liveness: 2 groups of members after 0 of at most 0 full rounds: \{p0,.*\} \{p2\}$/)
    expect(lines.filter((l) => l.includes('{p2} lacks'))).toHaveLength(2)
  })

  it("reports how the last round's exchanges ended and what each member refused", async () => {
    const r = await runSeed(23, { maxPeers: 5, adversaries: 2, maxLivenessRounds: 1, crypto })
    const f = r.livenessFailure
    if (!f) throw new Error('no liveness report')
    expect(f.rounds).toBe(1)
    expect(f.history).toHaveLength(1)
    const exchanges = Object.values(f.history[0].outcomes).reduce((n, k) => n + k, 0)
    expect(exchanges).toBeGreaterThan(0)
    expect(f.trees.some((t) => t.acl)).toBe(true)
    expect(f.refused.length).toBeGreaterThan(0)
    expect(f.eventsQueued).toBe(false)
    expect(describeLivenessFailure(f).some((l) => l.startsWith('  round 1: '))).toBe(true)
  })

  it('is absent when the members converge', async () => {
    const r = await runSeed(7, { maxPeers: 6, crypto })
    expect(r.failures).toEqual([])
    expect(r.livenessFailure).toBeUndefined()
  })
})

describe('replayCommand', () => {
  it('names every option that changes what a seed draws or does', () => {
    expect(replayCommand(123, { maxPeers: 12, adversaries: 2 })).toBe('npm run sim -- --seed 123 --peers 12 --adversaries 2 --verbose')
    expect(replayCommand(5, { maxPeers: 40, exactPeers: true, scale: 3, concurrentAdmins: true })).toBe(
      'npm run sim -- --seed 5 --peers 40 --exact-peers --scale 3 --concurrent-admins --verbose',
    )
    expect(replayCommand(9, { maxPeers: 8, scale: 1, adversaries: 1, concurrentAdmins: false })).toBe('npm run sim -- --seed 9 --peers 8 --adversaries 1 --owner-admin --verbose')
  })
})
