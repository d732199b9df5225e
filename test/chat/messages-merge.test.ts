import fc from 'fast-check'
import { beforeAll, describe, expect, it } from 'vitest'
import { ensureXxh3, propertyIdSync } from '../../sync/crypto/hash.ts'
import { applyToRecord, type MergeOp, type RecordState, type StampInfo } from '../../sync/crdt/record.ts'
import { chatWriteRule } from '../../sync/modules/chat/authorship.ts'

/*
 * Chat's write rule folded by merge (sync/crdt/ruled-record.ts): every arrival order of the same
 * ops gives the same record, byte for byte, and only the author's edits and each signer's own
 * reaction leaf survive.
 */

const ALICE = 'alice-identity'
const BOB = 'bob-identity'
const CREATE_CHANGE = 'create-change'
let MSG: string
beforeAll(async () => {
  await ensureXxh3()
  MSG = propertyIdSync(CREATE_CHANGE)
})

interface Step {
  info: StampInfo
  op: MergeOp
}
const at = (l: number, c: string, a: string, i = 0): StampInfo => ({ l, c, a, t: l * 1000, i })
const date = (n: number) => ({ $date: new Date(n).toISOString() })
const create = (l = 5, creator = ALICE, extra: Record<string, unknown> = {}): Step => ({
  info: at(l, CREATE_CHANGE, ALICE),
  op: { k: 'set', p: '', v: { creator, createdAt: date(1), modifiedAt: date(1), text: 'hello', ...extra } as never },
})
const set = (l: number, c: string, a: string, p: string, v: unknown): Step => ({ info: at(l, c, a), op: { k: 'set', p, v: v as never } })
const unset = (l: number, c: string, a: string, p: string): Step => ({ info: at(l, c, a), op: { k: 'unset', p } })
const del = (l: number, c: string, a: string): Step => ({ info: at(l, c, a), op: { k: 'delete' } })

function fold(steps: readonly Step[]): { state: RecordState | undefined; outcomes: string[] } {
  let state: RecordState | undefined
  const outcomes: string[] = []
  for (const s of steps) {
    const r = applyToRecord(state, s.info, s.op, [], { rule: chatWriteRule, recordId: MSG })
    state = r.state
    outcomes.push(r.outcome)
  }
  return { state, outcomes }
}

/** What peers compare: the value, tombstone and the stamps `_ver.id` and the instants come from. */
const visible = (st: RecordState | undefined) => JSON.stringify(st && { value: st.value, deleted: st.deleted, created: st.created, modified: st.modified })

function permutations<T>(xs: readonly T[]): T[][] {
  if (xs.length <= 1) return [[...xs]]
  return xs.flatMap((x, i) => permutations([...xs.slice(0, i), ...xs.slice(i + 1)]).map((p) => [x, ...p]))
}

function expectOrderIndependent(steps: readonly Step[]): RecordState | undefined {
  const reference = fold(steps).state
  for (const p of permutations(steps)) expect(visible(fold(p).state)).toBe(visible(reference))
  return reference
}

