import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { pairSpaceId } from '../../sync/space/one-to-one.ts'
import { toBase58 } from '../../sync/core/ids.ts'
import { bootApp, call, expectError, ok, type Booted } from './helpers.ts'
import { exchange } from '../one-to-one-helpers.ts'

let a: Booted
let b: Booted
beforeAll(async () => {
  ;[a, b] = await Promise.all([bootApp(), bootApp()])
})
afterAll(async () => {
  await Promise.all([a.close(), b.close()])
})

const sync = (spaceId: string) => exchange(a.engine.account(), b.engine.account(), spaceId)
const statusOf = async (x: Booted, spaceId: string) => (await ok<{ status: string }>(call(x.app, 'GET', `/v1/spaces/${spaceId}`))).status
const pending = async (x: Booted) => (await ok<Array<{ id: string }>>(call(x.app, 'GET', '/v1/spaces?status=one_to_one_pending'))).map((s) => s.id)

describe('POST /v1/spaces/one-to-one', () => {
  it('validates: missing, self, malformed, unknown field', async () => {
    expect(expectError(await call(a.app, 'POST', '/v1/spaces/one-to-one', {}), 400, 'request.missing_field')).toEqual({ field: 'otherIdentity' })
    expect(expectError(await call(a.app, 'POST', '/v1/spaces/one-to-one', { otherIdentity: a.accountId }), 400, 'request.invalid_field')).toEqual({ field: 'otherIdentity' })
    expectError(await call(a.app, 'POST', '/v1/spaces/one-to-one', { otherIdentity: 'not-base58-0OIl' }), 400, 'request.invalid_field')
    expectError(await call(a.app, 'POST', '/v1/spaces/one-to-one', { otherIdentity: toBase58(new Uint8Array(32).fill(0xff)) }), 400, 'request.invalid_field')
    expectError(await call(a.app, 'POST', '/v1/spaces/one-to-one', { otherIdentity: 7 }), 400, 'request.invalid_field')
    expectError(await call(a.app, 'POST', '/v1/spaces/one-to-one', { otherIdentity: b.accountId, x: 1 }), 400, 'request.unknown_field')
    expectError(await call(a.app, 'POST', '/v1/spaces/one-to-one/register-incoming', {}), 400, 'request.missing_field')
    expectError(await call(a.app, 'POST', '/v1/spaces/one-to-one/register-incoming', { peerIdentity: a.accountId }), 400, 'request.invalid_field')
  })

  it('initiate, offer, accept; decline is sticky until the other side starts again; delete is local and re-derivable', async () => {
    const info = await ok(call(a.app, 'POST', '/v1/spaces/one-to-one', { otherIdentity: b.accountId }), 201)
    const id = pairSpaceId(a.accountId, b.accountId)
    expect(info).toMatchObject({ id, spaceType: 'svc.onetoone', status: 'active', ownRole: 'writer', derived: true, author: '' })
    // Idempotent for the caller: the same space.
    expect((await ok(call(a.app, 'POST', '/v1/spaces/one-to-one', { otherIdentity: b.accountId }), 201)).id).toBe(id)

    await sync(id)
    expect(await pending(b)).toEqual([id])
    expect(await ok(call(b.app, 'POST', `/v1/spaces/${id}/one-to-one/accept`), 200)).toMatchObject({ id, status: 'active' })
    expect(await pending(b)).toEqual([])

    // Delete: our copy only; the peer keeps it; starting again brings it back (201, same id).
    await ok(call(b.app, 'DELETE', `/v1/spaces/${id}`), 204)
    expect(await statusOf(b, id)).toBe('deleted')
    await sync(id)
    expect(await statusOf(a, id)).toBe('active')
    expect((await ok(call(b.app, 'POST', '/v1/spaces/one-to-one', { otherIdentity: a.accountId }), 201)).status).toBe('active')

    // Decline (from active here: the row is put aside like a delete, with reason declined).
    await ok(call(b.app, 'POST', `/v1/spaces/${id}/one-to-one/decline`), 204)
    await ok(call(b.app, 'POST', `/v1/spaces/${id}/one-to-one/decline`), 204)
    expect(await statusOf(b, id)).toBe('deleted')
    expectError(await call(b.app, 'POST', `/v1/spaces/${id}/one-to-one/accept`), 409, 'space.deleted')
    await sync(id)
    expect(await statusOf(b, id)).toBe('deleted')
    // A later start by a: pending again on b.
    await ok(call(a.app, 'POST', '/v1/spaces/one-to-one', { otherIdentity: b.accountId }), 201)
    await sync(id)
    expect(await pending(b)).toEqual([id])
  })

  it('register-incoming: 204, idempotent, a pending row', async () => {
    const other = await bootApp()
    try {
      await ok(call(a.app, 'POST', '/v1/spaces/one-to-one/register-incoming', { peerIdentity: other.accountId, displayHint: 'Bo' }), 204)
      await ok(call(a.app, 'POST', '/v1/spaces/one-to-one/register-incoming', { peerIdentity: other.accountId, displayHint: 'Bo' }), 204)
      const id = pairSpaceId(a.accountId, other.accountId)
      expect(await pending(a)).toContain(id)
      // Until the peer's profile reaches us, the one-to-one is called by the hint.
      expect((await ok(call(a.app, 'GET', `/v1/spaces/${id}`))).name).toBe('Bo')
      expect(await ok(call(a.app, 'POST', `/v1/spaces/${id}/one-to-one/accept`), 200)).toMatchObject({ id, status: 'active' })
    } finally {
      await other.close()
    }
  })

  it('accept and decline of a space that is not a one-to-one: 404', async () => {
    expectError(await call(a.app, 'POST', '/v1/spaces/nope/one-to-one/accept'), 404, 'space.not_found')
    expectError(await call(a.app, 'POST', '/v1/spaces/nope/one-to-one/decline'), 404, 'space.not_found')
    const s = (await ok(call(a.app, 'POST', '/v1/spaces', { name: 'plain' }), 201)).id
    expectError(await call(a.app, 'POST', `/v1/spaces/${s}/one-to-one/accept`), 404, 'space.not_found')
  })
})
