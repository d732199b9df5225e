import { describe, expect, it } from 'vitest'
import { decodeMessage, encodeMessage } from '../../sync/protocol/messages.ts'
import { JOIN_LIMITS, OFFER_LIMITS } from '../../sync/protocol/limits.ts'
import type { JoinHandler } from '../../sync/protocol/session.ts'
import { SpaceReplica } from '../../sync/replica/space-replica.ts'
import { contentId } from '../../sync/crypto/hash.ts'
import { deps, idFor, keyFor } from '../helpers.ts'
import { exchange, frames, headsOf, link, node, pump, type Node } from '../protocol/helpers.ts'
import { decodeInviteToken } from '../../sync/acl/invite-token.ts'
import { makeJoinChange } from '../../sync/replica/join-change.ts'
import { aclChange, joinNode } from '../protocol/join-helpers.ts'

/**
 * Joining over the wire (issue 13): a join is answered only when the holder takes it, with the
 * very bytes a space it does not hold gets otherwise; joins and offers cost a peer bounded work.
 */

/** The daemon's handler: the held replica decides (SpaceReplica.ingestJoin). */
const replicaJoins = (r: SpaceReplica): JoinHandler => ({
  accept: async (spaceId, raw, from) => (spaceId === r.spaceId ? r.ingestJoin(raw, from) : undefined),
})

async function joinWith(token: string, who: number) {
  const t = decodeInviteToken(token)
  const d = await deps(who)
  return makeJoinChange({ spaceId: t.spaceId, inviteId: t.inviteId, invitePrivateKey: t.privateKey, me: keyFor(who), crypto: d.crypto, env: d.env })
}

describe('A stranger probes which spaces a peer holds with joins', () => {
  it('a join with a bad proof for a held space gets the same bytes as a join for a space the peer does not hold', async () => {
    const owner = await node('o', 1)
    const invite = await owner.replica.createInvite('writer', { replaces: true })
    const holder = await joinNode('h', 1, { replica: owner.replica, joins: replicaJoins(owner.replica) })
    // Holds nothing, same account (the same reply would then be byte-identical).
    const stranger = await joinNode('s', 1, { joins: { accept: async () => undefined } })
    const prober = await joinNode('p', 7)
    await link(holder, prober)
    await link(stranger, prober)
    const S = owner.replica.spaceId
    const t = decodeInviteToken(invite.token)
    // The right invite named, the proof signed by another key than the invite's.
    const d = await deps(7)
    const forged = await makeJoinChange({ spaceId: S, inviteId: t.inviteId, invitePrivateKey: keyFor(99).privateKey, me: keyFor(7), crypto: d.crypto, env: d.env })
    // And a join naming an invite that does not exist.
    const unknownInvite = await makeJoinChange({ spaceId: S, inviteId: S, invitePrivateKey: t.privateKey, me: keyFor(7), crypto: d.crypto, env: d.env })
    for (const [i, change] of [forged.raw, unknownInvite.raw].entries()) {
      const bad = encodeMessage({ type: 'join', spaceId: S, req: 77 + i, change })
      const fromHolder = await holder.session.handle('p', bad)
      const fromStranger = await stranger.session.handle('p', bad)
      expect(fromHolder.map((o) => o.bytes)).toEqual(fromStranger.map((o) => o.bytes))
      expect(decodeMessage(fromHolder[0].bytes)).toEqual({ type: 'error', spaceId: S, req: 77 + i, code: 'unknown_space' })
      // A session with no join handler at all answers the same.
      const plain = await joinNode('x', 1)
      await link(plain, await joinNode('p', 7))
      expect((await plain.session.handle('p', bad)).map((o) => o.bytes)).toEqual(fromHolder.map((o) => o.bytes))
    }
    // Nothing of it entered the ACL, and neither peer counts it differently (a disconnect would be an oracle too).
    expect(owner.replica.acl.current().requests()).toEqual([])
    expect(holder.session.strikes('p')).toBe(stranger.session.strikes('p'))
    // The real join is taken and answered.
    const good = await joinWith(invite.token, 7)
    const reply = await holder.session.handle('p', encodeMessage({ type: 'join', spaceId: S, req: 90, change: good.raw }))
    expect(decodeMessage(reply[0].bytes)).toEqual({ type: 'joined', spaceId: S, req: 90, status: 'pending' })
    expect(owner.replica.joinStatus(idFor(7))).toBe('pending')
  })

  it('after an accept the joiner hears accepted, then syncs as a member', async () => {
    const owner = await node('o', 1)
    const obj = await owner.replica.createObject()
    const invite = await owner.replica.createInvite('reader', { replaces: true })
    const holder = await joinNode('h', 1, { replica: owner.replica, joins: replicaJoins(owner.replica) })
    const joiner = await joinNode('j', 7)
    await link(holder, joiner)
    const answers: string[] = []
    joiner.session.events.on('joinAnswer', (e) => answers.push(e.status ?? 'refused'))
    const change = (await joinWith(invite.token, 7)).raw
    const S = owner.replica.spaceId
    const send = async () => {
      const o = joiner.session.openJoin('h', S, change)
      await pump([holder, joiner], frames(joiner, o.out))
    }
    await send()
    await owner.replica.acceptJoin(owner.replica.acl.current().requests()[0].recordId)
    await send()
    expect(answers).toEqual(['pending', 'accepted'])
    const mine = await node('j', 7, S)
    await link(holder, mine)
    await exchange(mine, holder)
    expect(mine.replica.acl.current().roleOf(idFor(7))).toBe('reader')
    expect(mine.replica.treeIds()).toContain(obj)
  })

  it('the held space is never looked at before the change checks that cost a strike', async () => {
    let looked = 0
    const holder = await joinNode('h', 1, { joins: { accept: async () => (looked++, undefined) } })
    const prober = await joinNode('p', 7)
    await link(holder, prober)
    const S = contentId(new Uint8Array([1]))
    // A change by another account: dropped before the handler, whatever is held.
    await holder.session.handle('p', encodeMessage({ type: 'join', spaceId: S, req: 1, change: (await aclChange(keyFor(8), S)).raw }))
    expect(looked).toBe(0)
    expect(holder.session.strikes('p')).toBe(1)
  })
})

