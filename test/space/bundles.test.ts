import { describe, expect, it } from 'vitest'
import type { SpaceReplica } from '../../sync/replica/space-replica.ts'
import { BUNDLES_DS } from '../../sync/space/schema.ts'
import type { SpaceEngine } from '../../sync/space/space-engine.ts'
import { bundleChildId, bundleRootId } from '../../sync/space/bundles/index.ts'
import { setupUsecase } from '../../sync/space/catalog/index.ts'
import { expectCode, newSpace, twoMembers } from './helpers.ts'

const bundlesOf = (engine: SpaceEngine) => engine.services.bundles

/** Delivers the changes of the trees `pick` selects (the ACL always travels first). */
async function pushTrees(from: SpaceReplica, to: SpaceReplica, pick: (treeId: string) => boolean) {
  const all = await from.allChanges()
  return to.ingest(all.filter((c) => c.treeId === from.spaceId || pick(c.treeId)).map(({ id, raw }) => ({ id, raw })))
}

const noteBundle = { id: 'notes/v1', name: 'Notes', xKey: 'note', properties: [{ name: 'Body', kind: 'string', xKey: 'body' }] }

async function pair() {
  const m = await twoMembers()
  return { ...m, A: bundlesOf(m.a), B: bundlesOf(m.b) }
}

