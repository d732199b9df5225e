import { describe, expect, it } from 'vitest'
import fc from 'fast-check'
import { decodeMessage, encodeMessage } from '../../sync/protocol/messages.ts'
import { JOIN_LIMITS } from '../../sync/protocol/limits.ts'
import type { SessionEvents } from '../../sync/protocol/session.ts'
import { contentId } from '../../sync/crypto/hash.ts'
import { idFor, keyFor } from '../helpers.ts'
import { frames, link, pump } from './helpers.ts'
import { aclChange, joinNode } from './join-helpers.ts'

const S = contentId(new Uint8Array([42]))

describe('a join over the wire', () => {
  it('the handler sees the change and the proved account; its status comes back as a joinAnswer', async () => {
    const seen: Array<[string, number, string]> = []
    const holder = await joinNode('h', 1, { joins: { accept: async (s, raw, from) => (seen.push([s, raw.length, from]), 'pending') } })
    const joiner = await joinNode('j', 2)
    await link(holder, joiner)
    const answers: SessionEvents['joinAnswer'][] = []
    joiner.session.events.on('joinAnswer', (e) => answers.push(e))
    const ch = await aclChange(keyFor(2), S)
    const opened = joiner.session.openJoin('h', S, ch.raw)
    expect('req' in opened).toBe(true)
    await pump([holder, joiner], frames(joiner, opened.out))
    expect(seen).toEqual([[S, ch.raw.length, idFor(2)]])
    expect(answers).toEqual([{ peer: 'h', identity: idFor(1), spaceId: S, req: (opened as { req: number }).req, status: 'pending' }])
  })

  it('a refused join is answered like a space the holder does not hold, and reported without a status', async () => {
    const holder = await joinNode('h', 1, { joins: { accept: async () => undefined } })
    const joiner = await joinNode('j', 2)
    await link(holder, joiner)
    const answers: SessionEvents['joinAnswer'][] = []
    joiner.session.events.on('joinAnswer', (e) => answers.push(e))
    const opened = joiner.session.openJoin('h', S, (await aclChange(keyFor(2), S)).raw)
    const seen = await pump([holder, joiner], frames(joiner, opened.out))
    expect(decodeMessage(seen[1].bytes)).toEqual({ type: 'error', spaceId: S, req: (opened as { req: number }).req, code: 'unknown_space' })
    expect(answers).toHaveLength(1)
    expect(answers[0].status).toBeUndefined()
  })

  it('a join before authentication waits for it, then is handled', async () => {
    let calls = 0
    const holder = await joinNode('h', 1, { joins: { accept: async () => (calls++, 'accepted') } })
    const joiner = await joinNode('j', 2)
    // The joiner proves itself to the holder only once challenged.
    const raw = encodeMessage({ type: 'join', spaceId: S, req: 5, change: (await aclChange(keyFor(2), S)).raw })
    const first = await holder.session.handle('j', raw)
    expect(decodeMessage(first[0].bytes).type).toBe('hello')
    expect(calls).toBe(0)
    await pump([holder, joiner], frames(holder, first))
    expect(calls).toBe(1)
  })

  it('a change that is not an ACL change of the named space by the sender is dropped as malformed, unanswered', async () => {
    let calls = 0
    const holder = await joinNode('h', 1, { joins: { accept: async () => (calls++, 'pending') } })
    const joiner = await joinNode('j', 2)
    await link(holder, joiner)
    const other = contentId(new Uint8Array([43]))
    const cases = [
      (await aclChange(keyFor(3), S)).raw, // someone else's change, relayed
      (await aclChange(keyFor(2), other)).raw, // another space's
      new Uint8Array([1, 2, 3]), // not a change
    ]
    for (const [i, change] of cases.entries()) {
      expect(await holder.session.handle('j', encodeMessage({ type: 'join', spaceId: S, req: i, change }))).toEqual([])
    }
    expect(calls).toBe(0)
    expect(holder.session.countersOf('j').dropped.malformed).toBe(3)
    expect(holder.session.strikes('j')).toBe(3)
  })

  it('a joined or refusal for no join of ours is stale', async () => {
    const holder = await joinNode('h', 1)
    const joiner = await joinNode('j', 2)
    await link(holder, joiner)
    let n = 0
    joiner.session.events.on('joinAnswer', () => n++)
    await joiner.session.handle('h', encodeMessage({ type: 'joined', spaceId: S, req: 1, status: 'accepted' }))
    await joiner.session.handle('h', encodeMessage({ type: 'error', spaceId: S, req: 1, code: 'unknown_space' }))
    expect(n).toBe(0)
    expect(joiner.session.countersOf('h').dropped.stale).toBe(2)
    // An answer about another space than the one we asked about is no answer either.
    const opened = joiner.session.openJoin('h', S, (await aclChange(keyFor(2), S)).raw) as { req: number }
    await joiner.session.handle('h', encodeMessage({ type: 'joined', spaceId: contentId(new Uint8Array([9])), req: opened.req, status: 'accepted' }))
    expect(n).toBe(0)
  })

  it('an unauthenticated link cannot open a join: our challenge goes instead', async () => {
    const joiner = await joinNode('j', 2)
    const r = joiner.session.openJoin('h', S, new Uint8Array([1]))
    expect('error' in r && r.error).toBe('unauthenticated')
    expect(decodeMessage(r.out[0].bytes).type).toBe('hello')
  })

  it('pending joins per peer are bounded', async () => {
    const holder = await joinNode('h', 1)
    const joiner = await joinNode('j', 2)
    await link(holder, joiner)
    const reqs: number[] = []
    for (let i = 0; i < JOIN_LIMITS.maxPendingJoinsPerPeer + 10; i++) reqs.push((joiner.session.openJoin('h', S, new Uint8Array([1])) as { req: number }).req)
    let n = 0
    joiner.session.events.on('joinAnswer', () => n++)
    // The oldest were forgotten: their answers are stale; the newest still count.
    await joiner.session.handle('h', encodeMessage({ type: 'joined', spaceId: S, req: reqs[0], status: 'pending' }))
    await joiner.session.handle('h', encodeMessage({ type: 'joined', spaceId: S, req: reqs.at(-1)!, status: 'pending' }))
    expect(n).toBe(1)
  })
})

