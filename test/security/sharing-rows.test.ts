import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { SHARING_LIMITS } from '../../sync/core/limits.ts'
import { bootApp, call, newSpace, ok, type Booted } from '../routes/helpers.ts'
import { exchange, offer } from '../routes/sharing-helpers.ts'

/*
 * Attacks on the account-level sharing flows (docs/sharing.md "Flows and states"): what a
 * member or a stranger can make appear in, or disappear from, another account's space list.
 * One daemon per account, in process; changes travel by replica ingest as a sync round would
 * carry them, offers and answers as wire reports them.
 */

let a: Booted // the hostile member / offering account
let b: Booted // the target
beforeAll(async () => {
  ;[a, b] = await Promise.all([bootApp(), bootApp()])
})
afterAll(async () => {
  await Promise.all([a.close(), b.close()])
})

const rows = async (x: Booted, status: string) => ok<Array<{ id: string }>>(call(x.app, 'GET', `/v1/spaces?status=${status}`))

describe('offer flood: a peer offers many spaces whose ACL does not list us', () => {
  it('at most maxOffersInFlight are opened; none leaves a row; a dropped offer frees its slot', async () => {
    const sharing = b.engine.account().sharing
    const heldBefore = b.engine.account().openSpaces().length
    const spaces: string[] = []
    for (let i = 0; i < SHARING_LIMITS.maxOffersInFlight + 4; i++) spaces.push(await newSpace(a.app, `not for b ${i}`))
    for (const s of spaces) await sharing.offered(s, a.accountId)
    expect(sharing.pendingOffers().length).toBe(SHARING_LIMITS.maxOffersInFlight)
    expect(b.engine.account().openSpaces().length - heldBefore).toBe(SHARING_LIMITS.maxOffersInFlight)
    // The offering device sends the ACL: it does not list b, so nothing is written.
    for (const s of sharing.pendingOffers().slice(0, 2)) await exchange(a, b, s)
    expect(await rows(b, 'all')).toEqual([])
    for (const s of [...sharing.pendingOffers()]) sharing.dropOffer(s)
    await new Promise((r) => setTimeout(r, 20))
    expect(sharing.pendingOffers()).toEqual([])
    expect(b.engine.account().openSpaces().length).toBe(heldBefore)
  })
})

describe('invite_pending flood: a member adds us to many spaces', () => {
  it('one offering identity leaves at most maxPendingRowsPerIdentity invite_pending rows', async () => {
    const n = SHARING_LIMITS.maxPendingRowsPerIdentity + 2
    for (let i = 0; i < n; i++) {
      const s = await newSpace(a.app, `spam ${i}`)
      await a.engine.account().space(s).replica.addMember(b.accountId, 'reader')
      await offer(a, b, s)
      for (const x of b.engine.account().sharing.pendingOffers()) b.engine.account().sharing.dropOffer(x)
    }
    expect((await rows(b, 'invite_pending')).length).toBe(SHARING_LIMITS.maxPendingRowsPerIdentity)
    // Declining frees room for the next one.
    const first = (await rows(b, 'invite_pending'))[0].id
    await ok(call(b.app, 'POST', `/v1/spaces/${first}/invite/decline`), 204)
    const s = await newSpace(a.app, 'after a decline')
    await a.engine.account().space(s).replica.addMember(b.accountId, 'reader')
    await offer(a, b, s)
    expect((await rows(b, 'invite_pending')).map((r) => r.id)).toContain(s)
    for (const r of await rows(b, 'invite_pending')) await ok(call(b.app, 'POST', `/v1/spaces/${r.id}/invite/decline`), 204)
  }, 120_000)
})

describe('a false "accepted" answer to our join', () => {
  it('leaves the row joining: it turns active only when a synced ACL lists us', async () => {
    const s = await newSpace(a.app, 'claims')
    const { inviteToken } = await ok(call(a.app, 'POST', `/v1/spaces/${s}/invites`, {}), 201)
    expect((await call(b.app, 'POST', '/v1/spaces/join', { inviteToken })).statusCode).toBe(202)
    const sharing = b.engine.account().sharing
    await sharing.joins.answered(s, 'accepted')
    // The lying peer's copy of the ACL (not accepted there) arrives: still joining.
    await exchange(a, b, s)
    expect((await ok(call(b.app, 'GET', `/v1/spaces/${s}`))).status).toBe('joining')
    expect((await ok(call(b.app, 'GET', `/v1/spaces/${s}/members/me`))).status).toBe('pending')
  })
})

describe('an offer of a space we deleted', () => {
  it('a sticky tombstone is never revived by an offer, even from a new add', async () => {
    const s = await newSpace(a.app, 'deleted by b')
    await a.engine.account().space(s).replica.addMember(b.accountId, 'writer')
    await offer(a, b, s)
    await ok(call(b.app, 'POST', `/v1/spaces/${s}/invite/accept`))
    await ok(call(b.app, 'DELETE', `/v1/spaces/${s}`), 204)
    await a.engine.account().space(s).replica.removeMember(b.accountId)
    await a.engine.account().space(s).replica.addMember(b.accountId, 'writer')
    await b.engine.account().sharing.offered(s, a.accountId)
    expect(b.engine.account().held(s)).toBeUndefined()
    const row = await ok(call(b.app, 'GET', `/v1/spaces/${s}`))
    expect(row.status).toBe('deleted')
  })
})