describe('adopt-or-install', () => {
  it('derived: root id is a pure function of (space, bundle id); the root is the declared type; repeats adopt', async () => {
    const { engine } = await newSpace()
    const bundles = bundlesOf(engine)
    const first = await bundles.install({ ...noteBundle, derived: true, hidden: true, layout: 'list', weight: 2, parts: [{ key: 'body', datasets: [{ module: 'editor' }] }] })
    const rootId = bundleRootId(engine.spaceId, 'notes/v1')
    expect(first).toMatchObject({
      installed: true,
      bundle: { id: 'notes/v1', name: 'Notes', rootId, derived: true, typeId: rootId, losers: [], ready: true, installedBy: engine.replica.me },
    })
    expect(first.bundle.installedAt.$date).toMatch(/Z$/)
    expect(engine.replica.treeMeta(rootId)?.derived).toBe(true)
    const row = engine.objectDoc(rootId)!
    expect(row).toMatchObject({
      core: { types: ['type'], name: 'Notes' },
      type: { xKey: 'note', name: 'Notes', hidden: true, layout: 'list', weight: 2 },
      bundle: { id: 'notes/v1' },
    })
    const types = bundles.types
    expect(types.listTypes().map((t) => t.id)).not.toContain(rootId)
    expect(types.listTypes({ includeHidden: true }).map((t) => t.id)).toContain(rootId)
    const props = await types.listProperties(rootId)
    expect(props.map((p) => p.xKey)).toEqual(['body'])
    expect((await types.listParts(rootId)).map((p) => [p.key, p.datasets[0].collection])).toEqual([['body', `${rootId}_body`]])
    expect(await bundles.propertyIds(rootId)).toEqual({ body: props[0].id })

    const changes = engine.replica.treeMeta(rootId)!.count
    const again = await bundles.install({ ...noteBundle, derived: true })
    expect(again).toEqual({ bundle: first.bundle, installed: false })
    expect(engine.replica.treeMeta(rootId)!.count).toBe(changes)
    // A non-derived request adopts the installed root too.
    expect(await bundles.install({ id: 'notes/v1' })).toEqual({ bundle: first.bundle, installed: false })
    expect(await bundles.list()).toEqual([first.bundle])
    expect(await bundles.get('notes/v1')).toEqual(first.bundle)
    await expectCode(bundles.get('nope/v1'), 'bundle.not_found', { id: 'nope/v1' })
  })

  it('created: an ordinary root carrying rootTypes with rootProperties; no type declared; repeat adopts', async () => {
    const { engine } = await newSpace()
    const bundles = bundlesOf(engine)
    const task = await bundles.types.createType({ xKey: 'task' })
    const { propId } = await bundles.types.createProperty(task.id, { name: 'Due', kind: 'datetime', xKey: 'due' })
    const res = await bundles.install({
      id: 'inbox/v1',
      name: 'Inbox',
      rootTypes: [task.id],
      rootProperties: { core: { name: 'My inbox' }, [task.id]: { [propId]: { $date: '2024-01-01T00:00:00Z' } } },
    })
    expect(res.installed).toBe(true)
    expect(res.bundle).toMatchObject({ id: 'inbox/v1', name: 'Inbox', derived: false, losers: [], ready: true })
    expect(res.bundle).not.toHaveProperty('typeId')
    expect(res.bundle.rootId).not.toBe(bundleRootId(engine.spaceId, 'inbox/v1'))
    expect(engine.replica.treeMeta(res.bundle.rootId)?.derived).toBe(false)
    expect(engine.objectDoc(res.bundle.rootId)).toMatchObject({
      core: { types: [task.id], name: 'My inbox' },
      [task.id]: { [propId]: { $date: '2024-01-01T00:00:00Z' } },
      bundle: { id: 'inbox/v1' },
    })
    expect(await bundles.install({ id: 'inbox/v1' })).toEqual({ bundle: res.bundle, installed: false })
  })

  it('account- and local-scope root values go to the scoped store, never the synced row', async () => {
    const { engine } = await newSpace()
    const bundles = bundlesOf(engine)
    const task = await bundles.types.createType({ xKey: 'task' })
    const { propId: mine } = await bundles.types.createProperty(task.id, { name: 'Starred', kind: 'boolean', xKey: 'starred', scope: 'account' })
    const { propId: here } = await bundles.types.createProperty(task.id, { name: 'Folded', kind: 'boolean', xKey: 'folded', scope: 'local' })
    const { propId: shared } = await bundles.types.createProperty(task.id, { name: 'Title', kind: 'string', xKey: 'title' })
    const res = await bundles.install({ id: 'scoped/v1', rootTypes: [task.id], rootProperties: { [task.id]: { [mine]: true, [here]: false, [shared]: 'T' } } })
    const row = engine.objectDoc(res.bundle.rootId) as Record<string, Record<string, unknown>>
    expect(row[task.id]).toEqual({ [shared]: 'T' })
    expect(await bundles.types.scopedValues(res.bundle.rootId)).toEqual({ [task.id]: { [mine]: true, [here]: false } })
  })

  it('checks the whole request first: nothing is written when a rule fails', async () => {
    const { engine } = await newSpace()
    const bundles = bundlesOf(engine)
    const t = await bundles.types.createType({ xKey: 'taken' })
    const { propId } = await bundles.types.createProperty(t.id, { name: 'N', kind: 'number' })
    const objects = () => [...engine.objectDocs()].length
    const before = objects()
    await expectCode(bundles.install({ id: 'system:mine/v1' }), 'bundle.reserved')
    await expectCode(bundles.install({ id: 'bad id' }), 'request.invalid_field', { field: 'id' })
    await expectCode(bundles.install({ id: 'a/v1', rootTypes: ['nope'] }), 'type.not_found', { typeId: 'nope' })
    await expectCode(bundles.install({ id: 'a/v1', rootTypes: ['type'] }), 'request.invalid_field')
    await expectCode(bundles.install({ id: 'a/v1', rootTypes: [t.id], rootProperties: { [t.id]: { [propId]: 'not a number' } } }), 'property.kind_mismatch', { propId })
    await expectCode(bundles.install({ id: 'a/v1', rootProperties: { [t.id]: { [propId]: 1 } } }), 'request.invalid_field')
    await expectCode(bundles.install({ id: 'a/v1', xKey: 'taken' }), 'type.xkey_conflict', { xKey: 'taken', existingTypeId: t.id })
    await expectCode(bundles.install({ id: 'a/v1', derived: true, xKey: 'taken' }), 'type.xkey_conflict')
    await expectCode(bundles.install({ id: 'a/v1', hidden: true }), 'type.xkey_required')
    await expectCode(bundles.install({ id: 'a/v1', xKey: 'x', properties: [{ name: 'A', kind: 'nope' }] }), 'request.invalid_field', { field: 'kind' })
    await expectCode(bundles.install({ id: 'a/v1', xKey: 'x', properties: [{ name: 'A', kind: 'string', format: 'number' }] }), 'property.format_invalid')
    await expectCode(
      bundles.install({
        id: 'a/v1',
        xKey: 'x',
        properties: [
          { name: 'A', kind: 'string', xKey: 'k' },
          { name: 'B', kind: 'string', xKey: 'k' },
        ],
      }),
      'property.xkey_conflict',
    )
    await expectCode(bundles.install({ id: 'a/v1', xKey: 'x', parts: [{ key: 'p', datasets: [{ module: 'nope' }] }] }), 'dataset.module_unknown')
    await expectCode(bundles.install({ id: 'a/v1', xKey: 'x', parts: [{ key: 'p' }, { key: 'p' }] }), 'dataset.key_conflict')
    await expectCode(
      bundles.install({
        id: 'a/v1',
        xKey: 'x',
        parts: [
          { key: 'p', datasets: [{ key: 'd' }] },
          { key: 'q', datasets: [{ key: 'd' }] },
        ],
      }),
      'dataset.key_conflict',
    )
    expect(objects()).toBe(before)
    expect(await engine.replica.listRecords(engine.spaceIndexObjectId, BUNDLES_DS)).toEqual([])
    expect(await bundles.list()).toEqual([])
    // The catalog may install system: ids.
    expect((await bundles.install({ id: 'system:mine/v1' }, { system: true })).installed).toBe(true)
  })

  it('a chat type may not be carried by a bundle root or child (type.reserved_carrier)', async () => {
    const { engine } = await newSpace()
    const bundles = bundlesOf(engine)
    const chatType = await bundles.types.createType({ xKey: 'mychat' })
    await bundles.types.createPart(chatType.id, { key: 'chat', datasets: [{ module: 'chat' }] })
    await expectCode(bundles.install({ id: 'c/v1', rootTypes: [chatType.id] }), 'type.reserved_carrier', { typeId: chatType.id })
    await bundles.install({ id: 'c/v1' })
    await expectCode(bundles.child('c/v1', { seed: 's', types: [chatType.id] }), 'type.reserved_carrier')
  })

  it('deleting a created root uninstalls the bundle; a later install creates a new root', async () => {
    const { engine } = await newSpace()
    const bundles = bundlesOf(engine)
    const first = await bundles.install({ id: 'x/v1' })
    await engine.deleteObject(first.bundle.rootId)
    await engine.settled()
    await expectCode(bundles.get('x/v1'), 'bundle.not_found')
    const second = await bundles.install({ id: 'x/v1' })
    expect(second.installed).toBe(true)
    expect(second.bundle.rootId).not.toBe(first.bundle.rootId)
    // Derived roots are permanent.
    const d = await bundles.install({ id: 'y/v1', derived: true })
    await expectCode(engine.deleteObject(d.bundle.rootId), 'sdk.not_found')
  })
})

