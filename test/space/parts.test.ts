import { describe, expect, it } from 'vitest'
import { DATASETS_DS, PARTS_DS } from '../../sync/space/schema.ts'
import { expectCode, newSpace, twoMembers } from './helpers.ts'
import { DEFAULT_MODULES } from '../../sync/modules/index.ts'

/** Every module's canonical collection, with its kind, sorted: what a space lists before any type declares one. */
const MODULE_COLLECTIONS = DEFAULT_MODULES.flatMap((m) => m.datasets ?? [])
  .map((d) => [d.canonicalCollection, d.kind] as const)
  .sort(([a], [b]) => (a < b ? -1 : 1))
const moduleNames = MODULE_COLLECTIONS.map(([name]) => name)

async function withType() {
  const s = await newSpace()
  const t = await s.svc.createType({ xKey: 'task' })
  return { ...s, typeId: t.id }
}

describe('parts', () => {
  it('create in one change with datasets; list; patch; delete removes the part and its datasets', async () => {
    const { svc, engine, typeId } = await withType()
    expect(await svc.listParts(typeId)).toEqual([])
    const changesBefore = engine.replica.treeMeta(typeId)!.count
    const res = await svc.createPart(typeId, {
      key: 'items',
      name: 'Items',
      icon: 'i',
      pos: 2,
      hidden: false,
      ui: { view: 'table' },
      uses: ['editor'],
      datasets: [
        { idRule: 'user', fields: { title: { type: 'string' } } },
        { module: 'editor', key: 'notes' },
      ],
    })
    expect(engine.replica.treeMeta(typeId)!.count).toBe(changesBefore + 1)
    expect(res.partId).toMatch(/^[1-9A-HJ-NP-Za-km-z]{1,11}$/)
    expect(res.datasets).toEqual([
      { datasetDefId: 'items', collection: `${typeId}_items` },
      { datasetDefId: 'notes', collection: `${typeId}_notes` },
    ])
    // One change: both records share their creating change, whose derived id is the partId.
    const part = await engine.replica.getRecord(typeId, PARTS_DS, res.partId)
    const ds = await engine.replica.getRecord(typeId, DATASETS_DS, 'items')
    expect(ds!.created.c).toBe(part!.created.c)
    const [p] = await svc.listParts(typeId)
    expect(p).toMatchObject({ id: res.partId, typeId, key: 'items', name: 'Items', icon: 'i', pos: 2, hidden: false, ui: { view: 'table' }, uses: ['editor'] })
    expect(p.datasets.map((d) => [d.id, d.partId, d.collection, d.module ?? null])).toEqual([
      ['items', res.partId, `${typeId}_items`, null],
      ['notes', res.partId, `${typeId}_notes`, 'editor'],
    ])
    const second = await svc.createPart(typeId, { key: 'first', pos: 1 })
    expect((await svc.listParts(typeId)).map((x) => x.key)).toEqual(['first', 'items'])

    await svc.patchPart(typeId, res.partId, { set: { name: 'Things', hidden: true, 'ui.view': 'board', uses: [] }, unset: ['icon', 'pos'] })
    expect((await svc.listParts(typeId)).find((x) => x.id === res.partId)).toMatchObject({ name: 'Things', hidden: true, ui: { view: 'board' }, uses: [] })
    expect((await svc.listParts(typeId)).find((x) => x.id === res.partId)).not.toHaveProperty('icon')
    await expectCode(svc.patchPart(typeId, res.partId, { set: { key: 'x' } }), 'request.invalid_field', { path: 'key' })
    await expectCode(svc.patchPart(typeId, res.partId, { set: { pos: 'x' } }), 'request.invalid_field')
    await expectCode(svc.patchPart(typeId, res.partId, { set: { ui: 'x' } }), 'request.invalid_field')
    await expectCode(svc.patchPart(typeId, res.partId, { unset: ['typeId'] }), 'request.invalid_field')
    await expectCode(svc.patchPart(typeId, 'nope', { set: { name: 'x' } }), 'sdk.not_found')

    await svc.deletePart(typeId, res.partId)
    expect((await svc.listParts(typeId)).map((x) => x.id)).toEqual([second.partId])
    expect((await engine.replica.getRecord(typeId, DATASETS_DS, 'items'))?.deleted).toBe(true)
    expect((await svc.listDatasets()).map((d) => d.name)).toEqual(moduleNames)
    await expectCode(svc.deletePart(typeId, res.partId), 'sdk.not_found')
    // The key is free again; its dataset gets a fresh record id past the tombstone.
    const again = await svc.createPart(typeId, { key: 'items', datasets: [{}] })
    expect(again.datasets).toEqual([{ datasetDefId: 'items~1', collection: `${typeId}_items` }])
  })

  it('part validation: key required and unique among live parts; field types; built-ins frozen', async () => {
    const { svc, typeId } = await withType()
    await expectCode(svc.createPart(typeId, {}), 'request.missing_field', { field: 'key' })
    await expectCode(svc.createPart(typeId, { key: 'bad key' }), 'request.invalid_field', { field: 'key' })
    await expectCode(svc.createPart(typeId, { key: 'a', pos: 'x' }), 'request.invalid_field')
    await expectCode(svc.createPart(typeId, { key: 'a', uses: [1] }), 'request.invalid_field')
    await expectCode(svc.createPart(typeId, { key: 'a', datasets: {} }), 'request.invalid_field', { field: 'datasets' })
    const { partId } = await svc.createPart(typeId, { key: 'a' })
    await expectCode(svc.createPart(typeId, { key: 'a' }), 'dataset.key_conflict', { key: 'a', existingPartId: partId })
    await expectCode(svc.createPart('page', { key: 'a' }), 'type.registered')
    await expectCode(svc.createPart('nope', { key: 'a' }), 'type.not_found')
    expect(await svc.listParts('page')).toEqual([])
  })

  it('POST {T}/parts/:partId/datasets adds a declaration to an existing part', async () => {
    const { svc, typeId } = await withType()
    const { partId } = await svc.createPart(typeId, { key: 'p' })
    expect(await svc.addDataset(typeId, partId, { key: 'rows', idRule: 'user', idPattern: '[a-z]+', idMaxLen: 8 })).toEqual({ datasetDefId: 'rows', collection: `${typeId}_rows` })
    expect(await svc.addDataset(typeId, partId, {})).toEqual({ datasetDefId: 'p', collection: `${typeId}_p` })
    expect(await svc.addDataset(typeId, partId, { module: 'chat' })).toEqual({ datasetDefId: 'messages', collection: 'chat_messages' })
    const [part] = await svc.listParts(typeId)
    expect(part.datasets.map((d) => d.key).sort()).toEqual(['messages', 'p', 'rows'])
    expect(part.datasets.find((d) => d.key === 'rows')).toMatchObject({ idRule: 'user', idPattern: '[a-z]+', idMaxLen: 8, partId })
    await expectCode(svc.addDataset(typeId, 'nope', {}), 'sdk.not_found')
  })
})