describe('A peer floods joins', () => {
  it('the handler runs at most joinBurst times, then one per joinRefillMs; the rest are dropped unanswered and struck', async () => {
    let now = 1_000_000
    let calls = 0
    const holder = await joinNode('h', 1, { now: () => now, joins: { accept: async () => (calls++, undefined) } })
    const flooder = await joinNode('f', 7)
    await link(holder, flooder)
    const S = contentId(new Uint8Array([1]))
    const change = (await aclChange(keyFor(7), S)).raw
    let replies = 0
    for (let i = 0; i < 1000; i++) replies += (await holder.session.handle('f', encodeMessage({ type: 'join', spaceId: S, req: i, change }))).length
    expect(calls).toBe(JOIN_LIMITS.joinBurst)
    expect(replies).toBe(JOIN_LIMITS.joinBurst)
    expect(holder.session.countersOf('f').dropped.over_budget).toBe(1000 - JOIN_LIMITS.joinBurst)
    expect(holder.session.strikes('f')).toBe(1000 - JOIN_LIMITS.joinBurst)
    now += 10 * JOIN_LIMITS.joinRefillMs
    for (let i = 0; i < 100; i++) await holder.session.handle('f', encodeMessage({ type: 'join', spaceId: S, req: i, change }))
    // Refilled, but never past the burst.
    expect(calls).toBe(JOIN_LIMITS.joinBurst + Math.min(10, JOIN_LIMITS.joinBurst))
    // Another peer has its own budget.
    const other = await joinNode('g', 8)
    await link(holder, other)
    await holder.session.handle('g', encodeMessage({ type: 'join', spaceId: S, req: 1, change: (await aclChange(keyFor(8), S)).raw }))
    expect(calls).toBe(JOIN_LIMITS.joinBurst + Math.min(10, JOIN_LIMITS.joinBurst) + 1)
  })
})