describe('mutated joins', () => {
  it('any byte flipped or cut: handled without a throw; answered at most once, only with joined or the refusal; the handler sees only changes by the sender', async () => {
    const seen: string[] = []
    // The clock moves a refill per call: every mutation gets past the join budget.
    let t = 0
    const holder = await joinNode('h', 1, {
      now: () => (t += JOIN_LIMITS.joinRefillMs),
      joins: { accept: async (_s, raw, from) => (seen.push(from), raw.length % 2 ? 'pending' : undefined) },
    })
    const joiner = await joinNode('j', 2)
    await link(holder, joiner)
    const good = encodeMessage({ type: 'join', spaceId: S, req: 3, change: (await aclChange(keyFor(2), S)).raw })
    await fc.assert(
      fc.asyncProperty(fc.nat(good.length - 1), fc.integer({ min: 1, max: 255 }), fc.boolean(), async (at, x, cut) => {
        const b = cut ? good.slice(0, at) : good.slice()
        if (!cut) b[at] ^= x
        const out = await holder.session.handle('j', b)
        expect(out.length).toBeLessThanOrEqual(1)
        for (const o of out) expect(['joined', 'error']).toContain(decodeMessage(o.bytes).type)
      }),
      { numRuns: 300 },
    )
    expect(seen.length).toBeGreaterThan(0)
    expect(seen.every((who) => who === idFor(2))).toBe(true)
    expect(holder.session.lastError).toBeUndefined()
    expect(holder.session.countersOf('j').dropped.over_budget).toBeUndefined()
  })
})
