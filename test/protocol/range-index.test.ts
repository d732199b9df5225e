import { describe, expect, it } from 'vitest'
import fc from 'fast-check'
import { contentId } from '../../sync/crypto/hash.ts'
import { RangeIndex, positionOf } from '../../sync/protocol/range-index.ts'
import { reconcileIndexes, splitBits } from '../../sync/protocol/reconcile.ts'
import { modifyRecords } from '../../sync/space/modify.ts'

// Any string is an id to the index; heads hashes are any digest.
const id = (n: number) => `tree-${n}`
const hh = (n: number) => {
  const h = new Uint8Array(32)
  new DataView(h.buffer).setUint32(0, n)
  return h
}
const spaceId = contentId(new Uint8Array([1, 2, 3]))

/** Two indexes over `n` ids: `changed` with other heads on b, `onlyA`/`onlyB` on one side. */
function pair(n: number, changed: number[], onlyA: number[], onlyB: number[]) {
  const a = new RangeIndex()
  const b = new RangeIndex()
  for (let i = 0; i < n; i++) {
    a.set(id(i), hh(i))
    b.set(id(i), changed.includes(i) ? hh(i + 500_000) : hh(i))
  }
  for (const i of onlyA) a.set(id(n + i), hh(n + i))
  for (const i of onlyB) b.set(id(n + 10_000 + i), hh(n + i))
  return { a, b }
}

/** Large pairs with cheap ids (any string is an id to the index) and digests as heads hashes. */
function bigPair(n: number, changed: number[]) {
  const a = new RangeIndex()
  const b = new RangeIndex()
  const h = new Uint8Array(32)
  for (let i = 0; i < n; i++) {
    new DataView(h.buffer).setUint32(0, i)
    a.set(`t${i}`, h)
    if (changed.includes(i)) h[31] = 1
    b.set(`t${i}`, h)
    h[31] = 0
  }
  return { a, b }
}

describe('range index', () => {
  it('keeps fingerprints right under incremental updates', () => {
    const inc = new RangeIndex()
    for (let i = 0; i < 500; i++) inc.set(id(i), hh(i))
    inc.fingerprint()
    for (let i = 0; i < 500; i += 7) inc.set(id(i), hh(i + 1))
    inc.delete(id(3))
    inc.set(id(3), hh(3))
    const fresh = new RangeIndex()
    for (let i = 0; i < 500; i++) fresh.set(id(i), i % 7 === 0 ? hh(i + 1) : hh(i))
    for (let len = 0; len <= 6; len++) {
      for (let p = 0; p < 2 ** len; p++) expect(inc.fingerprint(p, len)).toEqual(fresh.fingerprint(p, len))
    }
    expect(inc.fingerprint().count).toBe(500)
  })

  it('elements of a range are those whose position has its prefix', () => {
    const ix = new RangeIndex()
    for (let i = 0; i < 200; i++) ix.set(id(i), hh(i))
    const els = ix.elements(5, 4)
    expect(els.length).toBe(ix.count(5, 4))
    for (const e of els) expect(e.pos >>> 28).toBe(5)
    expect(els.map((e) => e.pos)).toEqual([...els.map((e) => e.pos)].sort((x, y) => x - y))
    expect(positionOf(id(1))).toBe(ix.elements().find((e) => e.id === id(1))!.pos)
  })

  it('a space in sync costs one round trip of at most 64 bytes each way', () => {
    const { a, b } = bigPair(20_000, [])
    const run = reconcileIndexes(a, b, { spaceId, salt: 1 })
    expect(run.roundTrips).toBe(1)
    expect(run.bytesOut).toBeLessThanOrEqual(64)
    expect(run.bytesIn).toBeLessThanOrEqual(64)
  })

  it('narrows to exactly the differing elements (property)', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 400 }),
        fc.uniqueArray(fc.nat(399), { maxLength: 30 }),
        fc.uniqueArray(fc.nat(50), { maxLength: 20 }),
        fc.uniqueArray(fc.nat(50), { maxLength: 20 }),
        fc.nat(),
        (n, changed0, onlyA, onlyB, salt) => {
          const changed = changed0.filter((i) => i < n)
          const { a, b } = pair(n, changed, onlyA, onlyB)
          const run = reconcileIndexes(a, b, { spaceId, salt, tuning: { leafMax: 6, leafTarget: 3 } })
          const mine = new Set([...run.initiatorMine, ...run.responderMine])
          const theirs = new Set([...run.initiatorTheirs, ...run.responderTheirs])
          const expected = [...changed.map(id), ...onlyA.map((i) => id(n + i)), ...onlyB.map((i) => id(n + 10_000 + i))]
          // Nothing reported that does not differ...
          for (const x of mine) expect(expected).toContain(x)
          for (const p of theirs) expect(expected.map(positionOf)).toContain(p)
          // ...and every difference is known to one side: by id to its holder, or by position
          // to the side that lacks it (which then asks for it).
          for (const x of expected) expect(mine.has(x) || theirs.has(positionOf(x))).toBe(true)
        },
      ),
      { numRuns: 150 },
    )
  })

  it('finds one difference among 20,000 in two round trips', () => {
    const { a, b } = bigPair(20_000, [7_777])
    const run = reconcileIndexes(a, b, { spaceId, salt: 42 })
    expect(run.roundTrips).toBe(2)
    expect([...run.initiatorMine, ...run.responderMine]).toEqual(['t7777'])
    expect(run.bytesOut + run.bytesIn).toBeLessThan(1200)
  })

  it('splits to reach leaves in at most two steps', () => {
    expect(splitBits(100_000, 0)).toBe(7)
    expect(splitBits(800, 7)).toBe(7)
    expect(splitBits(50, 14)).toBe(3)
    expect(splitBits(10, 31)).toBe(1)
  })
})

describe('space index', () => {
  it('follows the replica through commits, whoever else listens', async () => {
    const { SpaceReplica } = await import('../../sync/replica/space-replica.ts')
    const { SpaceRangeIndex } = await import('../../sync/protocol/range-index.ts')
    const { deps, keyFor } = await import('../helpers.ts')
    const r = await SpaceReplica.create(await deps(1), keyFor(1))
    const si = new SpaceRangeIndex(r)
    const fresh = () => {
      const x = new SpaceRangeIndex(r)
      const fp = x.current().fingerprint()
      x.close()
      return fp
    }
    expect(si.current().fingerprint().count).toBe(1)
    const obj = await r.createObject()
    expect(si.current().fingerprint()).toEqual(fresh())
    let seen = 0
    r.addCommitListener(() => {
      seen++
    }) // someone else listens too
    await modifyRecords(r, obj, 'd', [{ id: 'x', ops: [{ type: '$set', path: 'v', value: 1 }] }])
    expect(si.current().fingerprint()).toEqual(fresh())
    await modifyRecords(r, obj, 'd', [{ id: 'x', ops: [{ type: '$set', path: 'v', value: 2 }] }])
    expect(si.current().fingerprint()).toEqual(fresh())
    expect(seen).toBeGreaterThan(0)
  })
})
