/**
 * Issue 13, one-to-one spaces between daemons of different accounts (core.md "One-to-one and
 * direct-add"): the space id is a function of the two accounts, so both sides starting at once
 * get one space; an incoming one waits as `one_to_one_pending` until accepted or declined; a
 * decline is sticky (the other side writing on changes nothing) until a later start, by the
 * other side (pending again) or by this one (active at once). Three accounts make three
 * pairs: (a, b) start at once, (a, c) is accepted, (b, c) is declined and un-declined.
 */
import { afterAll, describe, expect, it } from 'vitest'
import { Fleet, holdsRecords, put, recordIds, S, type Account } from './accounts.ts'
import { api, IN_NETNS, ok, until } from './daemons.ts'

const fleet = new Fleet()
afterAll(() => fleet.close())

const start = (a: Account, other: Account) => api(a.d, 'POST', '/v1/spaces/one-to-one', { otherIdentity: other.identity })
const pendingIds = async (a: Account) => (await ok(a.d, 'GET', '/v1/spaces?status=one_to_one_pending')).map((s: any) => s.id)
const waitPending = (a: Account, spaceId: string) => until(`${a.name} lists ${spaceId} as one_to_one_pending`, async () => (await pendingIds(a)).includes(spaceId))

async function note(a: Account, spaceId: string, id: string) {
  const doc = (await ok(a.d, 'POST', `${S(spaceId)}/objects`, { initialProperties: { core: { name: id } } })).objectId
  const r = await put(a, spaceId, doc, 'notes', id, a.name)
  expect(r.status).toBe(200)
  return doc
}

describe.runIf(IN_NETNS)('one-to-one between daemons of different accounts (mDNS)', () => {
  it('both start at once: one space id; accept; decline and un-decline; self-pairing is refused', async () => {
    const [a, b, c] = await Promise.all(['a', 'b', 'c'].map((n) => fleet.account(n)))

    const self = await start(a, a)
    expect(self.status).toBe(400)
    expect(self.json.error.code).toBe('request.invalid_field')
    const missing = await api(a.d, 'POST', '/v1/spaces/one-to-one', {})
    expect(missing.status).toBe(400)
    expect(missing.json.error.code).toBe('request.missing_field')

    // (a, b): both start at once, each without having heard of the other's request.
    const [ab, ba] = await Promise.all([start(a, b), start(b, a)])
    expect([ab.status, ba.status]).toEqual([201, 201])
    expect(ab.json.id).toBe(ba.json.id)
    for (const s of [ab.json, ba.json]) expect(s).toMatchObject({ spaceType: 'svc.onetoone', derived: true, ownRole: 'writer', status: 'active' })
    const abDoc = await note(a, ab.json.id, 'hello-b')
    await holdsRecords(b, ab.json.id, abDoc, 'notes', ['hello-b'])
    const baDoc = await note(b, ab.json.id, 'hello-a')
    await holdsRecords(a, ab.json.id, baDoc, 'notes', ['hello-a'])

    // (a, c): a starts; c sees a pending row with the same id and accepts it.
    const ac = await start(a, c)
    expect(ac.status).toBe(201)
    const acDoc = await note(a, ac.json.id, 'hello-c')
    await waitPending(c, ac.json.id)
    expect((await ok(c.d, 'GET', S(ac.json.id))).status).toBe('one_to_one_pending')
    const accepted = await ok(c.d, 'POST', `${S(ac.json.id)}/one-to-one/accept`)
    expect(accepted).toMatchObject({ id: ac.json.id, status: 'active', ownRole: 'writer' })
    await holdsRecords(c, ac.json.id, acDoc, 'notes', ['hello-c'])

    // (b, c): c registers b out of band (idempotent), b starts, c declines: nothing arrives.
    for (let i = 0; i < 2; i++) expect((await api(c.d, 'POST', '/v1/spaces/one-to-one/register-incoming', { peerIdentity: b.identity, displayHint: 'b' })).status).toBe(204)
    const bc = await start(b, c)
    expect(bc.status).toBe(201)
    const bcDoc = await note(b, bc.json.id, 'from-b')
    await waitPending(c, bc.json.id)
    expect((await api(c.d, 'POST', `${S(bc.json.id)}/one-to-one/decline`)).status).toBe(204)
    expect(await pendingIds(c)).not.toContain(bc.json.id)
    // Sticky: b writing on does not bring the request back, and c's content routes stay shut.
    await note(b, bc.json.id, 'from-b-again')
    await new Promise((r) => setTimeout(r, 3_000))
    expect(await pendingIds(c)).not.toContain(bc.json.id)
    expect((await ok(c.d, 'GET', '/v1/spaces')).map((s: any) => s.id)).not.toContain(bc.json.id)
    expect(await recordIds(c, bc.json.id, bcDoc, 'notes')).toEqual([])

    // A later start by b un-declines: the request is pending again; c declines once more.
    expect((await start(b, c)).status).toBe(201)
    await waitPending(c, bc.json.id)
    expect((await api(c.d, 'POST', `${S(bc.json.id)}/one-to-one/decline`)).status).toBe(204)
    expect(await pendingIds(c)).not.toContain(bc.json.id)

    // c starts the conversation itself: un-declined at once, active, and b's notes arrive.
    const cb = await start(c, b)
    expect(cb.status).toBe(201)
    expect(cb.json).toMatchObject({ id: bc.json.id, status: 'active' })
    await holdsRecords(c, bc.json.id, bcDoc, 'notes', ['from-b'])
  }, 600_000)
})
