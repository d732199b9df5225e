import { describe, expect, it } from 'vitest'
import { applyToRecord, type RecordState, type StampInfo } from '../../sync/crdt/record.ts'
import { resolveUserOps } from '../../sync/crdt/resolve.ts'
import { checkPayload } from '../../sync/crdt/ops.ts'
import type { Json } from '../../sync/crdt/ops.ts'

const at = (l: number, c = 'c', i = 0): StampInfo => ({ l, c, i, a: 'A', t: l })
type MOp = { k: 'set'; p: string; v: Json } | { k: 'unset'; p: string } | { k: 'delete' }

function fold(ops: Array<[StampInfo, MOp]>, pins: string[] = []): RecordState | undefined {
  let st: RecordState | undefined
  for (const [info, op] of ops) st = applyToRecord(st, info, op, pins).state
  return st
}

describe('per-path merge', () => {
  it('last writer wins per path in (lamport, changeId) order, whatever the arrival order', () => {
    const ops: Array<[StampInfo, MOp]> = [
      [at(1), { k: 'set', p: '', v: { a: 1, b: { c: 2 } } }],
      [at(2, 'x'), { k: 'set', p: 'b.c', v: 3 }],
      [at(2, 'y'), { k: 'set', p: 'b.c', v: 4 }],
      [at(3), { k: 'unset', p: 'a' }],
      [at(4), { k: 'set', p: 'b.d', v: 5 }],
    ]
    const expected = { b: { c: 4, d: 5 } }
    expect(fold(ops)?.value).toEqual(expected)
    expect(fold([...ops].reverse())?.value).toEqual(expected)
    expect(fold([ops[2], ops[0], ops[4], ops[1], ops[3]])?.value).toEqual(expected)
  })

  it('a set on a path shadows earlier sets below it, not later ones', () => {
    const st = fold([
      [at(1), { k: 'set', p: 'a.b', v: 1 }],
      [at(3), { k: 'set', p: 'a.c', v: 2 }],
      [at(2), { k: 'set', p: 'a', v: { z: 0 } }],
    ])
    expect(st?.value).toEqual({ a: { z: 0, c: 2 } })
  })

  it('pinned paths are first-write-wins, op by op, in stamp order', () => {
    const pins = ['kind']
    const a: [StampInfo, MOp] = [at(5), { k: 'set', p: '', v: { kind: 'number', name: 'n' } }]
    const b: [StampInfo, MOp] = [at(7), { k: 'set', p: 'kind', v: 'string' }]
    const c: [StampInfo, MOp] = [at(8), { k: 'set', p: 'name', v: 'renamed' }]
    const early: [StampInfo, MOp] = [at(3), { k: 'set', p: 'kind', v: 'boolean' }]
    expect(fold([a, b, c], pins)?.value).toEqual({ kind: 'number', name: 'renamed' })
    // The earlier write of the pinned fact, arriving last, wins everywhere; the whole-record
    // set that contradicts it is dropped.
    const want = { kind: 'boolean', name: 'renamed' }
    expect(fold([a, b, c, early], pins)?.value).toEqual(want)
    expect(fold([early, c, b, a], pins)?.value).toEqual(want)
    expect(applyToRecord(fold([a], pins), b[0], b[1], pins).outcome).toBe('dropped_pinned')
  })

  it('a record tombstone absorbs earlier and later sets; created/modified are min/max stamps', () => {
    const ops: Array<[StampInfo, MOp]> = [
      [at(1), { k: 'set', p: 'x', v: 1 }],
      [at(2), { k: 'delete' }],
      [at(3), { k: 'set', p: 'x', v: 2 }],
    ]
    for (const order of [ops, [...ops].reverse()]) {
      const st = fold(order)!
      expect(st.value).toBeUndefined()
      expect(st.deleted?.l).toBe(2)
      expect(st.created.l).toBe(1)
      expect(st.modified.l).toBe(3)
    }
  })
})

describe('write-time resolution', () => {
  it('turns $inc, $addToSet and $pull into the $set of their result', () => {
    const r = resolveUserOps({ n: 1, tags: ['a'] }, [
      { type: '$inc', path: 'n', value: 2 },
      { type: '$addToSet', path: 'tags', value: 'b' },
      { type: '$addToSet', path: 'tags', value: 'a' },
      { type: '$pull', path: 'tags', value: 'a' },
      { type: '$inc', path: 'tags', value: 1 },
    ])
    expect(r.ops).toEqual([
      { k: 'set', p: 'n', v: 3 },
      { k: 'set', p: 'tags', v: ['a', 'b'] },
      { k: 'set', p: 'tags', v: ['a', 'b'] },
      { k: 'set', p: 'tags', v: ['b'] },
    ])
    expect(r.rejections).toEqual([{ index: 4, code: 'dataset.validation', reason: '$inc on a non-number' }])
  })

  it('refuses values merge cannot store and malformed payloads from peers', () => {
    expect(resolveUserOps(undefined, [{ type: '$set', path: 'x', value: Number.NaN }]).rejections).toHaveLength(1)
    expect(() => checkPayload({ ops: [{ op: 'set', ds: 'd', id: 'r', path: 'a..b', value: 1 }] })).toThrow()
    expect(() => checkPayload({ ops: [{ op: 'set', ds: 'd', id: 'r', path: '__proto__', value: 1 }] })).toThrow()
    expect(() => checkPayload({ ops: [{ op: 'explode' }] })).toThrow()
    expect(() => checkPayload({ ops: 'no' })).toThrow()
  })
})