describe('dataset declaration errors', () => {
  async function withPart() {
    const s = await withType()
    const { partId } = await s.svc.createPart(s.typeId, { key: 'p' })
    return { ...s, partId }
  }

  it('409 dataset.module_owned: a module-served dataset takes no fields (or id rules)', async () => {
    const { svc, typeId, partId } = await withPart()
    await expectCode(svc.addDataset(typeId, partId, { module: 'editor', fields: { a: {} } }), 'dataset.module_owned', { module: 'editor' })
    await expectCode(svc.addDataset(typeId, partId, { module: 'editor', key: 'e', idRule: 'user' }), 'dataset.module_owned')
    await expectCode(svc.createPart(typeId, { key: 'q', datasets: [{ module: 'chat', fields: { text: {} } }] }), 'dataset.module_owned')
    await svc.addDataset(typeId, partId, { module: 'editor', key: 'e', fields: {} })
  })

  it('shared needs a module with a canonical collection and the canonical key; shared-only modules refuse namespaced datasets', async () => {
    const { svc, typeId, partId } = await withPart()
    await expectCode(svc.addDataset(typeId, partId, { shared: true, key: 'x' }), 'dataset.decl_invalid')
    await expectCode(svc.addDataset(typeId, partId, { module: 'editor', shared: true, key: 'notes' }), 'dataset.shared_conflict', { canonicalKey: 'blocks' })
    await expectCode(svc.addDataset(typeId, partId, { module: 'chat', shared: false }), 'dataset.shared_conflict', { module: 'chat' })
    await expectCode(svc.addDataset(typeId, partId, { module: 'chat', key: 'room' }), 'dataset.shared_conflict')
    expect(await svc.addDataset(typeId, partId, { module: 'editor', shared: true, key: 'blocks' })).toEqual({ datasetDefId: 'blocks', collection: 'editor_blocks' })
    expect(await svc.addDataset(typeId, partId, { module: 'chat', shared: true })).toEqual({ datasetDefId: 'messages', collection: 'chat_messages' })
  })

  it('400 dataset.module_unknown; 409 dataset.key_conflict on a taken key; 400 dataset.decl_invalid on malformed drafts', async () => {
    const { svc, typeId, partId } = await withPart()
    await expectCode(svc.addDataset(typeId, partId, { module: 'video' }), 'dataset.module_unknown', { module: 'video' })
    await svc.addDataset(typeId, partId, { key: 'rows' })
    await expectCode(svc.addDataset(typeId, partId, { key: 'rows' }), 'dataset.key_conflict', { key: 'rows' })
    await expectCode(svc.createPart(typeId, { key: 'q', datasets: [{ key: 'dup' }, { key: 'dup' }] }), 'dataset.key_conflict', { key: 'dup' })
    await svc.addDataset(typeId, partId, { module: 'editor', shared: true })
    await expectCode(svc.addDataset(typeId, partId, { module: 'editor', shared: true }), 'dataset.key_conflict', { key: 'blocks' })
    const bad: unknown[] = [
      'x',
      { bogus: 1 },
      { key: 'bad key' },
      { key: 5 },
      { idRule: 'random' },
      { idPattern: '[a-z', idRule: 'user' },
      { idPattern: 'a' },
      { idMaxLen: 300, idRule: 'user' },
      { deleteBy: 'everyone' },
      { search: 'yes' },
      { displayName: 1 },
      { dynamic: 'no' },
      { fields: [] },
      { fields: { 'bad name': {} } },
      { fields: { id: {} } },
      { fields: { a: { type: 'date' } } },
      { fields: { a: { mutableBy: 'owner' } } },
      { fields: { a: { scope: 'account' } } },
      { fields: { a: { extra: 1 } } },
      { fields: { a: { required: 'yes' } } },
      { shared: 'yes', module: 'editor' },
    ]
    for (const draft of bad) await expectCode(svc.addDataset(typeId, partId, draft), 'dataset.decl_invalid')
  })

  it('patching a declaration: pinned paths 400 dataset.immutable; mutable paths and fields change', async () => {
    const { svc, typeId, partId } = await withPart()
    const { datasetDefId } = await svc.addDataset(typeId, partId, { key: 'rows', idRule: 'user', fields: { a: { type: 'string' } } })
    for (const path of ['key', 'collection', 'module', 'shared', 'idRule', 'typeId', 'partId']) {
      await expectCode(svc.patchDataset(typeId, datasetDefId, { set: { [path]: 'x' } }), 'dataset.immutable', { path })
    }
    await expectCode(svc.patchDataset(typeId, datasetDefId, { unset: ['idRule'] }), 'dataset.immutable', { path: 'idRule' })
    await svc.patchDataset(typeId, datasetDefId, {
      set: { displayName: 'Rows', idMaxLen: 10, 'fields.b': { type: 'number', mutableBy: 'any' }, 'fields.a.required': true },
      unset: ['search'],
    })
    const d = (await svc.declarationsOf(`${typeId}_rows`))[0]
    expect(d).toMatchObject({ displayName: 'Rows', idMaxLen: 10, fields: { a: { type: 'string', required: true }, b: { type: 'number', mutableBy: 'any' } } })
    await expectCode(svc.patchDataset(typeId, datasetDefId, { set: { 'fields.c': { type: 'nope' } } }), 'dataset.decl_invalid')
    await expectCode(svc.patchDataset(typeId, datasetDefId, { set: { idMaxLen: 0 } }), 'dataset.decl_invalid')
    await expectCode(svc.patchDataset(typeId, datasetDefId, { set: { bogus: 1 } }), 'request.invalid_field')
    await expectCode(svc.patchDataset(typeId, 'nope', { set: { displayName: 'x' } }), 'dataset.not_found')
    const ed = await svc.addDataset(typeId, partId, { module: 'editor', key: 'doc' })
    await expectCode(svc.patchDataset(typeId, ed.datasetDefId, { set: { 'fields.a': {} } }), 'dataset.module_owned')
    await svc.deleteDataset(typeId, datasetDefId)
    expect(await svc.declarationsOf(`${typeId}_rows`)).toEqual([])
  })

  it('pinned paths also hold at merge: a raw write changing them is dropped', async () => {
    const { a, b, svcA, sync } = await twoMembers()
    const t = await svcA.createType({ xKey: 't' })
    const { partId } = await svcA.createPart(t.id, { key: 'p', datasets: [{ idRule: 'user' }] })
    await sync()
    const w = await b.replica.write(t.id, [
      { op: 'set', ds: DATASETS_DS, id: 'p', path: 'idRule', value: 'auto' },
      { op: 'set', ds: DATASETS_DS, id: 'p', path: 'partId', value: 'x' },
    ])
    expect(w.rejections?.map((r) => r.code)).toEqual(['merge.pinned', 'merge.pinned'])
    await sync()
    expect((await svcA.declarationsOf(`${t.id}_p`))[0]).toMatchObject({ idRule: 'user', partId })
    expect(await a.replica.stateDigest()).toBe(await b.replica.stateDigest())
  })
})