describe('chat write rule at merge', () => {
  it('the author edits, another member only reacts in their own leaf, in every arrival order', () => {
    const st = expectOrderIndependent([
      create(),
      set(6, 'edit-a', ALICE, 'text', 'hello, edited'),
      set(6, 'edit-a2', ALICE, 'modifiedAt', date(2)),
      set(7, 'react-b', BOB, 'reactions.👍.' + BOB, date(3)),
      set(8, 'forge-b', BOB, 'text', 'forged by bob'),
      set(9, 'forge-b2', BOB, 'reactions.👍.' + ALICE, date(4)),
    ])
    expect(st!.value).toEqual({ creator: ALICE, createdAt: date(1), modifiedAt: date(2), text: 'hello, edited', reactions: { '👍': { [BOB]: date(3) } } })
    expect(st!.created.c).toBe(CREATE_CHANGE)
    // The newest accepted op, never Bob's refused ones stamped later.
    expect(st!.modified.c).toBe('react-b')
  })

  it('a forgery stamped before the create (a low lamport) never pre-empts it, whichever arrives first', () => {
    const forged = set(1, 'forge-low', BOB, '', { creator: BOB, text: 'mine now' })
    const forgedText = set(2, 'forge-low2', BOB, 'text', 'mine now')
    const st = expectOrderIndependent([create(5), forged, forgedText, set(6, 'edit-a', ALICE, 'text', 'edited')])
    expect(st!.value).toMatchObject({ creator: ALICE, text: 'edited' })
    expect(st!.created.c).toBe(CREATE_CHANGE)
    // Refused outright once the create is known.
    expect(fold([create(5), forged]).outcomes).toEqual(['applied', 'dropped_rule'])
  })

  it("the author's ops that arrive before the create wait for it; others' stay dropped", () => {
    const early = [set(6, 'edit-a', ALICE, 'text', 'edited'), set(7, 'forge-b', BOB, 'text', 'forged'), del(8, 'del-b', BOB)]
    const { state, outcomes } = fold([...early, create(5)])
    expect(outcomes).toEqual(['dropped_rule', 'dropped_rule', 'dropped_rule', 'applied'])
    expect(state!.value).toMatchObject({ text: 'edited' })
    expect(state!.deleted).toBeUndefined()
    expect(state!.pending).toBeUndefined()
    expectOrderIndependent([...early, create(5)])
  })

  it('only the author deletes; a deleted message takes no more edits', () => {
    expect(expectOrderIndependent([create(), del(6, 'del-b', BOB), set(7, 'edit-a', ALICE, 'text', 'x')])!.value).toMatchObject({ text: 'x' })
    const st = expectOrderIndependent([create(), del(7, 'del-a', ALICE), set(6, 'edit-a', ALICE, 'text', 'x'), set(8, 'react-b', BOB, `reactions.👍.${BOB}`, date(3))])
    expect(st!.deleted?.c).toBe('del-a')
    expect(st!.value).toBeUndefined()
  })

  it('create-only fields, the creator field and whole-record rewrites are refused even from the author', () => {
    const { outcomes } = fold([
      create(),
      set(6, 'a1', ALICE, 'attachments.x', { type: 'link', link: 'svc://f/s/f' }),
      set(7, 'a2', ALICE, 'agent', { name: 'bot', done: true }),
      set(8, 'a3', ALICE, 'creator', BOB),
      set(9, 'a4', ALICE, '', { creator: ALICE, text: 'rewrite' }),
      set(10, 'a5', ALICE, 'replyToMessageId', 'other'),
      set(11, 'a6', ALICE, 'reactions.👍', { [BOB]: date(1) }),
      set(12, 'a7', ALICE, 'text', 'ok'),
      unset(13, 'a8', ALICE, 'mentions'),
    ])
    expect(outcomes).toEqual(['applied', 'dropped_rule', 'dropped_rule', 'dropped_rule', 'dropped_rule', 'dropped_rule', 'dropped_rule', 'applied', 'applied'])
  })

  it('a create must name its signer as creator, come from the change its id derives from, and carry no reactions', () => {
    expect(fold([create(5, BOB)]).outcomes).toEqual(['dropped_rule'])
    expect(fold([create(5, ALICE, { reactions: { '👍': { [BOB]: date(1) } } })]).outcomes).toEqual(['dropped_rule'])
    expect(fold([create(5, ALICE, { unread: true })]).outcomes).toEqual(['dropped_rule'])
    const elsewhere = { ...create(), info: at(5, 'another-change', ALICE) }
    expect(fold([elsewhere]).outcomes).toEqual(['dropped_rule'])
    expect(fold([elsewhere]).state!.value).toBeUndefined()
  })

  it('reaction leaves: set to an instant or bare seconds, unset by their signer only', () => {
    const { state, outcomes } = fold([
      create(),
      set(6, 'r1', BOB, `reactions.👍.${BOB}`, date(3)),
      set(7, 'r2', BOB, `reactions.🎉.${BOB}`, 1700000000),
      set(8, 'r3', BOB, `reactions.🎉.${BOB}`, { not: 'an instant' }),
      unset(9, 'r4', ALICE, `reactions.👍.${BOB}`),
      unset(10, 'r5', BOB, `reactions.👍.${BOB}`),
      set(11, 'r6', BOB, `reactions.👍.${BOB}.deeper`, date(3)),
    ])
    expect(outcomes).toEqual(['applied', 'applied', 'applied', 'dropped_rule', 'dropped_rule', 'applied', 'dropped_rule'])
    expect(state!.value).toMatchObject({ reactions: { '👍': {}, '🎉': { [BOB]: 1700000000 } } })
  })

  it('a dataset without a rule folds as before (the rule is opt-in per dataset)', () => {
    let st: RecordState | undefined
    for (const s of [set(1, 'x', BOB, 'text', 'free'), set(2, 'y', ALICE, 'text', 'also free')]) st = applyToRecord(st, s.info, s.op, []).state
    expect(st!.value).toEqual({ text: 'also free' })
    expect(st!.first).toBeUndefined()
  })

  it('property: random ops by the author and a forger fold to the same record in any order', () => {
    const signer = fc.constantFrom(ALICE, BOB)
    const leaf = fc.constantFrom('text', 'modifiedAt', 'mentions', 'agent', 'creator', `reactions.👍.${ALICE}`, `reactions.👍.${BOB}`, 'reactions.🎉', '')
    const op = fc.oneof(
      {
        weight: 5,
        arbitrary: fc
          .tuple(signer, leaf, fc.integer({ min: 0, max: 9 }))
          .map(([a, p, n]) => ({ a, op: { k: 'set', p, v: p === '' ? { creator: a, text: `w${n}` } : p.startsWith('reactions') ? date(n) : `v${n}` } satisfies MergeOp })),
      },
      { weight: 2, arbitrary: fc.tuple(signer, leaf).map(([a, p]) => ({ a, op: { k: 'unset', p } satisfies MergeOp })) },
      { weight: 1, arbitrary: signer.map((a) => ({ a, op: { k: 'delete' } satisfies MergeOp })) },
    )
    const history = fc.record({
      createAt: fc.integer({ min: 1, max: 12 }),
      ops: fc.array(fc.tuple(op, fc.integer({ min: 1, max: 12 })), { minLength: 1, maxLength: 10 }),
      seed: fc.integer(),
    })
    fc.assert(
      fc.property(history, ({ createAt, ops, seed }) => {
        const steps: Step[] = [create(createAt), ...ops.map(([o, l], i) => ({ info: at(l, `c${i}`, o.a), op: o.op }))]
        const ordered = [...steps].sort((x, y) => x.info.l - y.info.l || (x.info.c < y.info.c ? -1 : x.info.c > y.info.c ? 1 : 0))
        const shuffled = [...steps]
        let r = seed
        for (let i = shuffled.length - 1; i > 0; i--) {
          r = (Math.imul(r, 1103515245) + 12345) | 0
          const j = Math.abs(r) % (i + 1)
          ;[shuffled[i], shuffled[j]] = [shuffled[j], shuffled[i]]
        }
        const reference = fold(ordered).state
        expect(visible(fold(shuffled).state)).toBe(visible(reference))
        expect(visible(fold([...ordered].reverse()).state)).toBe(visible(reference))
        // Nobody but Alice ever changes anything but their own reaction leaf.
        const v = reference?.value as Record<string, unknown> | undefined
        if (v) expect(v.creator).toBe(ALICE)
      }),
      { numRuns: 400 },
    )
  })
})
