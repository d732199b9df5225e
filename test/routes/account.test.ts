import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { idFor } from '../helpers.ts'
import { bootApp, call, expectError, listen, newSpace, ok, openSse, type Booted } from './helpers.ts'

let b: Booted
beforeAll(async () => {
  b = await bootApp()
})
afterAll(() => b.close())

describe('account', () => {
  it('GET /v1/account: own id and profile (empty until set)', async () => {
    expect(await ok(call(b.app, 'GET', '/v1/account'))).toEqual({ accountId: b.accountId, name: '', description: '', iconCid: '' })
  })

  it('PUT /v1/account/metadata: absent keeps, empty string clears; at least one field', async () => {
    await ok(call(b.app, 'PUT', '/v1/account/metadata', { name: 'Ada', description: 'math', iconCid: 'bafy1' }), 204)
    expect(await ok(call(b.app, 'GET', '/v1/account'))).toEqual({ accountId: b.accountId, name: 'Ada', description: 'math', iconCid: 'bafy1' })
    await ok(call(b.app, 'PUT', '/v1/account/metadata', { description: '' }), 204)
    expect(await ok(call(b.app, 'GET', '/v1/account'))).toMatchObject({ name: 'Ada', description: '', iconCid: 'bafy1' })
    expect(expectError(await call(b.app, 'PUT', '/v1/account/metadata', {}), 400, 'request.missing_field')).toMatchObject({
      accepted: ['name', 'description', 'iconCid'],
    })
    expectError(await call(b.app, 'PUT', '/v1/account/metadata', { nickname: 'x' }), 400, 'request.unknown_field')
    expectError(await call(b.app, 'PUT', '/v1/account/metadata', { name: 1 }), 400, 'request.invalid_field')
  })
})

describe('identities', () => {
  it('the directory lists the account itself with its profile and spaces, and every ACL member', async () => {
    const s1 = await newSpace(b.app, 'one')
    const member = idFor(7)
    await b.engine.account().space(s1).replica.addMember(member, 'writer')
    const { identities } = await ok<{ identities: Array<{ identity: string; name?: string; spaceIds: string[] }> }>(call(b.app, 'GET', '/v1/identities'))
    const me = identities.find((i) => i.identity === b.accountId)!
    expect(me).toMatchObject({ name: 'Ada', spaceIds: expect.arrayContaining([s1]) })
    expect(identities.find((i) => i.identity === member)).toEqual({ identity: member, name: '', spaceIds: [s1] })
    expect(await ok(call(b.app, 'GET', `/v1/identities/${member}`))).toEqual({ identity: member, name: '', spaceIds: [s1] })
    expect(await ok(call(b.app, 'GET', `/v1/identities/${b.accountId}`))).toMatchObject({ identity: b.accountId, iconCid: 'bafy1' })
    expect(expectError(await call(b.app, 'GET', `/v1/identities/${idFor(8)}`), 404, 'identity.not_found')).toEqual({ identity: idFor(8) })
  })

  it('/v1/identities/subscribe sends identities frames when the directory changes', async () => {
    const base = await listen(b.app)
    const s = await openSse(`${base}/v1/identities/subscribe`)
    try {
      await s.until((f) => f[0]?.event === 'ready')
      await new Promise((r) => setTimeout(r, 100)) // the baseline is read
      const sid = await newSpace(b.app, 'two')
      await b.engine.account().space(sid).replica.addMember(idFor(9), 'reader')
      await ok(call(b.app, 'PUT', '/v1/account/metadata', { name: 'Ada L.' }), 204)
      const frames = await s.until((f) => {
        const all = f.filter((x) => x.event === 'identities').map((x) => x.data)
        return all.some((d) => d.added.some((i: { identity: string }) => i.identity === idFor(9))) && all.some((d) => d.updated.some((i: { name?: string }) => i.name === 'Ada L.'))
      })
      const added = frames.flatMap((f) => (f.event === 'identities' ? f.data.added : []))
      expect(added.find((i: { identity: string }) => i.identity === idFor(9))).toEqual({ identity: idFor(9), name: '', spaceIds: [sid] })
      for (const f of frames.filter((x) => x.event === 'identities')) expect(Object.keys(f.data).sort()).toEqual(['added', 'removed', 'updated'])
    } finally {
      s.destroy()
    }
  })
})
