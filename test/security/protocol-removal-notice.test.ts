import { describe, expect, it } from 'vitest'
import { decodeChange } from '../../sync/dag/change.ts'
import { decodeMessage, encodeMessage, type StepMsg } from '../../sync/protocol/messages.ts'
import { NOTICE_LIMITS } from '../../sync/protocol/limits.ts'
import { SpaceReplica } from '../../sync/replica/space-replica.ts'
import { deps, idFor, keyFor } from '../helpers.ts'
import { exchange, frames, link, node, pump, type Node } from '../protocol/helpers.ts'
import { joinNode } from '../protocol/join-helpers.ts'

/**
 * The removal notice (docs/protocol.md, "Removal notice"): a removed member that opens an
 * exchange about the space hears of its own removal, and of nothing else; a peer that never
 * was a member hears exactly what a space we do not hold answers; the notices a peer can draw
 * are bounded.
 */

/** The owner's space with account 7 a member that has synced it, then removed; then more. */
async function removedMember(role: 'reader' | 'guest' = 'reader') {
  const owner = await node('o', 1)
  const before = await owner.replica.createObject()
  await owner.replica.addMember(idFor(7), role)
  const member = await node('m', 7, owner.replica.spaceId)
  await link(owner, member)
  await exchange(member, owner)
  expect(member.replica.treeIds()).toContain(before)
  const removal = await owner.replica.removeMember(idFor(7))
  // Sealed after the removal: an object, a new member, a profile under the new key.
  const after = await owner.replica.createObject()
  await owner.replica.write(after, [{ op: 'set', ds: 'core', id: after, path: 'name', value: 'secret' }])
  await owner.replica.addMember(idFor(8), 'writer')
  await owner.replica.setProfile({ name: 'Owner' })
  return { owner, member, before, after, removal }
}

/** The ids of the changes a list of frames carries. */
function carried(seen: Array<{ bytes: Uint8Array }>): string[] {
  const out: string[] = []
  for (const f of seen) {
    const m = decodeMessage(f.bytes)
    if (m.type === 'step') for (const raw of m.changes) out.push(decodeChange(raw).id)
  }
  return out
}

describe('A removed member opens an exchange about the space it was removed from', () => {
  it('gets exactly the ACL records up to its removal, nothing sealed after, and its ACL then shows the removal', async () => {
    const { owner, member, after, removal } = await removedMember()
    const opened = await member.session.open('o', member.replica.spaceId)
    expect('req' in opened).toBe(true)
    const fromOwner: Array<{ bytes: Uint8Array }> = []
    await pump([owner, member], frames(member, opened.out), { tap: (f) => (f.from === 'o' && fromOwner.push(f), f) })
    const expected = owner.replica.acl
      .history([removal])
      .map((e) => e.id)
      .sort()
    expect(carried(fromOwner).sort()).toEqual(expected)
    // The refusal first, as for anyone; then only answer steps: no question, no count, no heads.
    const req = (opened as { req: number }).req
    expect(decodeMessage(fromOwner[0].bytes)).toEqual({ type: 'error', spaceId: owner.replica.spaceId, req, code: 'unknown_space' })
    expect(fromOwner.length).toBeGreaterThan(1)
    for (const f of fromOwner.slice(1)) {
      const m = decodeMessage(f.bytes) as StepMsg
      expect(m.type).toBe('step')
      expect([m.ranges.length, m.heads.length, m.wants.length]).toEqual([0, 0, 0])
    }
    expect(member.replica.acl.current().roleOf(idFor(7))).toBe('none')
    expect(member.replica.acl.has(removal)).toBe(true)
    expect(member.replica.treeIds()).not.toContain(after)
    expect(member.replica.acl.current().roleOf(idFor(8))).toBe('none')
  })

  it('a removed guest learns it the same way', async () => {
    const { owner, member, removal } = await removedMember('guest')
    await exchange(member, owner)
    expect(member.replica.acl.has(removal)).toBe(true)
    const log = member.replica.acl
    expect(log.current().roleOf(idFor(7))).toBe('none')
    expect(log.stateAt(log.effectiveRemovalsOf(idFor(7))[0].prevIds).roleOf(idFor(7))).toBe('guest')
  })

  it('once it holds its removal its scheduled rounds back off: the 1st, 2nd, 4th, 8th... chance only', async () => {
    const { owner, member } = await removedMember()
    await exchange(member, owner)
    const S = member.replica.spaceId
    const chances: number[] = []
    for (let i = 1; i <= 40; i++) if (await member.session.mayOpen('o', S)) chances.push(i)
    expect(chances).toEqual([1, 2, 4, 8, 16, 32])
    // An explicit open still goes out, and its refusal makes it push what only it may hold.
    const opened = await member.session.open('o', S)
    const back = await pump([owner, member], frames(member, opened.out))
    expect(back.map((f) => [f.from, decodeMessage(f.bytes).type])).toEqual([
      ['m', 'sync'],
      ['o', 'error'],
      ['m', 'step'],
    ])
    // The owner adds it again: the owner's own round reaches it, and it asks as before.
    await owner.replica.addMember(idFor(7), 'reader')
    await exchange(owner, member)
    expect(member.replica.acl.current().roleOf(idFor(7))).toBe('reader')
    for (let i = 0; i < 5; i++) expect(await member.session.mayOpen('o', S)).toBe(true)
  })
})

/** The removal notice the session would push to `peer` unasked, collected; undefined when none is due. */
async function pushed(from: Node, peer: string, spaceId: string) {
  const out = await from.session.removalNotice(peer, spaceId)
  if (!out) return undefined
  const list = []
  for await (const o of out) list.push(o)
  return list
}

