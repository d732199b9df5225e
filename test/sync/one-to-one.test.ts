import { describe, expect, it } from 'vitest'
import { AccountEngine } from '../../sync/space/account-engine.ts'
import { isPairSpace, pairSpaceId, validIdentity } from '../../sync/space/one-to-one.ts'
import { MemoryStorageAdapter } from '../../sync/storage/memory.ts'
import { defaultCryptoProvider } from '../../sync/crypto/provider.ts'
import { toBase58 } from '../../sync/core/ids.ts'
import { idFor, keyFor, seededEnv } from '../helpers.ts'
import { exchange, ownDevices } from '../one-to-one-helpers.ts'

async function account(n: number, seed = n) {
  return AccountEngine.open({ storage: new MemoryStorageAdapter(), crypto: await defaultCryptoProvider(), env: seededEnv(seed), accountKey: keyFor(n) })
}

const status = async (x: AccountEngine, spaceId: string) => (await x.info(spaceId)).status

describe('one-to-one: pair ids', () => {
  it('the pair id is order-independent; isPairSpace accepts only the pair of the two', () => {
    const [a, b, c] = [idFor(1), idFor(2), idFor(3)]
    expect(pairSpaceId(a, b)).toBe(pairSpaceId(b, a))
    expect(pairSpaceId(a, b)).not.toBe(pairSpaceId(a, c))
    expect(isPairSpace(pairSpaceId(a, b), b, a)).toBe(true)
    expect(isPairSpace(pairSpaceId(a, b), c, a)).toBe(false)
    expect(isPairSpace(pairSpaceId(a, b), a, a)).toBe(false)
    expect(isPairSpace('not-an-id', a, b)).toBe(false)
    expect(isPairSpace(pairSpaceId(a, b), 'xyz', b)).toBe(false)
  })

  it('an identity is base58 of 32 bytes on the curve', () => {
    expect(validIdentity(idFor(1))).toBe(true)
    expect(validIdentity('abc')).toBe(false)
    expect(validIdentity(toBase58(new Uint8Array(31).fill(9)))).toBe(false)
    // 32 bytes that decode to no Edwards point.
    const bad = new Uint8Array(32).fill(0xff)
    expect(validIdentity(toBase58(bad))).toBe(false)
  })
})