describe('conflict rule across replicas', () => {
  for (const order of ['created first', 'derived first'] as const) {
    it(`a created and a derived root claimed for one id: the derived root wins on both (${order} arrives first)`, async () => {
      const { a, b, A, B } = await pair()
      // The derived claim is the later one, so only the rule (not install time) can make it win.
      const created = await B.install(noteBundle)
      const derived = await A.install({ ...noteBundle, derived: true })
      expect(created.bundle.installedAt.$date < derived.bundle.installedAt.$date).toBe(true)
      expect(created.bundle.derived).toBe(false)
      expect(derived.bundle.rootId).toBe(bundleRootId(a.spaceId, 'notes/v1'))
      expect(derived.bundle.rootId).toBe(bundleRootId(b.spaceId, 'notes/v1'))
      // The created claim lives on b, the derived one on a.
      if (order === 'created first') {
        await pushTrees(b.replica, a.replica, () => true)
        await pushTrees(a.replica, b.replica, () => true)
      } else {
        await pushTrees(a.replica, b.replica, () => true)
        await pushTrees(b.replica, a.replica, () => true)
      }
      await a.settled()
      await b.settled()
      const onA = await A.get('notes/v1')
      const onB = await B.get('notes/v1')
      expect(onA).toEqual(onB)
      expect(onA).toMatchObject({ rootId: derived.bundle.rootId, derived: true, typeId: derived.bundle.rootId, losers: [created.bundle.rootId], ready: true })
      expect(await A.list()).toEqual(await B.list())
      // The same request now adopts the winner on both devices.
      expect((await A.install(noteBundle)).bundle.rootId).toBe(derived.bundle.rootId)
      expect((await B.install(noteBundle)).installed).toBe(false)

      await expectCode(A.resolve('notes/v1', derived.bundle.rootId), 'bundle.not_loser')
      await expectCode(A.resolve('notes/v1', 'someOtherId'), 'bundle.not_loser')
      await expectCode(A.resolve('nope/v1', created.bundle.rootId), 'bundle.not_found')
      await B.resolve('notes/v1', created.bundle.rootId)
      expect((await B.get('notes/v1')).losers).toEqual([])
      expect(b.objectDoc(created.bundle.rootId)).not.toHaveProperty('bundle')
      await expectCode(B.resolve('notes/v1', created.bundle.rootId), 'bundle.not_loser')
      await pushTrees(b.replica, a.replica, () => true)
      await a.settled()
      expect(await A.get('notes/v1')).toEqual(await B.get('notes/v1'))
      expect((await A.get('notes/v1')).losers).toEqual([])
      // The released loser is an ordinary object: still there, deletable.
      expect(a.objectDoc(created.bundle.rootId)).toBeDefined()
      await a.deleteObject(created.bundle.rootId)
    })
  }

  it('two created roots: the earliest install wins on both replicas; the other is a loser', async () => {
    const { a, b, A, B, sync } = await pair()
    const first = await A.install({ id: 'c/v1' })
    const second = await B.install({ id: 'c/v1' })
    await sync()
    const onA = await A.get('c/v1')
    expect(onA).toEqual(await B.get('c/v1'))
    const claims = [first.bundle, second.bundle].sort((x, y) =>
      x.installedAt.$date < y.installedAt.$date ? -1 : x.installedAt.$date > y.installedAt.$date ? 1 : x.rootId < y.rootId ? -1 : 1,
    )
    expect(onA.rootId).toBe(claims[0].rootId)
    expect(onA.losers).toEqual([claims[1].rootId])
    expect(a.spaceId).toBe(b.spaceId)
  })

  it('a derived request after a created install: the derived root is installed and wins; the created one is listed as loser', async () => {
    const { engine } = await newSpace()
    const bundles = bundlesOf(engine)
    const created = await bundles.install(noteBundle)
    const derived = await bundles.install({ ...noteBundle, derived: true })
    expect(derived.installed).toBe(true)
    expect(derived.bundle).toMatchObject({ rootId: bundleRootId(engine.spaceId, 'notes/v1'), derived: true, losers: [created.bundle.rootId] })
  })

  it('bundle.not_ready while the registry arrived without the root; loser_not_ready while a loser has not arrived', async () => {
    const { a, b, A, B } = await pair()
    const created = await A.install({ id: 'c/v1', name: 'C' })
    // Only the space index (the registry) travels.
    await pushTrees(a.replica, b.replica, (t) => t === a.spaceIndexObjectId)
    await b.settled()
    expect(await B.get('c/v1')).toMatchObject({ rootId: created.bundle.rootId, ready: false })
    await expectCode(B.install({ id: 'c/v1' }), 'bundle.not_ready', { id: 'c/v1', rootId: created.bundle.rootId })
    await expectCode(B.child('c/v1', { seed: 'x' }), 'bundle.not_ready')
    // A derived install on B is not blocked: the derived root wins, the created one is a loser not here yet.
    const derived = await B.install({ id: 'c/v1', derived: true })
    expect(derived.bundle.losers).toEqual([created.bundle.rootId])
    await expectCode(B.resolve('c/v1', created.bundle.rootId), 'bundle.loser_not_ready', { loserRootId: created.bundle.rootId })
    await pushTrees(a.replica, b.replica, () => true)
    await b.settled()
    await B.resolve('c/v1', created.bundle.rootId)
    expect((await B.get('c/v1')).losers).toEqual([])
  })

  it('children: same id on every device, created once, marked; errors', async () => {
    const { a, b, A, B, sync } = await pair()
    await expectCode(A.child('k/v1', { seed: 'x' }), 'bundle.not_found')
    await A.install({ id: 'k/v1', derived: true })
    await B.install({ id: 'k/v1', derived: true })
    const t = await A.types.createType({ xKey: 'item' })
    await sync()
    const onA = await A.child('k/v1', { seed: 'inbox', types: [t.id] })
    expect(onA).toEqual({ objectId: bundleChildId(a.spaceId, 'k/v1', 'inbox'), created: true })
    expect(a.objectDoc(onA.objectId)).toMatchObject({ core: { types: [t.id] }, bundle: { id: 'k/v1', seed: 'inbox' } })
    expect(await A.child('k/v1', { seed: 'inbox' })).toEqual({ objectId: onA.objectId, created: false })
    const onB = await B.child('k/v1', { seed: 'inbox', types: [t.id] })
    expect(onB.objectId).toBe(onA.objectId)
    await sync()
    expect(a.objectDoc(onA.objectId)?.core).toEqual(b.objectDoc(onA.objectId)?.core)
    expect(bundleChildId(a.spaceId, 'k/v1', 'other')).not.toBe(onA.objectId)
    await expectCode(A.child('k/v1', { seed: '' }), 'request.invalid_field', { field: 'seed' })
    await expectCode(A.child('k/v1', { seed: 's', types: ['nope'] }), 'type.not_found')
  })
})

