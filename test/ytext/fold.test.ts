import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { applyToRecord } from '../../sync/crdt/record.ts'
import { FoldReplica, type Stamped } from './fold-helpers.ts'

/**
 * The text kind at the merge layer (sync/crdt/ytext.ts): three replicas edit one block's text
 * concurrently; every replica then gets every op, in any order, with duplicates and in batches
 * (a batch ends with the record going through the storage codec, as a replica restart does).
 */

type Step =
  { kind: 'edit'; who: number; at: number; del: number; ins: string } | { kind: 'set'; who: number; value: string } | { kind: 'deliver'; from: number; to: number; count: number }

const stepArb = (withSets: boolean, insertOnly: boolean) =>
  fc.oneof(
    {
      weight: 5,
      arbitrary: fc.record({ kind: fc.constant('edit' as const), who: fc.nat(2), at: fc.nat(40), del: insertOnly ? fc.constant(0) : fc.nat(3), ins: fc.string({ maxLength: 3 }) }),
    },
    { weight: withSets ? 1 : 0, arbitrary: fc.record({ kind: fc.constant('set' as const), who: fc.nat(2), value: fc.string({ maxLength: 6 }) }) },
    { weight: 3, arbitrary: fc.record({ kind: fc.constant('deliver' as const), from: fc.nat(2), to: fc.nat(2), count: fc.nat(4) }) },
  )

/** Unique characters per insert, so a lost one is seen (CJK block: never produced by fc.string). */
let nextChar = 0x4e00
const freshChars = (n: number) => Array.from({ length: n }, () => String.fromCharCode(nextChar++)).join('')

function run(steps: Step[], uniqueInserts: boolean) {
  const reps = [new FoldReplica('alice', 'a1'), new FoldReplica('bob', 'b1'), new FoldReplica('alice', 'a2')]
  const all: Stamped[] = []
  const sent = reps.map(() => reps.map(() => 0))
  const byWriter: Stamped[][] = reps.map(() => [])
  const inserted = new Set<string>()
  for (const s of steps) {
    if (s.kind === 'edit') {
      const r = reps[s.who]
      const cur = r.text() ?? ''
      const at = Math.min(s.at, cur.length)
      const ins = uniqueInserts ? freshChars(s.ins.length) : s.ins
      for (const ch of ins) inserted.add(ch)
      const op = r.writeText(cur.slice(0, at) + ins + cur.slice(at + s.del))
      if (op) {
        all.push(op)
        byWriter[s.who].push(op)
      }
    } else if (s.kind === 'set') {
      const op = reps[s.who].local({ k: 'set', p: 'text', v: s.value })
      all.push(op)
      byWriter[s.who].push(op)
    } else {
      // Partial delivery in the writer's order (a peer's changes arrive causally in sync).
      const list = byWriter[s.from]
      const n = Math.min(list.length, sent[s.from][s.to] + s.count)
      for (let k = sent[s.from][s.to]; k < n; k++) reps[s.to].apply(list[k])
      sent[s.from][s.to] = n
    }
  }
  return { reps, all, inserted }
}

/** Every op to every replica in a shuffled order, some twice, the record reloaded between batches. */
function deliverAll(reps: FoldReplica[], all: Stamped[], order: number[], dupes: number[], batch: number) {
  for (const r of reps) {
    const seq = [...order.map((k) => all[k % all.length]), ...dupes.map((k) => all[k % all.length])]
    seq.forEach((op, k) => {
      r.apply(op)
      if ((k + 1) % batch === 0) r.state = r.reloaded()
    })
  }
}

const perm = (n: number, seed: number[]) => {
  const idx = Array.from({ length: n }, (_, i) => i)
  for (let i = n - 1; i > 0; i--) {
    const j = (seed[i % seed.length] ?? 0) % (i + 1)
    ;[idx[i], idx[j]] = [idx[j], idx[i]]
  }
  return idx
}