describe('Peers flood offers (exchanges about spaces we do not hold)', () => {
  it('at most maxInFlight handlers run, maxInFlightPerIdentity per account; the answers are those of a peer without offers', async () => {
    const running = new Set<string>()
    let maxRunning = 0
    const perId = new Map<string, number>()
    let maxPerId = 0
    const releases: Array<() => void> = []
    const me = await joinNode('me', 1, {
      offered: (s, identity) => {
        running.add(s)
        perId.set(identity, (perId.get(identity) ?? 0) + 1)
        maxRunning = Math.max(maxRunning, running.size)
        maxPerId = Math.max(maxPerId, perId.get(identity)!)
        return new Promise<void>((r) => releases.push(() => (running.delete(s), perId.set(identity, perId.get(identity)! - 1), r())))
      },
    })
    const plain = await node('plain', 1)
    const offerers: Node[] = []
    for (let i = 0; i < 8; i++) {
      const o = await joinNode(`o${i}`, 20 + i)
      await link(me, o)
      await link(plain, await joinNode(`o${i}`, 20 + i))
      offerers.push(o)
    }
    for (const [i, o] of offerers.entries()) {
      for (let k = 0; k < 50; k++) {
        const sync = encodeMessage({ type: 'sync', spaceId: contentId(new Uint8Array([k, i])), req: k, fp: new Uint8Array(8), count: 3 })
        const a = await me.session.handle(o.name, sync)
        const b = await plain.session.handle(o.name, sync)
        expect(a.map((x) => x.bytes)).toEqual(b.map((x) => x.bytes))
      }
    }
    expect(maxRunning).toBe(OFFER_LIMITS.maxInFlight)
    expect(maxPerId).toBe(OFFER_LIMITS.maxInFlightPerIdentity)
    expect(me.session.offers!.stats.taken).toBe(OFFER_LIMITS.maxInFlight)
    // Offers are not strikes: an honest member that added us causes them.
    expect(me.session.strikes('o0')).toBe(0)
    for (const r of releases.splice(0)) r()
    await new Promise((r) => setTimeout(r, 0))
    expect(me.session.offers!.running).toBe(0)
  })

  it('the same space from the same account is not handed over again within repeatAfterMs; a rate bounds an account', async () => {
    let now = 5_000_000
    const got: string[] = []
    const me = await joinNode('me', 1, { now: () => now, offered: async (s) => void got.push(s) })
    const o = await joinNode('o', 20)
    await link(me, o)
    const sync = (k: number) => encodeMessage({ type: 'sync', spaceId: contentId(new Uint8Array([k, 9])), req: k, fp: new Uint8Array(8), count: 3 })
    for (let i = 0; i < 5; i++) {
      await me.session.handle('o', sync(1))
      await new Promise((r) => setTimeout(r, 0))
    }
    expect(got).toHaveLength(1)
    now += OFFER_LIMITS.repeatAfterMs
    await me.session.handle('o', sync(1))
    expect(got).toHaveLength(2)
    for (let k = 2; k < 200; k++) {
      await me.session.handle('o', sync(k))
      await new Promise((r) => setTimeout(r, 0))
    }
    // The repeat came after a refill to the full burst: it and the rest of the burst.
    expect(got).toHaveLength(1 + OFFER_LIMITS.burstPerIdentity)
  })

  it('a sender that holds nothing of the space (an empty replica fetching its ACL) is no offer: empty replicas do not spread', async () => {
    let n = 0
    const me = await joinNode('me', 1, {
      offered: async () => {
        n++
      },
    })
    // b opened the space empty (it was offered it) and asks every peer: we must not follow suit.
    const b = await node('b', 2, contentId(new Uint8Array([5])))
    await link(me, b)
    const { end } = await exchange(b, me)
    expect(end?.outcome).toBe('error')
    expect(n).toBe(0)
  })

  it('our own account is never an offer (another device of ours is accepted, or refused, by the host)', async () => {
    let n = 0
    const me = await joinNode('me', 1, {
      offered: async () => {
        n++
      },
    })
    const twin = await joinNode('twin', 1)
    await link(me, twin)
    await me.session.handle('twin', encodeMessage({ type: 'sync', spaceId: contentId(new Uint8Array([3])), req: 1, fp: new Uint8Array(8), count: 3 }))
    expect(n).toBe(0)
  })
})