describe('one-to-one: two accounts', () => {
  it('both directions at once give one space id; both end active, both writers', async () => {
    const a = await account(1)
    const b = await account(2)
    const [ia, ib] = await Promise.all([a.oneToOne.initiate(b.accountId), b.oneToOne.initiate(a.accountId)])
    expect(ia.id).toBe(ib.id)
    expect(ia).toMatchObject({ spaceType: 'svc.onetoone', status: 'active', ownRole: 'writer', derived: true })
    await exchange(a, b, ia.id)
    expect(await status(a, ia.id)).toBe('active')
    expect(await status(b, ia.id)).toBe('active')
    // Both write, both read.
    const sa = a.space(ia.id)
    const obj = await sa.createObject({ initialProperties: { core: { name: 'from a' } } })
    await exchange(a, b, ia.id)
    expect(b.space(ia.id).objectDoc(obj)).toMatchObject({ core: { name: 'from a' } })
  })

  it('the receiving side sees it pending once offered, and accepts', async () => {
    const a = await account(1)
    const b = await account(2)
    const info = await a.oneToOne.initiate(b.accountId)
    await exchange(a, b, info.id)
    expect(await status(b, info.id)).toBe('one_to_one_pending')
    expect((await b.listSpaces('one_to_one_pending')).map((s) => s.id)).toEqual([info.id])
    expect(await b.oneToOne.accept(info.id)).toMatchObject({ status: 'active', spaceType: 'svc.onetoone' })
    // Accepting twice is harmless.
    expect(await b.oneToOne.accept(info.id)).toMatchObject({ status: 'active' })
  })

  it('initiating what the other side started accepts it', async () => {
    const a = await account(1)
    const b = await account(2)
    const info = await a.oneToOne.initiate(b.accountId)
    await exchange(a, b, info.id)
    expect(await status(b, info.id)).toBe('one_to_one_pending')
    expect(await b.oneToOne.initiate(a.accountId)).toMatchObject({ id: info.id, status: 'active' })
  })

  it('decline is sticky: the same start, re-offers and re-syncs do not revive it', async () => {
    const a = await account(1)
    const b = await account(2)
    const info = await a.oneToOne.initiate(b.accountId)
    await exchange(a, b, info.id)
    await b.oneToOne.decline(info.id)
    expect(await status(b, info.id)).toBe('deleted')
    expect(await b.listSpaces('one_to_one_pending')).toEqual([])
    expect(() => b.space(info.id)).toThrow(expect.objectContaining({ code: 'space.not_found' }))
    expect(await b.oneToOne.offered(info.id, a.accountId)).toBe(true)
    await a.space(info.id).createObject({ initialProperties: { core: { name: 'still here' } } })
    await exchange(a, b, info.id)
    expect(await status(b, info.id)).toBe('deleted')
    await expect(b.oneToOne.accept(info.id)).rejects.toMatchObject({ code: 'space.deleted' })
  })

  it('a decline made on the offer, before the start itself arrived, covers that start', async () => {
    const a = await account(1)
    const b = await account(2)
    const info = await a.oneToOne.initiate(b.accountId)
    // The offer alone (no change exchanged yet) makes the row pending; the user declines at once.
    expect(await b.oneToOne.offered(info.id, a.accountId)).toBe(true)
    expect(await status(b, info.id)).toBe('one_to_one_pending')
    await b.oneToOne.decline(info.id)
    await exchange(a, b, info.id)
    expect(await b.oneToOne.startsOf(b.held(info.id)!, a.accountId)).toBe(1)
    expect(await status(b, info.id)).toBe('deleted')
    // The second start is a later one.
    await a.oneToOne.initiate(b.accountId)
    await exchange(a, b, info.id)
    expect(await status(b, info.id)).toBe('one_to_one_pending')
  })

  it('a later start by the other side un-declines it', async () => {
    const a = await account(1)
    const b = await account(2)
    const info = await a.oneToOne.initiate(b.accountId)
    await exchange(a, b, info.id)
    await b.oneToOne.decline(info.id)
    await a.oneToOne.initiate(b.accountId)
    await exchange(a, b, info.id)
    expect(await status(b, info.id)).toBe('one_to_one_pending')
    expect(await b.oneToOne.accept(info.id)).toMatchObject({ status: 'active' })
  })

  it('our own start un-declines it too', async () => {
    const a = await account(1)
    const b = await account(2)
    const info = await a.oneToOne.initiate(b.accountId)
    await exchange(a, b, info.id)
    await b.oneToOne.decline(info.id)
    expect(await b.oneToOne.initiate(a.accountId)).toMatchObject({ status: 'active' })
  })

  it("decline is synced to the account's other devices and stays there", async () => {
    const a = await account(1)
    const b1 = await account(2, 21)
    const b2 = await account(2, 22)
    const info = await a.oneToOne.initiate(b1.accountId)
    await exchange(a, b1, info.id)
    await ownDevices(b1, b2, info.id)
    expect(await status(b2, info.id)).toBe('one_to_one_pending')
    await b1.oneToOne.decline(info.id)
    await ownDevices(b1, b2, info.id)
    expect(await status(b2, info.id)).toBe('deleted')
    // b2 syncs with a on its own: still declined.
    await exchange(a, b2, info.id)
    expect(await status(b2, info.id)).toBe('deleted')
    // A later start reaches b2 first: b2 un-declines, and so does b1 from b2's row.
    await a.oneToOne.initiate(b2.accountId)
    await exchange(a, b2, info.id)
    expect(await status(b2, info.id)).toBe('one_to_one_pending')
    await ownDevices(b1, b2, info.id)
    expect(await status(b1, info.id)).toBe('one_to_one_pending')
  })

  it('deleting a one-to-one is local to this account and re-derivable', async () => {
    const a = await account(1)
    const b = await account(2)
    const info = await a.oneToOne.initiate(b.accountId)
    await exchange(a, b, info.id)
    await b.oneToOne.accept(info.id)
    await b.deleteSpace(info.id)
    expect(await status(b, info.id)).toBe('deleted')
    await expect(b.deleteSpace(info.id)).rejects.toMatchObject({ code: 'space.not_found' })
    await exchange(a, b, info.id)
    expect(await status(a, info.id)).toBe('active')
    // Started again from our side: the same space, with its history.
    const again = await b.oneToOne.initiate(a.accountId)
    expect(again).toMatchObject({ id: info.id, status: 'active' })
  })

  it('register-incoming: a pending row before anything synced, idempotent, never revives a declined row', async () => {
    const a = await account(1)
    const b = await account(2)
    await b.oneToOne.registerIncoming(a.accountId, 'Ada from the meetup')
    await b.oneToOne.registerIncoming(a.accountId)
    const id = pairSpaceId(a.accountId, b.accountId)
    expect(await status(b, id)).toBe('one_to_one_pending')
    expect((await b.listSpaces('one_to_one_pending')).length).toBe(1)
    await b.oneToOne.decline(id)
    await b.oneToOne.registerIncoming(a.accountId, 'again')
    expect(await status(b, id)).toBe('deleted')
  })

  it('self-pairing and bad identities are 400', async () => {
    const a = await account(1)
    await expect(a.oneToOne.initiate(a.accountId)).rejects.toMatchObject({ code: 'request.invalid_field' })
    await expect(a.oneToOne.initiate('nope')).rejects.toMatchObject({ code: 'request.invalid_field' })
    await expect(a.oneToOne.registerIncoming(a.accountId)).rejects.toMatchObject({ code: 'request.invalid_field' })
    await expect(a.oneToOne.accept('unknown')).rejects.toMatchObject({ code: 'space.not_found' })
    const ordinary = await a.createSpace({ name: 'x' })
    await expect(a.oneToOne.decline(ordinary.id)).rejects.toMatchObject({ code: 'space.not_found' })
  })
})
