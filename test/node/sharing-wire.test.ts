import { afterEach, describe, expect, it } from 'vitest'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { DaemonHost } from '../../node/daemon/daemon-host.ts'
import { keyPairFromSeed } from '../../sync/crypto/keys.ts'
import { decodeInviteToken } from '../../sync/acl/invite-token.ts'
import { makeJoinChange } from '../../sync/replica/join-change.ts'
import type { JoinStatusEvent, Offer } from '../../sync/protocol/sharing-network.ts'
import { deps, idFor, keyFor } from '../helpers.ts'

/**
 * Two daemons of two accounts on loopback (mDNS off), connected by address: a join goes over
 * the wire and its status comes back; a member that added us offers its space, and the empty
 * space we open for it fetches its ACL from that member.
 */

const cleanups: Array<() => Promise<void>> = []
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c()
})

async function daemon(account: number, device: number) {
  const dir = mkdtempSync(join(tmpdir(), `svc-share${account}-`))
  const engine = new DaemonHost({ dataRoot: dir, noMdns: true, p2pListen: ['/ip4/127.0.0.1/tcp/0'], scheduler: { debounceMs: 20 }, joinRetry: { baseMs: 100, maxMs: 400 } })
  await engine.onBoot({ accountId: idFor(account), dir, keys: { account: keyFor(account), device: keyPairFromSeed(new Uint8Array(32).fill(device)), index: 1 } })
  cleanups.push(async () => {
    await engine.onTeardown()
    rmSync(dir, { recursive: true, force: true })
  })
  return engine
}

const addrOf = (e: DaemonHost) => {
  const p = e.p2p()!
  return `${p.node
    .getMultiaddrs()[0]
    .toString()
    .replace(/\/p2p\/.*$/, '')}/p2p/${p.transport.peerId}`
}

async function until(what: string, cond: () => Promise<boolean> | boolean, ms = 20_000) {
  const end = Date.now() + ms
  while (!(await cond())) {
    if (Date.now() > end) throw new Error(`timed out: ${what}`)
    await new Promise((r) => setTimeout(r, 50))
  }
}

describe('sharing over the wire between two daemons', () => {
  it('a join reaches the owner, is answered pending, then accepted; the joiner opens the space and reads it', async () => {
    const owner = await daemon(1, 101)
    const space = await owner.account().createSpace({ name: 'Team' })
    const ownerSpace = owner.account().space(space.id)
    const obj = await ownerSpace.createObject({})
    const invite = await ownerSpace.replica.createInvite('writer', { replaces: true })

    const joiner = await daemon(7, 107)
    const sharing = joiner.p2p()!.sharing
    const heard: JoinStatusEvent[] = []
    sharing.onJoinStatus((e) => heard.push(e))
    const t = decodeInviteToken(invite.token)
    const d = await deps(7)
    const change = await makeJoinChange({
      spaceId: t.spaceId,
      inviteId: t.inviteId,
      invitePrivateKey: t.privateKey,
      me: keyFor(7),
      crypto: d.crypto,
      env: d.env,
      metadata: { name: 'Seven' },
    })
    // Asked before any peer is connected: it goes out as soon as the owner's link authenticates.
    sharing.join(space.id, change.raw)
    expect(sharing.joining()).toEqual([space.id])
    expect(joiner.p2p()!.snapshot().sharing.joining).toEqual([space.id])
    joiner.p2p()!.peers.add(addrOf(owner))
    await until('the owner holds a pending request', () => ownerSpace.replica.joinStatus(idFor(7)) === 'pending')
    expect(ownerSpace.replica.acl.current().requests()[0].metadata).toEqual({ name: 'Seven' })
    await until('the joiner heard pending', () => heard.some((e) => e.status === 'pending'))
    expect(heard[0]).toMatchObject({ spaceId: space.id, identity: idFor(1), peer: owner.p2p()!.transport.peerId })

    await ownerSpace.replica.acceptJoin(ownerSpace.replica.acl.current().requests()[0].recordId)
    await until('the joiner heard accepted', () => heard.some((e) => e.status === 'accepted'))
    sharing.stopJoin(space.id)
    expect(sharing.joining()).toEqual([])
    // Accepted: open the space (empty) and fetch it from the device that answered.
    const mine = await joiner.account().adopt(space.id)
    const accepted = heard.find((e) => e.status === 'accepted')!
    expect(await sharing.syncWith(space.id, accepted.peer)).toBe(true)
    await until('the joiner holds the object', () => !!mine.objectDoc(obj))
    expect(mine.replica.acl.current().roleOf(idFor(7))).toBe('writer')
  }, 60_000)

  it('a member that added us offers the space; the empty space opened for the offer fetches its ACL and content from that member', async () => {
    const owner = await daemon(1, 111)
    const space = await owner.account().createSpace({ name: 'Direct' })
    const ownerSpace = owner.account().space(space.id)
    const obj = await ownerSpace.createObject({})
    await ownerSpace.replica.addMember(idFor(8), 'reader')

    const added = await daemon(8, 118)
    const offers: Offer[] = []
    let fetched: Promise<boolean> | undefined
    added.p2p()!.sharing.onOffer(async (o) => {
      offers.push(o)
      if (fetched) return
      // What the account engine does: open the space with no ACL and ask the offering device.
      await added.account().adopt(o.spaceId)
      fetched = added.p2p()!.sharing.syncWith(o.spaceId, o.peer)
      await fetched
    })
    added.p2p()!.peers.add(addrOf(owner))
    await until('the owner offered the space', () => offers.length > 0)
    expect(offers[0]).toMatchObject({ spaceId: space.id, identity: idFor(1), peer: owner.p2p()!.transport.peerId })
    await until('the added account holds the object', () => !!added.account().held(space.id)?.objectDoc(obj))
    expect(added.account().held(space.id)!.replica.acl.current().roleOf(idFor(8))).toBe('reader')
    // The owner's tech space, and spaces it does not share with us, were never offered.
    expect(offers.every((o) => o.spaceId === space.id)).toBe(true)
    expect(added.p2p()!.snapshot().sharing.offers.taken).toBe(offers.length)
  }, 60_000)
})
