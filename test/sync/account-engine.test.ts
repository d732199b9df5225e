import { describe, expect, it } from 'vitest'
import { AccountEngine } from '../../sync/space/account-engine.ts'
import { MemoryStorageAdapter } from '../../sync/storage/memory.ts'
import { defaultCryptoProvider } from '../../sync/crypto/provider.ts'
import { keyFor, seededEnv } from '../helpers.ts'

async function account(seed = 1, storage = new MemoryStorageAdapter()) {
  return AccountEngine.open({ storage, crypto: await defaultCryptoProvider(), env: seededEnv(seed), accountKey: keyFor(1) })
}

describe('account engine', () => {
  it('creates, lists, patches, sets settings and deletes spaces; survives reopen', async () => {
    const storage = new MemoryStorageAdapter()
    const a = await account(1, storage)
    const info = await a.createSpace({ name: 'Team', description: 'work' })
    expect(info).toMatchObject({ name: 'Team', description: 'work', status: 'active', ownRole: 'owner', derived: false, spaceType: 'svc.space', author: a.accountId })
    await a.patchSpace(info.id, { name: 'Team 2', description: '' })
    await a.patchSettings(info.id, { notifyMode: 'mentions' }, [])
    await a.space(info.id).settled()
    expect(await a.info(info.id)).toMatchObject({ name: 'Team 2', description: '', settings: { notifyMode: 'mentions' } })
    await expect(a.patchSettings(info.id, { x: 1 }, ['x'])).rejects.toMatchObject({ code: 'request.invalid_field' })
    await expect(a.patchSettings(info.id, {}, [])).rejects.toMatchObject({ code: 'request.missing_field' })

    const b = await account(2, storage)
    expect((await b.listSpaces()).map((s) => s.name)).toEqual(['Team 2'])
    await b.deleteSpace(info.id)
    expect(await b.listSpaces()).toEqual([])
    expect((await b.listSpaces('deleted')).map((s) => s.id)).toEqual([info.id])
    expect(() => b.space(info.id)).toThrow(expect.objectContaining({ code: 'space.not_found' }))
  })

  it('derived spaces: same id on two devices, idempotent, undeletable, unknown names refused', async () => {
    const a = await account(1)
    const b = await account(7)
    const listed = await a.derivedSpaces()
    expect(listed.every((d) => !d.created)).toBe(true)
    const s1 = await a.ensureDerivedSpace('personal')
    const s2 = await a.ensureDerivedSpace('personal')
    const s3 = await b.ensureDerivedSpace('personal')
    expect(s1.id).toBe(s2.id)
    expect(s3.id).toBe(s1.id)
    expect(a.tech.spaceId).toBe(b.tech.spaceId)
    expect(listed.find((d) => d.name === 'personal')?.spaceId).toBe(s1.id)
    await expect(a.deleteSpace(s1.id)).rejects.toMatchObject({ code: 'space.derived_undeletable' })
    await expect(a.ensureDerivedSpace('nope')).rejects.toMatchObject({ code: 'space.derived_unknown' })
  })

  it('objects: create with types and initial properties, row fields, delete', async () => {
    const a = await account(1)
    const sp = a.space((await a.createSpace({ name: 'S' })).id)
    const id = await sp.createObject({ types: ['page'], initialProperties: { core: { name: 'Hello', tags: ['x'] } } })
    await sp.settled()
    expect(sp.objectDoc(id)).toMatchObject({ id, core: { name: 'Hello', tags: ['x'], types: ['page'] }, author: a.accountId, spaceId: sp.spaceId })
    // The engine checks values as `POST {S}/objects` does: `page` defines no property p1.
    await expect(sp.createObject({ types: ['page'], initialProperties: { page: { p1: 1 } } })).rejects.toMatchObject({ code: 'property.not_found' })
    expect(sp.objectDoc(id)?.createdAt).toHaveProperty('$date')
    await expect(sp.createObject({ types: ['nope'] })).rejects.toMatchObject({ code: 'type.not_found' })
    const w = await sp.modify({ objectId: id, dataset: 'tasks', records: [{ id: 't', ops: [{ type: '$set', path: 'title', value: 'x' }] }] })
    expect(w.recordIds).toEqual(['t'])
    expect((await sp.datasetDocs(id, 'tasks')).map((d) => d.title)).toEqual(['x'])
    await sp.deleteObject(id)
    await sp.settled()
    expect(sp.objectDoc(id)).toBeUndefined()
    await expect(sp.deleteObject(id)).rejects.toMatchObject({ code: 'sdk.not_found' })
  })
})