describe('A member removed while its link is up (issue 38: revocation reaches it within seconds)', () => {
  it('is pushed the notice unasked, once per link: the ACL records up to its removal as answer steps, which it takes in', async () => {
    const { owner, member, after, removal } = await removedMember('guest')
    const S = owner.replica.spaceId
    const out = (await pushed(owner, 'm', S))!
    expect(out).toBeDefined()
    const msgs = out.map((o) => decodeMessage(o.bytes) as StepMsg)
    for (const m of msgs) {
      expect(m.type).toBe('step')
      expect([m.ranges.length, m.heads.length, m.wants.length, m.hop]).toEqual([0, 0, 0, 1])
    }
    const expected = owner.replica.acl
      .history([removal])
      .map((e) => e.id)
      .sort()
    expect(carried(out).sort()).toEqual(expected)
    await pump([owner, member], frames(owner, out))
    expect(member.replica.acl.has(removal)).toBe(true)
    expect(member.replica.acl.current().roleOf(idFor(7))).toBe('none')
    expect(member.replica.treeIds()).not.toContain(after)
    // Once per link: neither a second push nor its own ask on this link draws another.
    expect(await pushed(owner, 'm', S)).toBeUndefined()
    const asked = await owner.session.handle('m', encodeMessage({ type: 'sync', spaceId: S, req: 5, fp: new Uint8Array(8), count: 3 }))
    expect(asked.map((o) => decodeMessage(o.bytes))).toEqual([{ type: 'error', spaceId: S, req: 5, code: 'unknown_space' }])
  })

  it('only to a link that read the space: a new link of the removed account, a stranger and a member who still reads get none', async () => {
    const { owner } = await removedMember()
    const S = owner.replica.spaceId
    const d = await deps(79)
    const fresh: Node = { ...(await node('m2', 7, await SpaceReplica.open(d, S, keyFor(7)))), name: 'm2' }
    await link(owner, fresh)
    expect(await pushed(owner, 'm2', S)).toBeUndefined()
    const prober = await node('p', 9)
    await link(owner, prober)
    expect(await pushed(owner, 'p', S)).toBeUndefined()
    await owner.replica.addMember(idFor(6), 'reader')
    const reader = await node('r', 6, S)
    await link(owner, reader)
    await exchange(reader, owner)
    expect(await pushed(owner, 'r', S)).toBeUndefined()
  })

  it('is charged to no bucket: after it, new links of the account still draw noticeBurst notices by asking, and no more', async () => {
    const { owner } = await removedMember()
    const S = owner.replica.spaceId
    expect(await pushed(owner, 'm', S)).toBeDefined()
    const isNotice = (out: Array<{ bytes: Uint8Array }>) => out.some((o) => decodeMessage(o.bytes).type === 'step')
    let notices = 0
    for (let i = 0; i < 20; i++) {
      const peer = `m${i}`
      const dev: Node = { ...(await node(peer, 7, await SpaceReplica.open(await deps(90 + i), S, keyFor(7)))), name: peer }
      await link(owner, dev)
      const out = await owner.session.handle(peer, encodeMessage({ type: 'sync', spaceId: S, req: 2000 + i, fp: new Uint8Array(8), count: 3 }))
      if (isNotice(out)) notices++
      // A link that only asked was never admitted: nothing is pushed to it.
      expect(await pushed(owner, peer, S)).toBeUndefined()
    }
    expect(notices).toBe(NOTICE_LIMITS.noticeBurst)
  })
})

describe('A peer that never was a member asks about a held space', () => {
  it('gets the very bytes a space the peer does not hold gets', async () => {
    const { owner } = await removedMember()
    const S = owner.replica.spaceId
    const stranger = await joinNode('n', 1)
    const prober = await node('p', 9)
    await link(owner, prober)
    await link(stranger, prober)
    const sync = encodeMessage({ type: 'sync', spaceId: S, req: 42, fp: new Uint8Array(8), count: 3 })
    const fromHolder = await owner.session.handle('p', sync)
    const fromStranger = await stranger.session.handle('p', sync)
    expect(fromHolder.map((o) => o.bytes)).toEqual(fromStranger.map((o) => o.bytes))
    expect(decodeMessage(fromHolder[0].bytes)).toEqual({ type: 'error', spaceId: S, req: 42, code: 'unknown_space' })
  })
})

describe('A removed member floods exchanges to draw notices', () => {
  it('one notice per space per link, and per account at most noticeBurst, then one per noticeRefillMs', async () => {
    const { owner, removal } = await removedMember()
    const S = owner.replica.spaceId
    const sync = (req: number) => encodeMessage({ type: 'sync', spaceId: S, req, fp: new Uint8Array(8), count: 3 })
    const isNotice = (out: Array<{ bytes: Uint8Array }>) => out.some((o) => decodeMessage(o.bytes).type === 'step')
    const first = await owner.session.handle('m', sync(1))
    expect(isNotice(first)).toBe(true)
    // Again on the same link: the refusal alone.
    for (let i = 2; i < 200; i++) {
      const out = await owner.session.handle('m', sync(i))
      expect(out.map((o) => decodeMessage(o.bytes))).toEqual([{ type: 'error', spaceId: S, req: i, code: 'unknown_space' }])
    }
    // New links of the same account: the account's bucket bounds them.
    let notices = 1
    for (let i = 0; i < 50; i++) {
      const peer = `m${i}`
      const d = await deps(70 + i)
      const dev: Node = { ...(await node(peer, 7, await SpaceReplica.open(d, S, keyFor(7)))), name: peer }
      await link(owner, dev)
      const out = await owner.session.handle(peer, sync(1000 + i))
      if (isNotice(out)) notices++
    }
    expect(notices).toBe(NOTICE_LIMITS.noticeBurst)
    expect(owner.replica.acl.has(removal)).toBe(true)
  })
})