describe('GET {S}/datasets', () => {
  it('one entry per collection with a JSON Schema carrying x-scope per field, owners, module, shared', async () => {
    const { svc, typeId } = await withType()
    const other = await svc.createType({ xKey: 'other' })
    await svc.createPart(typeId, {
      key: 'rows',
      datasets: [
        {
          idRule: 'user',
          idPattern: '[a-z]+',
          idMaxLen: 12,
          displayName: 'Rows',
          fields: { title: { type: 'string', required: true, mutableBy: 'any' }, at: { type: 'datetime' }, draft: { type: 'boolean', scope: 'local', mutableBy: 'author' } },
        },
        { module: 'editor', shared: true },
      ],
    })
    await svc.createPart(other.id, { key: 'doc', datasets: [{ module: 'editor', shared: true }, { module: 'chat' }] })
    const list = await svc.listDatasets()
    expect(list.map((d) => d.name)).toEqual([`${typeId}_rows`, ...moduleNames].sort())
    const rows = list.find((d) => d.name === `${typeId}_rows`)!
    expect(rows).toMatchObject({ module: null, owners: [typeId] })
    expect(rows).not.toHaveProperty('shared')
    expect(rows.schema).toMatchObject({
      type: 'object',
      title: 'Rows',
      required: ['id', 'title'],
      additionalProperties: false,
      properties: {
        id: { type: 'string', pattern: '^(?:[a-z]+)$', maxLength: 12, 'x-scope': 'synced' },
        title: { type: 'string', 'x-scope': 'synced', 'x-mutableBy': 'any' },
        at: { type: 'object', 'x-scope': 'synced', 'x-mutableBy': 'once' },
        draft: { type: 'boolean', 'x-scope': 'local', 'x-mutableBy': 'author' },
      },
    })
    for (const [, f] of Object.entries(rows.schema.properties as Record<string, Record<string, unknown>>)) expect(f['x-scope']).toMatch(/^(synced|local)$/)
    expect(list.find((d) => d.name === 'editor_blocks')).toMatchObject({ module: 'editor', shared: true, owners: [typeId, other.id] })
    expect(list.find((d) => d.name === 'chat_messages')).toMatchObject({ module: 'chat', shared: true, owners: [other.id] })
    const chat = list.find((d) => d.name === 'chat_messages')!.schema.properties as Record<string, Record<string, unknown>>
    expect(chat.unread['x-scope']).toBe('local')
  })

  it('module collections are listed without owners when no type declares them', async () => {
    const { svc } = await newSpace()
    const list = await svc.listDatasets()
    expect(moduleNames).toEqual(expect.arrayContaining(['chat_messages', 'editor_blocks']))
    expect(list.map((d) => [d.name, d.module, d.shared, d.owners])).toEqual(MODULE_COLLECTIONS.map(([name, kind]) => [name, kind, true, undefined]))
  })
})
