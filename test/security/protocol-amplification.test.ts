import { afterEach, describe, expect, it } from 'vitest'
import { decodeMessage, encodeMessage, type RangeItem } from '../../sync/protocol/messages.ts'
import * as limits from '../../sync/protocol/limits.ts'
const { SYNC_LIMITS } = limits
// What one listed element costs in the budget (a salted hash).
const HASH_UNITS = limits.WORK_UNITS?.hash ?? 16
import { RangeIndex } from '../../sync/protocol/range-index.ts'
import { idFor } from '../helpers.ts'
import { link, node, type Node } from '../protocol/helpers.ts'

/**
 * What one step may make its receiver do, counted on the receiving side: the enumeration it
 * costs (elements listed or matched, fingerprints, DAG nodes walked) and how many steps one
 * exchange may take, whatever the sender writes in its fields.
 */

const TREES = 300

async function bigSpace() {
  const a = await node('a', 1)
  await a.replica.addMember(idFor(2), 'reader')
  for (let i = 0; i < TREES; i++) await a.replica.createObject()
  const b = await node('b', 2, a.replica.spaceId)
  await link(a, b)
  return { a, b }
}

/** Opens an exchange from b to a the way an attacker would (any fingerprint); its req. */
async function openFrom(b: Node, a: Node): Promise<number> {
  const req = 0x0badf00d
  const sync = encodeMessage({ type: 'sync', spaceId: a.replica.spaceId, req, fp: new Uint8Array(8).fill(7), count: 5 })
  await a.session.handle(b.name, sync)
  return req
}

// Counts every element the receiver's range index enumerates.
let enumerated = 0
const elements = RangeIndex.prototype.elements
const fingerprint = RangeIndex.prototype.fingerprint
RangeIndex.prototype.elements = function (this: RangeIndex, ...args: Parameters<typeof elements>) {
  const out = elements.apply(this, args)
  enumerated += out.length
  return out
}
RangeIndex.prototype.fingerprint = function (this: RangeIndex, ...args: Parameters<typeof fingerprint>) {
  enumerated++
  return fingerprint.apply(this, args)
}
afterEach(() => {
  enumerated = 0
})

describe('A reader can cost the daemon 4096x the space size in CPU with one 20 KB step', () => {
  it('one step of 4,096 whole-space ranges costs at most the per-step work budget', async () => {
    const { a, b } = await bigSpace()
    const req = await openFrom(b, a)
    // 4,096 copies of "here is everything I hold of the whole space: nothing".
    const ranges: RangeItem[] = Array.from({ length: SYNC_LIMITS.maxRangeItems }, () => ({ kind: 'elems', prefix: 0, len: 0, elems: new Uint8Array(0) }))
    const bytes = encodeMessage({ type: 'step', spaceId: a.replica.spaceId, req, hop: 1, ranges, heads: [], wants: [], changes: [] })
    expect(bytes.length).toBeLessThan(25_000)
    enumerated = 0
    const out = await a.session.handle('b', bytes)
    const space = TREES + 1
    // Without a cap this is 4,096 x the space; the budget allows the first item plus the rest of
    // maxStepWork, counted in elements on both sides.
    expect(enumerated).toBeLessThanOrEqual((SYNC_LIMITS.maxStepWork ?? 262_144) / HASH_UNITS + space)
    expect(enumerated).toBeLessThan(SYNC_LIMITS.maxRangeItems * space)
    // The reply still serves the reader: the whole space, once.
    const sent = out.map((o) => decodeMessage(o.bytes)).reduce((n, m) => n + (m.type === 'step' ? m.changes.length : 0), 0)
    expect(sent).toBeLessThanOrEqual(a.replica.acl.entries.size + TREES)
    expect(a.session.countersOf('b').dropped.over_budget).toBe(1)
  }, 60_000)

  it('every step of one exchange draws on one budget', async () => {
    const { a, b } = await bigSpace()
    const req = await openFrom(b, a)
    const ranges: RangeItem[] = Array.from({ length: 2048 }, () => ({ kind: 'elems', prefix: 0, len: 0, elems: new Uint8Array(0) }))
    enumerated = 0
    for (let hop = 1; hop <= 10; hop++) {
      await a.session.handle('b', encodeMessage({ type: 'step', spaceId: a.replica.spaceId, req, hop, ranges, heads: [], wants: [], changes: [] }))
    }
    // Each step's first item always goes through; everything else shares maxExchangeWork.
    expect(enumerated).toBeLessThanOrEqual((SYNC_LIMITS.maxExchangeWork ?? 1_048_576) / HASH_UNITS + 10 * (TREES + 1))
  }, 60_000)
})

describe("The hop limit trusts the sender's hop field", () => {
  it('a peer that keeps asking with hop 1 is refused after the receiver counted maxHops / 2 questions', async () => {
    const { a, b } = await bigSpace()
    const req = await openFrom(b, a)
    const obj = a.replica.treeIds()[0]
    const fake = 'EwDGJ39WrAcMFU66ZWJHCvuM3mKsRgQ8w4Q2c9Y3vYrY'
    // Always hop 1, always a question a must answer (heads it does not know).
    const ask = encodeMessage({ type: 'step', spaceId: a.replica.spaceId, req, hop: 1, ranges: [], heads: [{ treeId: obj, heads: [fake], have: [] }], wants: [], changes: [] })
    let answered = 0
    let refused = 0
    for (let i = 0; i < 100; i++) {
      const out = await a.session.handle('b', ask)
      const m = out.length ? decodeMessage(out[0].bytes) : undefined
      if (m?.type === 'step') answered++
      if (m?.type === 'error' && m.code === 'too_many_steps') refused++
    }
    expect(answered).toBeLessThanOrEqual(Math.ceil(SYNC_LIMITS.maxHops / 2))
    expect(refused).toBeGreaterThan(0)
    expect(a.session.countersOf('b').dropped.too_many_steps).toBe(refused)
  }, 60_000)

  it('questions outside any exchange either side opened are not answered', async () => {
    const { a } = await bigSpace()
    const obj = a.replica.treeIds()[0]
    const fake = 'EwDGJ39WrAcMFU66ZWJHCvuM3mKsRgQ8w4Q2c9Y3vYrY'
    let answered = 0
    // A fresh req every time: each would be a new "exchange" with its own hop count.
    for (let req = 1; req <= 50; req++) {
      const out = await a.session.handle(
        'b',
        encodeMessage({ type: 'step', spaceId: a.replica.spaceId, req, hop: 1, ranges: [], heads: [{ treeId: obj, heads: [fake], have: [] }], wants: [], changes: [] }),
      )
      if (out.some((o) => decodeMessage(o.bytes).type === 'step')) answered++
    }
    expect(answered).toBe(0)
    expect(a.session.countersOf('b').dropped.stale).toBe(50)
  }, 60_000)
})