describe('A member that added us offers a space: we open it empty and fetch its ACL', () => {
  it('an empty replica (no ACL) takes the ACL and the content from a device that holds us to be a reader', async () => {
    const a = await node('a', 1)
    await a.replica.addMember(idFor(2), 'reader')
    const obj = await a.replica.createObject()
    const S = a.replica.spaceId
    const offers: string[] = []
    let opened: SpaceReplica | undefined = undefined
    const bNode: Node = await joinNode('b', 2, { offered: async (spaceId) => void offers.push(spaceId) })
    // The host serves what the offer's handler opens.
    ;(bNode.session as unknown as { opts: { host: { space: (id: string) => SpaceReplica | undefined } } }).opts.host.space = (id) => (id === opened?.spaceId ? opened : undefined)
    await link(a, bNode)
    // A opens a round with b (b may read at A's ACL): b does not hold it, answers unknown (and
    // drops the push that follows), and is told.
    const first = await exchange(a, bNode)
    expect(first.end?.outcome).toBe('error')
    expect(offers).toEqual([S])
    // The handler opens the space empty, as AccountEngine.adopt does for another device of ours.
    opened = await SpaceReplica.open(await deps(99), S, keyFor(2))
    expect(opened.known).toBe(false)
    bNode.replica = opened
    // b opens a round with a about the empty replica: the ACL comes first and makes a a reader here.
    const { end } = await exchange(bNode, a)
    expect(end?.outcome).toBe('synced')
    expect(opened.known).toBe(true)
    expect(opened.acl.current().roleOf(idFor(2))).toBe('reader')
    expect(opened.treeIds()).toContain(obj)
    expect(headsOf(opened)).toBe(headsOf(a.replica))
  })

  it('a space whose ACL does not list us stays empty: the holder refuses, nothing is fetched', async () => {
    const a = await node('a', 1)
    await a.replica.createObject()
    const b = await node('b', 2, a.replica.spaceId)
    await link(a, b)
    const { end } = await exchange(b, a)
    expect(end?.outcome).toBe('error')
    expect(b.replica.known).toBe(false)
  })
})

describe('Strangers mint accounts to flood offers', () => {
  it('all accounts together get globalBurst offers, then one per globalRefillMs', async () => {
    let now = 9_000_000
    let n = 0
    const me = await joinNode('me', 1, {
      now: () => now,
      offered: async () => {
        n++
      },
    })
    for (let i = 0; i < 40; i++) {
      const o = await joinNode(`m${i}`, 100 + i)
      await link(me, o)
      for (let k = 0; k < 4; k++) {
        await me.session.handle(o.name, encodeMessage({ type: 'sync', spaceId: contentId(new Uint8Array([i, k, 1])), req: k, fp: new Uint8Array(8), count: 1 }))
        await new Promise((r) => setTimeout(r, 0))
      }
    }
    expect(n).toBe(OFFER_LIMITS.globalBurst)
    now += 3 * OFFER_LIMITS.globalRefillMs
    for (let k = 0; k < 10; k++) {
      const o = await joinNode('late', 200)
      await link(me, o)
      await me.session.handle('late', encodeMessage({ type: 'sync', spaceId: contentId(new Uint8Array([k, 2])), req: k, fp: new Uint8Array(8), count: 1 }))
      await new Promise((r) => setTimeout(r, 0))
    }
    expect(n).toBe(OFFER_LIMITS.globalBurst + 3)
  })
})
