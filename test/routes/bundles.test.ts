import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { bundleChildId, bundleRootId } from '../../sync/space/bundles/index.ts'
import { bootApp, call, expectError, newSpace, ok, type Booted } from './helpers.ts'

let b: Booted
let spaceId: string
let S: string
beforeAll(async () => {
  b = await bootApp()
  spaceId = await newSpace(b.app)
  S = `/v1/spaces/${spaceId}`
})
afterAll(() => b.close())

const enc = encodeURIComponent
const install = (body: unknown) => call(b.app, 'POST', `${S}/bundles`, body)

/** A registry claim written as if it had arrived by sync ahead of its root's tree. */
async function claimWithoutRoot(bundleId: string, rootId: string, derived = false) {
  const { spaceIndexObjectId } = await ok<{ spaceIndexObjectId: string }>(call(b.app, 'GET', S))
  await ok(
    call(b.app, 'POST', `${S}/modify`, {
      objectId: spaceIndexObjectId,
      dataset: 'bundles',
      records: [
        { id: bundleId, ops: [{ type: '$set', path: `claims.${rootId}`, value: { derived, installedAt: { $date: '2020-01-01T00:00:00.000Z' }, installedBy: 'someone' } }] },
      ],
    }),
  )
}

describe('{S}/bundles', () => {
  it('POST installs (201) then adopts (200); GET lists and gets by URL-encoded id; 404 bundle.not_found', async () => {
    const first = await ok(install({ id: 'notes/v1', name: 'Notes', derived: true, xKey: 'note', hidden: true, properties: [{ name: 'Body', kind: 'string', xKey: 'body' }] }), 201)
    const rootId = bundleRootId(spaceId, 'notes/v1')
    expect(first).toMatchObject({
      installed: true,
      bundle: { id: 'notes/v1', name: 'Notes', rootId, derived: true, typeId: rootId, losers: [], ready: true, installedBy: b.accountId },
    })
    expect(first.bundle.installedAt.$date).toMatch(/Z$/)
    expect(await ok(install({ id: 'notes/v1', derived: true, xKey: 'note' }))).toEqual({ bundle: first.bundle, installed: false })
    expect(await ok(call(b.app, 'GET', `${S}/bundles/${enc('notes/v1')}`))).toEqual(first.bundle)
    const { bundles } = await ok<{ bundles: Array<{ id: string }> }>(call(b.app, 'GET', `${S}/bundles`))
    expect(bundles).toContainEqual(first.bundle)
    // The root is the declared type: hidden, so listed only with includeHidden.
    expect((await ok(call(b.app, 'GET', `${S}/types/${rootId}`))).xKey).toBe('note')
    const visible = await ok<{ types: Array<{ id: string }> }>(call(b.app, 'GET', `${S}/types`))
    expect(visible.types.map((t) => t.id)).not.toContain(rootId)
    expect((await ok<{ properties: Array<{ xKey: string }> }>(call(b.app, 'GET', `${S}/types/${rootId}/properties`))).properties.map((p) => p.xKey)).toEqual(['body'])

    expect(expectError(await call(b.app, 'GET', `${S}/bundles/${enc('nope/v1')}`), 404, 'bundle.not_found')).toMatchObject({ id: 'nope/v1' })
    expectError(await call(b.app, 'GET', `/v1/spaces/nope/bundles`), 404, 'space.not_found')
  })

  it('POST errors: unknown field, reserved id, unknown rootTypes (400), bad rootProperties (400), taken xKey (409), not ready (409)', async () => {
    expect(expectError(await install({ id: 'x/v1', colour: 'red' }), 400, 'request.unknown_field')).toMatchObject({ fields: ['colour'] })
    expectError(await install({}), 400, 'request.missing_field')
    expectError(await install({ id: 'has space/v1' }), 400, 'request.invalid_field')
    expect(expectError(await install({ id: 'system:mine/v1' }), 409, 'bundle.reserved')).toMatchObject({ id: 'system:mine/v1' })
    expect(expectError(await install({ id: 'x/v1', rootTypes: ['nope'] }), 400, 'type.not_found')).toMatchObject({ typeId: 'nope' })

    const t = await ok<{ id: string }>(call(b.app, 'POST', `${S}/types`, { xKey: 'contact', name: 'Contact' }), 201)
    const { propId } = await ok<{ propId: string }>(call(b.app, 'POST', `${S}/types/${t.id}/properties`, { name: 'Mail', kind: 'string', format: 'email' }), 201)
    expect(expectError(await install({ id: 'x/v1', rootTypes: [t.id], rootProperties: { [t.id]: { [propId]: 'not an email' } } }), 400, 'property.format_violation')).toMatchObject(
      { propId, format: 'email' },
    )
    expectError(await install({ id: 'x/v1', rootTypes: [t.id], rootProperties: { [t.id]: { unknownProp: 'x' } } }), 400, 'property.not_found')
    expect(expectError(await install({ id: 'x/v1', xKey: 'contact' }), 409, 'type.xkey_conflict')).toMatchObject({ xKey: 'contact', existingTypeId: t.id })
    expectError(await install({ id: 'x/v1', layout: 'grid' }), 400, 'type.xkey_required')
    // Nothing of the failed requests was installed.
    expectError(await call(b.app, 'GET', `${S}/bundles/${enc('x/v1')}`), 404, 'bundle.not_found')

    // A valid created install with values, carrying the type.
    const res = await ok(install({ id: 'x/v1', rootTypes: [t.id], rootProperties: { core: { name: 'Root' }, [t.id]: { [propId]: 'a@b.co' } } }), 201)
    expect(res.bundle).toMatchObject({ derived: false, losers: [] })
    expect(res.bundle).not.toHaveProperty('typeId')
    const rows = await ok<{ records: Array<Record<string, any>> }>(call(b.app, 'POST', `${S}/objects/query`, { filter: { id: res.bundle.rootId } }))
    expect(rows.records[0]).toMatchObject({ core: { types: [t.id], name: 'Root' }, [t.id]: { [propId]: 'a@b.co' }, bundle: { id: 'x/v1' } })
    const marked = await ok<{ records: Array<{ id: string }> }>(call(b.app, 'POST', `${S}/objects/query`, { filter: { 'bundle.id': 'x/v1' } }))
    expect(marked.records.map((r) => r.id)).toEqual([res.bundle.rootId])

    await claimWithoutRoot('ghost/v1', '9GhostRootNotHere')
    expect(await ok(call(b.app, 'GET', `${S}/bundles/${enc('ghost/v1')}`))).toMatchObject({ rootId: '9GhostRootNotHere', ready: false })
    expect(expectError(await install({ id: 'ghost/v1' }), 409, 'bundle.not_ready')).toMatchObject({ id: 'ghost/v1', rootId: '9GhostRootNotHere' })
  })

  it('resolve: a created root loses to the derived one; 204 releases it; not_loser and loser_not_ready', async () => {
    const created = await ok(install({ id: 'r/v1', name: 'R' }), 201)
    const derived = await ok(install({ id: 'r/v1', derived: true }), 201)
    expect(derived.bundle).toMatchObject({ rootId: bundleRootId(spaceId, 'r/v1'), derived: true, losers: [created.bundle.rootId] })
    const R = `${S}/bundles/${enc('r/v1')}`
    expectError(await call(b.app, 'POST', `${R}/resolve`, { loserRootId: derived.bundle.rootId }), 409, 'bundle.not_loser')
    expectError(await call(b.app, 'POST', `${R}/resolve`, { loserRootId: 'unknown' }), 409, 'bundle.not_loser')
    expectError(await call(b.app, 'POST', `${R}/resolve`, { loserRootId: created.bundle.rootId, extra: 1 }), 400, 'request.unknown_field')
    expectError(await call(b.app, 'POST', `${R}/resolve`, {}), 400, 'request.missing_field')
    expectError(await call(b.app, 'POST', `${S}/bundles/${enc('none/v1')}/resolve`, { loserRootId: 'x' }), 404, 'bundle.not_found')

    await claimWithoutRoot('r/v1', '9LoserNotHereYet')
    expect((await ok(call(b.app, 'GET', R))).losers).toEqual(['9LoserNotHereYet', created.bundle.rootId])
    expectError(await call(b.app, 'POST', `${R}/resolve`, { loserRootId: '9LoserNotHereYet' }), 409, 'bundle.loser_not_ready')

    await ok(call(b.app, 'POST', `${R}/resolve`, { loserRootId: created.bundle.rootId }), 204)
    expect((await ok(call(b.app, 'GET', R))).losers).toEqual(['9LoserNotHereYet'])
    expectError(await call(b.app, 'POST', `${R}/resolve`, { loserRootId: created.bundle.rootId }), 409, 'bundle.not_loser')
    // The released loser is an ordinary, deletable object.
    await ok(call(b.app, 'DELETE', `${S}/objects/${created.bundle.rootId}`), 204)
  })

  it('children: deterministic id, 201 then 200; errors', async () => {
    const C = `${S}/bundles/${enc('kids/v1')}/children`
    expectError(await call(b.app, 'POST', C, { seed: 'a' }), 404, 'bundle.not_found')
    await ok(install({ id: 'kids/v1', derived: true }), 201)
    const first = await ok(call(b.app, 'POST', C, { seed: 'inbox', types: ['page'] }), 201)
    expect(first).toEqual({ objectId: bundleChildId(spaceId, 'kids/v1', 'inbox') })
    expect(await ok(call(b.app, 'POST', C, { seed: 'inbox' }))).toEqual(first)
    expectError(await call(b.app, 'POST', C, { seed: 'x', types: ['nope'] }), 400, 'type.not_found')
    expectError(await call(b.app, 'POST', C, { seed: 'x', name: 'n' }), 400, 'request.unknown_field')
    expectError(await call(b.app, 'POST', C, { seed: '' }), 400, 'request.invalid_field')
    await claimWithoutRoot('ghost2/v1', '9AnotherGhost')
    expectError(await call(b.app, 'POST', `${S}/bundles/${enc('ghost2/v1')}/children`, { seed: 'a' }), 409, 'bundle.not_ready')
  })

  it('the tech space has no bundles: 405 space.unsupported', async () => {
    const tech = b.engine.account().tech.spaceId
    expectError(await call(b.app, 'GET', `/v1/spaces/${tech}/bundles`), 405, 'space.unsupported')
    expectError(await call(b.app, 'POST', `/v1/spaces/${tech}/bundles`, { id: 'a/v1' }), 405, 'space.unsupported')
  })
})