describe('ytext fold', () => {
  it('three replicas, every delivery order, duplicates and batches: same text and same state digest', () => {
    fc.assert(
      fc.property(
        fc.array(stepArb(false, false), { minLength: 1, maxLength: 40 }),
        fc.array(fc.nat(1000), { minLength: 1, maxLength: 50 }),
        fc.array(fc.nat(1000), { maxLength: 10 }),
        fc.integer({ min: 1, max: 7 }),
        (steps, shuffle, dupes, batch) => {
          const { reps, all } = run(steps, false)
          if (all.length === 0) return
          deliverAll(reps, all, perm(all.length, shuffle), all.length ? dupes : [], batch)
          const texts = reps.map((r) => r.text())
          expect(texts[1]).toBe(texts[0])
          expect(texts[2]).toBe(texts[0])
          const d = reps.map((r) => r.digest())
          expect(d[1]).toBe(d[0])
          expect(d[2]).toBe(d[0])
          // A fresh replica that sees the ops in reverse stamp-unaware order agrees too.
          const fresh = new FoldReplica('carol', 'c')
          for (const op of [...all].reverse()) fresh.apply(op)
          expect(fresh.digest()).toBe(d[0])
        },
      ),
      { numRuns: 150 },
    )
  })

  it('with plain sets on the text path: every order converges to the stamp-order rule', () => {
    fc.assert(
      fc.property(fc.array(stepArb(true, false), { minLength: 1, maxLength: 30 }), fc.array(fc.nat(1000), { minLength: 1, maxLength: 40 }), (steps, shuffle) => {
        const { reps, all } = run(steps, false)
        if (all.length === 0) return
        deliverAll(reps, all, perm(all.length, shuffle), [], 3)
        const d = reps.map((r) => r.digest())
        expect(d[1]).toBe(d[0])
        expect(d[2]).toBe(d[0])
        // The latest op by stamp decides what the path shows when it is a set.
        const last = [...all].sort((x, y) => x.info.l - y.info.l || (x.info.c < y.info.c ? -1 : x.info.c > y.info.c ? 1 : 0)).at(-1)!
        if (last.op.k === 'set') expect(reps[0].text()).toBe(last.op.v)
      }),
      { numRuns: 150 },
    )
  })

  it('no inserted character is lost unless a replica deleted it', () => {
    fc.assert(
      fc.property(fc.array(stepArb(false, true), { minLength: 1, maxLength: 40 }), fc.array(fc.nat(1000), { minLength: 1, maxLength: 50 }), (steps, shuffle) => {
        const { reps, all, inserted } = run(steps, true)
        if (all.length === 0) return
        deliverAll(reps, all, perm(all.length, shuffle), [], 4)
        const text = reps[0].text() ?? ''
        for (const ch of inserted) expect(text).toContain(ch)
        expect(Array.from(text).length).toBe(inserted.size)
      }),
      { numRuns: 150 },
    )
  })

  it('a set replaces the text, and a later edit applies on top of the set', () => {
    const a = new FoldReplica('alice', 'a')
    const b = new FoldReplica('bob', 'b')
    const ops = [a.writeText('hello world')!]
    b.apply(ops[0])
    const set = b.local({ k: 'set', p: 'text', v: 'replaced' })
    a.apply(set)
    expect(a.text()).toBe('replaced')
    const e1 = a.writeText('replaced!')!
    const e2 = b.writeText('>replaced')!
    a.apply(e2)
    b.apply(e1)
    expect(a.text()).toBe('>replaced!')
    expect(b.digest()).toBe(a.digest())
  })

  it('an update under another writer\u2019s client id is dropped on every peer', () => {
    const a = new FoldReplica('alice', 'a')
    const op = a.writeText('mine')!
    const forged = { info: { ...op.info, a: 'mallory' }, op: op.op }
    const r = applyToRecord(undefined, forged.info, forged.op, [])
    expect(r.outcome).toBe('dropped_invalid')
  })
})