describe('catalog setup', () => {
  it('general-chat: derived hidden root that is its own chat type and carries it; idempotent', async () => {
    const { engine } = await newSpace()
    const bundles = bundlesOf(engine)
    const res = await setupUsecase(bundles, 'general-chat')
    const rootId = bundleRootId(engine.spaceId, 'system:general-chat/v1')
    expect(res).toEqual({
      usecase: 'general-chat',
      bundles: [
        {
          usecase: 'general-chat',
          id: 'system:general-chat/v1',
          bundle: expect.objectContaining({ rootId, derived: true, typeId: rootId }),
          installed: true,
          typeId: rootId,
          properties: {},
        },
      ],
    })
    expect(engine.objectDoc(rootId)?.core).toMatchObject({ types: ['type', rootId], name: 'General chat' })
    expect(bundles.types.getType(rootId)).toMatchObject({ hidden: true, xKey: 'system:general-chat' })
    const decls = await bundles.types.declarationsOf('chat_messages')
    expect(decls.map((d) => d.typeId)).toEqual([rootId])
    const again = await setupUsecase(bundles, 'general-chat')
    expect(again.bundles[0]).toMatchObject({ installed: false, bundle: res.bundles[0].bundle })
  })

  it('standup: dependencies first, properties by xKey, relation to the Task type, the board child', async () => {
    const { engine } = await newSpace()
    const bundles = bundlesOf(engine)
    const res = await setupUsecase(bundles, 'standup')
    expect(res.bundles.map((b) => [b.usecase, b.id, b.installed])).toEqual([
      ['general-chat', 'system:general-chat/v1', true],
      ['task-tracker', 'system:task-tracker/v1', true],
      ['standup', 'system:standup/v1', true],
    ])
    const task = res.bundles[1]
    expect(Object.keys(task.properties!)).toEqual(['status', 'priority', 'due', 'assignee'])
    const standup = res.bundles[2]
    const links = await bundles.types.getProperty(standup.typeId!, standup.properties!.tasks)
    expect(links.xFormat).toMatchObject({ type: 'links', relation: { targetTypes: [task.typeId] } })
    const board = bundleChildId(engine.spaceId, 'system:task-tracker/v1', 'board')
    expect(engine.objectDoc(board)).toMatchObject({ core: { types: ['dataview'], name: 'Task board' } })
    expect(await bundles.child('system:task-tracker/v1', { seed: 'board' })).toEqual({ objectId: board, created: false })
    // Tasks are ordinary objects carrying the Task type (the root is not one).
    const taskObj = await engine.createObject({ types: [task.typeId!], initialProperties: { [task.typeId!]: { [task.properties!.status]: 'todo' } } })
    expect(taskObj).not.toBe(task.bundle.rootId)
    const second = await setupUsecase(bundles, 'task-tracker')
    expect(second.bundles.map((b) => b.installed)).toEqual([false])
    expect(second.bundles[0].properties).toEqual(task.properties)
  })

  it('two devices setting up one usecase before syncing converge on one root and one xKey map', async () => {
    const { a, b, A, B, sync } = await pair()
    const onA = await setupUsecase(A, 'task-tracker')
    const onB = await setupUsecase(B, 'task-tracker')
    expect(onA.bundles[0].bundle.rootId).toBe(onB.bundles[0].bundle.rootId)
    await sync()
    const typeId = onA.bundles[0].typeId!
    expect(await A.propertyIds(typeId)).toEqual(await B.propertyIds(typeId))
    expect(await A.get('system:task-tracker/v1')).toEqual(await B.get('system:task-tracker/v1'))
    expect((await A.get('system:task-tracker/v1')).losers).toEqual([])
    expect(await a.replica.stateDigest()).toBe(await b.replica.stateDigest())
  })

  it('a taken catalog xKey is 409 type.xkey_conflict; unknown usecase catalog.not_found', async () => {
    const { engine } = await newSpace()
    const bundles = bundlesOf(engine)
    await bundles.types.createType({ xKey: 'system:task' })
    await expectCode(setupUsecase(bundles, 'task-tracker'), 'type.xkey_conflict', { xKey: 'system:task' })
    await expectCode(setupUsecase(bundles, 'nope'), 'catalog.not_found')
  })
})