describe('/v1/catalog', () => {
  it('lists usecases; one usecase; 404 catalog.not_found', async () => {
    const { usecases } = await ok<{ usecases: Array<{ id: string; dependsOn: string[]; bundles: Array<{ id: string }> }> }>(call(b.app, 'GET', '/v1/catalog'))
    expect(usecases.map((u) => u.id)).toEqual(['general-chat', 'task-tracker', 'standup'])
    expect(usecases.flatMap((u) => u.bundles.map((x) => x.id)).every((id) => id.startsWith('system:'))).toBe(true)
    const chat = await ok(call(b.app, 'GET', '/v1/catalog/general-chat'))
    expect(chat).toEqual(usecases[0])
    expect(chat.bundles[0]).toMatchObject({ id: 'system:general-chat/v1', xKey: 'system:general-chat', hidden: true, rootCarriesOwnType: true })
    expectError(await call(b.app, 'GET', '/v1/catalog/nope'), 404, 'catalog.not_found')
  })

  it('setup: dependencies first, idempotent, properties by xKey; the chat root; errors', async () => {
    const space2 = await newSpace(b.app, 'Setup')
    const res = await ok(call(b.app, 'POST', '/v1/catalog/standup/setup', { spaceId: space2 }))
    expect(res.usecase).toBe('standup')
    expect(res.bundles.map((x: any) => [x.usecase, x.id, x.installed])).toEqual([
      ['general-chat', 'system:general-chat/v1', true],
      ['task-tracker', 'system:task-tracker/v1', true],
      ['standup', 'system:standup/v1', true],
    ])
    const chatRoot = bundleRootId(space2, 'system:general-chat/v1')
    expect(res.bundles[0]).toMatchObject({ bundle: { rootId: chatRoot, derived: true, typeId: chatRoot }, typeId: chatRoot, properties: {} })
    expect(Object.keys(res.bundles[1].properties)).toEqual(['status', 'priority', 'due', 'assignee'])
    const { datasets } = await ok<{ datasets: Array<{ name: string; owners?: string[] }> }>(call(b.app, 'GET', `/v1/spaces/${space2}/datasets`))
    expect(datasets.find((d) => d.name === 'chat_messages')?.owners).toEqual([chatRoot])
    // chat.md: POST {S}/objects never makes a chat.
    expectError(await call(b.app, 'POST', `/v1/spaces/${space2}/objects`, { types: [chatRoot] }), 400, 'type.reserved_carrier')

    const again = await ok(call(b.app, 'POST', '/v1/catalog/task-tracker/setup', { spaceId: space2 }))
    expect(again.bundles).toEqual([{ ...res.bundles[1], installed: false }])
    expect((await ok(call(b.app, 'GET', `/v1/spaces/${space2}/bundles/${enc('system:task-tracker/v1')}`))).rootId).toBe(res.bundles[1].bundle.rootId)

    expectError(await call(b.app, 'POST', '/v1/catalog/nope/setup', { spaceId: space2 }), 404, 'catalog.not_found')
    expectError(await call(b.app, 'POST', '/v1/catalog/general-chat/setup', { spaceId: 'nope' }), 404, 'space.not_found')
    expectError(await call(b.app, 'POST', '/v1/catalog/general-chat/setup', { spaceId: space2, x: 1 }), 400, 'request.unknown_field')
    expectError(await call(b.app, 'POST', '/v1/catalog/general-chat/setup', {}), 400, 'request.missing_field')
    expectError(await call(b.app, 'POST', '/v1/catalog/general-chat/setup', { spaceId: b.engine.account().tech.spaceId }), 405, 'space.unsupported')
  })

  it('setup: 409 type.xkey_conflict when a type took a catalog xKey; 409 bundle.not_ready when the root has not arrived', async () => {
    const space3 = await newSpace(b.app, 'Conflicts')
    await ok(call(b.app, 'POST', `/v1/spaces/${space3}/types`, { xKey: 'system:task' }), 201)
    expect(expectError(await call(b.app, 'POST', '/v1/catalog/task-tracker/setup', { spaceId: space3 }), 409, 'type.xkey_conflict')).toMatchObject({ xKey: 'system:task' })

    const saved = S
    S = `/v1/spaces/${space3}`
    try {
      await claimWithoutRoot('system:general-chat/v1', bundleRootId(space3, 'system:general-chat/v1'), true)
    } finally {
      S = saved
    }
    expectError(await call(b.app, 'POST', '/v1/catalog/general-chat/setup', { spaceId: space3 }), 409, 'bundle.not_ready')
  })
})

describe('OpenAPI', () => {
  it('documents every bundle and catalog route; bodies are strict', async () => {
    const doc = (await call(b.app, 'GET', '/v1/openapi.json')).json<{ paths: Record<string, Record<string, Record<string, unknown>>> }>()
    const op = (method: string, path: string) => doc.paths[path]?.[method]
    for (const [m, p] of [
      ['post', '/v1/spaces/{spaceId}/bundles'],
      ['post', '/v1/spaces/{spaceId}/bundles/{bundleId}/resolve'],
      ['post', '/v1/spaces/{spaceId}/bundles/{bundleId}/children'],
      ['post', '/v1/catalog/{usecaseId}/setup'],
    ]) {
      expect(op(m, p), `${m} ${p}`).toMatchObject({ 'x-strict': true })
    }
    for (const p of ['/v1/spaces/{spaceId}/bundles', '/v1/spaces/{spaceId}/bundles/{bundleId}', '/v1/catalog', '/v1/catalog/{usecaseId}']) expect(op('get', p), p).toBeDefined()
  })
})
