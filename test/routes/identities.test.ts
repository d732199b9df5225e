import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { pairSpaceId } from '../../sync/space/one-to-one.ts'
import { idFor } from '../helpers.ts'
import { bootApp, call, expectError, listen, ok, openSse, type Booted } from './helpers.ts'
import { exchange } from '../one-to-one-helpers.ts'
import { deliverJoins, exchange as push, offer } from './sharing-helpers.ts'

let a: Booted
let b: Booted
beforeAll(async () => {
  ;[a, b] = await Promise.all([bootApp(), bootApp()])
})
afterAll(async () => {
  await Promise.all([a.close(), b.close()])
})

interface Identity {
  identity: string
  name?: string
  description?: string
  iconCid?: string
  spaceIds: string[]
}

const directory = async (x: Booted) => (await ok<{ identities: Identity[] }>(call(x.app, 'GET', '/v1/identities'))).identities

describe('identities between two accounts', () => {
  it('a contact is listed with an empty name until its profile record reaches us, then its name (an `updated` frame)', async () => {
    const base = await listen(b.app)
    const stream = await openSse(`${base}/v1/identities/subscribe`)
    try {
      await stream.until((f) => f[0]?.event === 'ready')
      await new Promise((r) => setTimeout(r, 100)) // the stream's baseline is read

      const id = pairSpaceId(a.accountId, b.accountId)
      await ok(call(a.app, 'POST', '/v1/spaces/one-to-one', { otherIdentity: b.accountId }), 201)
      await exchange(a.engine.account(), b.engine.account(), id)
      // b holds the pending one-to-one: a is listed, with no name and no profile fields.
      expect((await directory(b)).find((i) => i.identity === a.accountId)).toEqual({ identity: a.accountId, name: '', spaceIds: [id] })
      await stream.until((f) => f.some((x) => x.event === 'identities' && x.data.added.some((i: Identity) => i.identity === a.accountId)))

      // a names itself: its profile is sealed into the spaces it shares, the one-to-one included.
      await ok(call(a.app, 'PUT', '/v1/account/metadata', { name: 'Ada', description: 'math', iconCid: 'bafyA' }), 204)
      await exchange(a.engine.account(), b.engine.account(), id)
      expect(await ok(call(b.app, 'GET', `/v1/identities/${a.accountId}`))).toEqual({ identity: a.accountId, name: 'Ada', description: 'math', iconCid: 'bafyA', spaceIds: [id] })
      // The one-to-one itself is called by the peer's name while nobody named the space.
      expect((await ok(call(b.app, 'GET', `/v1/spaces/${id}`))).name).toBe('Ada')
      const frames = await stream.until((f) => f.some((x) => x.event === 'identities' && x.data.updated.some((i: Identity) => i.identity === a.accountId && i.name === 'Ada')))
      for (const f of frames.filter((x) => x.event === 'identities')) expect(Object.keys(f.data).sort()).toEqual(['added', 'removed', 'updated'])

      // A later change of the profile follows.
      await ok(call(a.app, 'PUT', '/v1/account/metadata', { name: 'Ada L.' }), 204)
      await exchange(a.engine.account(), b.engine.account(), id)
      expect((await directory(b)).find((i) => i.identity === a.accountId)?.name).toBe('Ada L.')
    } finally {
      stream.destroy()
    }
  })

  it('a one-to-one registered as incoming lists its peer before anything synced; an unknown identity is 404', async () => {
    const peer = idFor(42)
    await ok(call(b.app, 'POST', '/v1/spaces/one-to-one/register-incoming', { peerIdentity: peer, displayHint: 'the meetup' }), 204)
    expect(await ok(call(b.app, 'GET', `/v1/identities/${peer}`))).toEqual({ identity: peer, name: '', spaceIds: [pairSpaceId(b.accountId, peer)] })
    expect(expectError(await call(b.app, 'GET', `/v1/identities/${idFor(43)}`), 404, 'identity.not_found')).toEqual({ identity: idFor(43) })
  })

  it('PUT /v1/account/metadata seals the profile into the spaces shared with others only, once per change', async () => {
    const solo = (await ok(call(a.app, 'POST', '/v1/spaces', { name: 'solo' }), 201)).id
    const team = (await ok(call(a.app, 'POST', '/v1/spaces', { name: 'team' }), 201)).id
    const acct = a.engine.account()
    await acct.space(team).replica.addMember(b.accountId, 'writer')
    await ok(call(a.app, 'PUT', '/v1/account/metadata', { name: 'Ada T.' }), 204)
    const profiles = (id: string) => acct.space(id).replica.acl.current().profiles()
    expect(profiles(solo).has(a.accountId)).toBe(false)
    expect(acct.tech.replica.acl.current().profiles().has(a.accountId)).toBe(false)
    const first = profiles(team).get(a.accountId)
    expect(first).toBeDefined()
    // The same profile again writes nothing new.
    await ok(call(a.app, 'PUT', '/v1/account/metadata', { name: 'Ada T.' }), 204)
    expect(profiles(team).get(a.accountId)?.recordId).toBe(first!.recordId)
  })

  it('accepting a direct add publishes our profile there: the owner sees our name, and we see the owner as a member', async () => {
    await ok(call(b.app, 'PUT', '/v1/account/metadata', { name: 'Bo' }), 204)
    const s = (await ok(call(a.app, 'POST', '/v1/spaces', { name: 'added' }), 201)).id
    await ok(call(a.app, 'POST', `/v1/spaces/${s}/acl/add`, { identities: [b.accountId], permission: 'writer' }))
    await offer(a, b, s)
    expect((await ok<Array<{ id: string }>>(call(b.app, 'GET', '/v1/spaces?status=invite_pending'))).map((x) => x.id)).toContain(s)
    // Pending: nothing of ours goes into the space yet.
    await new Promise((r) => setTimeout(r, 150))
    expect(b.engine.account().held(s)!.replica.acl.current().profiles().has(b.accountId)).toBe(false)
    await ok(call(b.app, 'POST', `/v1/spaces/${s}/invite/accept`))
    await waitFor(() => b.engine.account().held(s)!.replica.acl.current().profiles().has(b.accountId))
    await push(b, a, s)
    const bo = (await directory(a)).find((i) => i.identity === b.accountId)!
    expect(bo.name).toBe('Bo')
    expect(bo.spaceIds).toContain(s)
    expect((await directory(b)).find((i) => i.identity === a.accountId)?.spaceIds).toContain(s)
  })

  it('a joiner asking to join is listed (no spaceIds while pending), with no rights', async () => {
    const joiner = await bootApp()
    try {
      const s = (await ok(call(a.app, 'POST', '/v1/spaces', { name: 'open door' }), 201)).id
      const { inviteToken } = await ok(call(a.app, 'POST', `/v1/spaces/${s}/invites`, { permission: 'reader' }), 201)
      await ok(call(joiner.app, 'POST', '/v1/spaces/join', { inviteToken, metadata: { name: 'Joy' } }), 202)
      expect(await deliverJoins(joiner, a, s)).toEqual(['pending'])
      const entry = (await directory(a)).find((i) => i.identity === joiner.accountId)
      // The join metadata is what managers see in the members list; the directory shows profiles only.
      expect(entry).toEqual({ identity: joiner.accountId, name: '', spaceIds: [] })
      expect(a.engine.account().space(s).replica.acl.current().roleOf(joiner.accountId)).toBe('none')
    } finally {
      await joiner.close()
    }
  })
})

async function waitFor(pred: () => boolean, ms = 3000) {
  const until = Date.now() + ms
  while (!pred()) {
    if (Date.now() > until) throw new Error('timed out')
    await new Promise((r) => setTimeout(r, 10))
  }
}
