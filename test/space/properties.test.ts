import { describe, expect, it } from 'vitest'
import { propertyIdSync } from '../../sync/crypto/hash.ts'
import { PROPERTIES_DS } from '../../sync/space/schema.ts'
import { CORE_PROPERTIES, FORMAT_SLUGS, TypesService } from '../../sync/space/types/index.ts'
import { expectCode, newSpace, twoMembers } from './helpers.ts'

async function withType() {
  const s = await newSpace()
  const t = await s.svc.createType({ xKey: 'task', name: 'Task' })
  return { ...s, typeId: t.id }
}

describe('property definitions: create and list', () => {
  it('propId is base58(xxh3-64(creating changeId)), up to 11 chars; defaults filled; list in creation order', async () => {
    const { svc, engine, typeId } = await withType()
    expect(await svc.listProperties(typeId)).toEqual([])
    const { propId } = await svc.createProperty(typeId, { name: 'Due', kind: 'datetime' })
    expect(propId).toMatch(/^[1-9A-HJ-NP-Za-km-z]{1,11}$/)
    const rec = await engine.replica.getRecord(typeId, PROPERTIES_DS, propId)
    expect(propertyIdSync(rec!.created.c)).toBe(propId)
    const { propId: p2 } = await svc.createProperty(typeId, {
      name: 'Due',
      kind: 'string',
      scope: 'local',
      xKey: 'due2',
      description: 'd',
      meta: { index: 'none' },
      format: 'email',
    })
    expect(p2).not.toBe(propId) // same name is not a conflict
    expect(await svc.listProperties(typeId)).toEqual([
      { id: propId, typeId, kind: 'datetime', scope: 'synced', name: 'Due', description: '', meta: {}, xFormat: { type: 'datetime' } },
      { id: p2, typeId, kind: 'string', scope: 'local', name: 'Due', description: 'd', xKey: 'due2', meta: { index: 'none' }, xFormat: { type: 'email' } },
    ])
    expect(await svc.getProperty(typeId, p2)).toMatchObject({ id: p2, xKey: 'due2' })
    await expectCode(svc.getProperty(typeId, 'nope'), 'sdk.not_found')
  })

  it('built-ins: core lists its universal properties; other built-ins none; all are frozen', async () => {
    const { svc } = await newSpace()
    expect((await svc.listProperties('core')).map((p) => p.id)).toEqual(['name', 'description', 'icon', 'tags'])
    expect(CORE_PROPERTIES.find((p) => p.id === 'tags')).toMatchObject({ kind: 'array', xFormat: { type: 'tags' } })
    expect(await svc.listProperties('page')).toEqual([])
    await expectCode(svc.listProperties('nope'), 'type.not_found')
    for (const t of ['page', 'bin', 'core']) await expectCode(svc.createProperty(t, { name: 'x', kind: 'string' }), 'type.registered', { typeId: t })
    await expectCode(svc.patchProperty('core', 'name', { set: { name: 'N' } }), 'type.registered')
    await expectCode(svc.deleteProperty('core', 'tags'), 'type.registered')
    await expectCode(svc.createProperty('nope', { name: 'x', kind: 'string' }), 'type.not_found')
  })

  it('kind is required and explicit; scope is synced, account or local', async () => {
    const { svc, typeId } = await withType()
    await expectCode(svc.createProperty(typeId, { name: 'x' }), 'request.missing_field', { field: 'kind' })
    await expectCode(svc.createProperty(typeId, { kind: 'string' }), 'request.missing_field', { field: 'name' })
    await expectCode(svc.createProperty(typeId, { name: 'x', kind: 'text' }), 'request.invalid_field', { field: 'kind' })
    await expectCode(svc.createProperty(typeId, { name: 'x', kind: 'string', scope: 'global' }), 'request.invalid_field', { field: 'scope' })
    for (const kind of Object.keys(FORMAT_SLUGS)) {
      const { propId } = await svc.createProperty(typeId, { name: kind, kind })
      expect((await svc.getProperty(typeId, propId)).xFormat.type).toBe(FORMAT_SLUGS[kind as keyof typeof FORMAT_SLUGS][0])
    }
    for (const scope of ['account', 'local', 'synced']) {
      const { propId } = await svc.createProperty(typeId, { name: scope, kind: 'string', scope })
      expect((await svc.getProperty(typeId, propId)).scope).toBe(scope)
    }
  })

  it('400 property.format_invalid: slug not fitting the kind, unknown slug, malformed xFormat', async () => {
    const { svc, typeId } = await withType()
    await expectCode(svc.createProperty(typeId, { name: 'x', kind: 'string', format: 'number' }), 'property.format_invalid', { format: 'number', kind: 'string' })
    await expectCode(svc.createProperty(typeId, { name: 'x', kind: 'number', xFormat: { type: 'email' } }), 'property.format_invalid')
    await expectCode(svc.createProperty(typeId, { name: 'x', kind: 'string', xFormat: { type: 'sparkle' } }), 'property.format_invalid')
    await expectCode(svc.createProperty(typeId, { name: 'x', kind: 'string', xFormat: 'text' }), 'property.format_invalid')
    await expectCode(svc.createProperty(typeId, { name: 'x', kind: 'string', xFormat: { bogus: 1 } }), 'property.format_invalid')
    await expectCode(svc.createProperty(typeId, { name: 'x', kind: 'string', xFormat: { options: { $bad: { name: 'x' } } } }), 'property.format_invalid')
    await expectCode(svc.createProperty(typeId, { name: 'x', kind: 'string', xFormat: { options: { a: 'x' } } }), 'property.format_invalid')
    await expectCode(svc.createProperty(typeId, { name: 'x', kind: 'string', xFormat: { type: 'relation', relation: { filter: '{nope' } } }), 'property.format_invalid')
    await expectCode(
      svc.createProperty(typeId, { name: 'x', kind: 'string', xFormat: { type: 'relation', relation: { filter: '{"a":{"$bogus":1}}' } } }),
      'property.format_invalid',
    )
    await expectCode(svc.createProperty(typeId, { name: 'x', kind: 'string', format: 'email', xFormat: { type: 'url' } }), 'property.format_invalid')
    const ok = await svc.createProperty(typeId, {
      name: 'Status',
      kind: 'string',
      xFormat: { type: 'choice', icon: 'i', pos: 1, options: { todo: { name: 'To do', color: 'grey', pos: 1, meta: { k: 'v' } } }, config: { max: 3 }, 'x-acme': 'v' },
    })
    expect((await svc.getProperty(typeId, ok.propId)).xFormat).toMatchObject({ type: 'choice', options: { todo: { name: 'To do' } }, 'x-acme': 'v' })
    const rel = await svc.createProperty(typeId, { name: 'Owner', kind: 'string', xFormat: { type: 'relation', relation: { targetTypes: [typeId], filter: '{"core.tags":"x"}' } } })
    expect((await svc.getProperty(typeId, rel.propId)).xFormat.relation).toEqual({ targetTypes: [typeId], filter: '{"core.tags":"x"}' })
  })

  it('409 property.xkey_conflict when the xKey is taken within the type (not across types)', async () => {
    const { svc, typeId } = await withType()
    const other = await svc.createType({ xKey: 'other' })
    const { propId } = await svc.createProperty(typeId, { name: 'a', kind: 'string', xKey: 'due' })
    await expectCode(svc.createProperty(typeId, { name: 'b', kind: 'number', xKey: 'due' }), 'property.xkey_conflict', { xKey: 'due', existingPropId: propId })
    await svc.createProperty(other.id, { name: 'b', kind: 'number', xKey: 'due' })
    await expectCode(svc.createProperty(typeId, { name: 'b', kind: 'number', xKey: 'bad key' }), 'request.invalid_field', { field: 'xKey' })
    // A removed property frees its xKey.
    await svc.deleteProperty(typeId, propId)
    await svc.createProperty(typeId, { name: 'c', kind: 'string', xKey: 'due' })
  })

  it('nested shapes: items for arrays, properties for objects', async () => {
    const { svc, typeId } = await withType()
    const { propId } = await svc.createProperty(typeId, { name: 'n', kind: 'array', items: { kind: 'number' } })
    expect((await svc.getProperty(typeId, propId)).items).toEqual({ kind: 'number' })
    const o = await svc.createProperty(typeId, { name: 'o', kind: 'object', properties: { a: { kind: 'string' } } })
    expect((await svc.getProperty(typeId, o.propId)).properties).toEqual({ a: { kind: 'string' } })
    await expectCode(svc.createProperty(typeId, { name: 'n', kind: 'string', items: { kind: 'number' } }), 'request.invalid_field', { field: 'items' })
    await expectCode(svc.createProperty(typeId, { name: 'n', kind: 'array', items: { kind: 'nope' } }), 'request.invalid_field', { field: 'items' })
  })
})

describe('property definitions: PATCH rules', () => {
  async function withProp(
    body: Record<string, unknown> = { name: 'Status', kind: 'string', xKey: 'status', xFormat: { type: 'choice', options: { a: { name: 'A' }, b: { name: 'B' } } } },
  ) {
    const s = await withType()
    const { propId } = await s.svc.createProperty(s.typeId, body)
    return { ...s, propId, get: () => s.svc.getProperty(s.typeId, propId) }
  }

  it('one change of per-path sets and unsets: rename, xKey, icon, pos, index flag, options lifecycle', async () => {
    const { svc, typeId, propId, get, engine } = await withProp()
    const before = (await engine.replica.getRecord(typeId, PROPERTIES_DS, propId))!.modified
    await svc.patchProperty(typeId, propId, {
      set: {
        name: 'State',
        description: 'd',
        xKey: 'state',
        'meta.index': 'none',
        'meta.note': 'n',
        'xFormat.icon': 'i',
        'xFormat.pos': 3,
        'xFormat.options.c.name': 'C',
        'xFormat.options.a.color': 'red',
        'xFormat.options.a.pos': 2,
        'xFormat.options.a.meta.k': 'v',
        'xFormat.config.max': 4,
        'xFormat.x-acme.ui': true,
      },
      unset: ['xFormat.options.b'],
    })
    const after = (await engine.replica.getRecord(typeId, PROPERTIES_DS, propId))!.modified
    expect(after.c).not.toBe(before.c)
    expect(await get()).toMatchObject({
      name: 'State',
      description: 'd',
      xKey: 'state',
      meta: { index: 'none', note: 'n' },
      xFormat: {
        type: 'choice',
        icon: 'i',
        pos: 3,
        options: { a: { name: 'A', color: 'red', pos: 2, meta: { k: 'v' } }, c: { name: 'C' } },
        config: { max: 4 },
        'x-acme': { ui: true },
      },
    })
    expect((await get()).xFormat.options).not.toHaveProperty('b')
    // Re-adding a deleted option key works (field unset, no tombstone).
    await svc.patchProperty(typeId, propId, { set: { 'xFormat.options.b.name': 'B again' } })
    expect((await get()).xFormat.options).toMatchObject({ b: { name: 'B again' } })
    // Containers may be unset.
    await svc.patchProperty(typeId, propId, { unset: ['meta', 'xFormat.config', 'xFormat.relation', 'xFormat.options', 'xKey'] })
    const d = await get()
    expect(d.meta).toEqual({})
    expect(d.xKey).toBeUndefined()
    expect(d.xFormat).not.toHaveProperty('options')
    // Unsets run before sets: the whole options container cleared, then one option set.
    await svc.patchProperty(typeId, propId, { set: { 'xFormat.options.z.name': 'Z' } })
    await svc.patchProperty(typeId, propId, { unset: ['xFormat.options'], set: { 'xFormat.options.y.name': 'Y' } })
    expect((await get()).xFormat.options).toEqual({ y: { name: 'Y' } })
    await svc.patchProperty(typeId, propId, { unset: ['xFormat'] })
    expect((await get()).xFormat).toEqual({})
  })

  it('set targets leaves only: containers and objects refused (request.invalid_field)', async () => {
    const { svc, typeId, propId } = await withProp()
    for (const path of ['meta', 'xFormat', 'xFormat.options', 'xFormat.options.a', 'xFormat.relation', 'xFormat.config', 'xFormat.options.a.meta']) {
      await expectCode(svc.patchProperty(typeId, propId, { set: { [path]: 'x' } }), 'request.invalid_field', { path })
    }
    await expectCode(svc.patchProperty(typeId, propId, { set: { 'meta.k': { nested: 1 } } }), 'request.invalid_field')
    await expectCode(svc.patchProperty(typeId, propId, { set: { 'xFormat.x-acme': { a: 1 } } }), 'request.invalid_field')
    await expectCode(svc.patchProperty(typeId, propId, { set: { name: null } }), 'request.invalid_field')
  })

  it('pinned paths: 400 property.immutable with details.path, on set and unset', async () => {
    const { svc, typeId, propId } = await withProp()
    for (const path of ['kind', 'scope', 'items', 'properties', 'typeId', 'id', 'items.kind']) {
      await expectCode(svc.patchProperty(typeId, propId, { set: { [path]: 'number' } }), 'property.immutable', { path })
      await expectCode(svc.patchProperty(typeId, propId, { unset: [path] }), 'property.immutable', { path })
    }
  })

  it('unknown path or wrong leaf type: 400 request.invalid_field', async () => {
    const { svc, typeId, propId } = await withProp()
    for (const path of ['color', 'xFormat.bogus', 'xFormat.options.a.label', 'xFormat.relation.kind', 'meta.a.b', 'xFormat.config.a.b', 'name.first', '', 'a..b']) {
      await expectCode(svc.patchProperty(typeId, propId, { set: { [path]: 'x' } }), 'request.invalid_field')
    }
    await expectCode(svc.patchProperty(typeId, propId, { unset: ['bogus'] }), 'request.invalid_field')
    const wrong: Array<[string, unknown]> = [
      ['name', 1],
      ['description', true],
      ['xKey', 5],
      ['xFormat.type', 3],
      ['xFormat.icon', 1],
      ['xFormat.pos', 'x'],
      ['xFormat.options.a.name', 1],
      ['xFormat.options.a.pos', '1'],
      ['xFormat.relation.targetTypes', 'x'],
      ['xFormat.relation.filter', 1],
      ['meta.index', 'Not A Slug'],
    ]
    for (const [path, v] of wrong) await expectCode(svc.patchProperty(typeId, propId, { set: { [path]: v } }), 'request.invalid_field')
    await expectCode(svc.patchProperty(typeId, propId, {}), 'request.missing_field')
    await expectCode(svc.patchProperty(typeId, propId, { set: { name: 'x' }, unset: ['name'] }), 'request.invalid_field')
    await expectCode(svc.patchProperty(typeId, propId, { set: 'x' }), 'request.invalid_field')
    await expectCode(svc.patchProperty(typeId, propId, { unset: 'name' }), 'request.invalid_field')
  })

  it('400 property.format_invalid: slug outside the kind, reserved key, unparseable relation filter; slugs move within the kind', async () => {
    const { svc, typeId, propId, get } = await withProp()
    await expectCode(svc.patchProperty(typeId, propId, { set: { 'xFormat.type': 'number' } }), 'property.format_invalid')
    await expectCode(svc.patchProperty(typeId, propId, { set: { 'xFormat.type': 'nope' } }), 'property.format_invalid')
    for (const path of ['xFormat.options.$x.name', 'xFormat.options._x.name', 'xFormat.options.constructor.name', 'meta.$k', 'xFormat.config._c', 'xFormat.options.a.meta.$m']) {
      await expectCode(svc.patchProperty(typeId, propId, { set: { [path]: 'v' } }), 'property.format_invalid')
    }
    await expectCode(svc.patchProperty(typeId, propId, { set: { 'xFormat.relation.filter': 'not json' } }), 'property.format_invalid')
    await expectCode(svc.patchProperty(typeId, propId, { set: { 'xFormat.relation.filter': '{"$and": 5}' } }), 'property.format_invalid')
    await svc.patchProperty(typeId, propId, { set: { 'xFormat.type': 'email' } })
    await svc.patchProperty(typeId, propId, {
      set: { 'xFormat.type': 'relation', 'xFormat.relation.filter': '{"core.types":{"$in":["x"]}}', 'xFormat.relation.targetTypes': ['x'] },
    })
    expect((await get()).xFormat).toMatchObject({ type: 'relation', relation: { targetTypes: ['x'] } })
  })

  it('409 property.xkey_conflict on a taken xKey; own xKey is fine', async () => {
    const { svc, typeId, propId } = await withProp()
    const other = await svc.createProperty(typeId, { name: 'o', kind: 'number', xKey: 'other' })
    await expectCode(svc.patchProperty(typeId, propId, { set: { xKey: 'other' } }), 'property.xkey_conflict', { xKey: 'other', existingPropId: other.propId })
    await svc.patchProperty(typeId, propId, { set: { xKey: 'status' } })
  })

  it('unknown or removed property: 404 sdk.not_found; unknown type 404', async () => {
    const { svc, typeId, propId } = await withProp()
    await expectCode(svc.patchProperty(typeId, 'nope', { set: { name: 'x' } }), 'sdk.not_found')
    await svc.deleteProperty(typeId, propId)
    expect(await svc.listProperties(typeId)).toEqual([])
    await expectCode(svc.patchProperty(typeId, propId, { set: { name: 'x' } }), 'sdk.not_found')
    await expectCode(svc.deleteProperty(typeId, propId), 'sdk.not_found')
    await expectCode(svc.patchProperty('nope', propId, { set: { name: 'x' } }), 'type.not_found')
  })
})

describe('property definitions: merge', () => {
  it('kind and scope are pinned at apply time: a raw op changing them is dropped on every peer', async () => {
    const { a, b, svcA, sync } = await twoMembers()
    const t = await svcA.createType({ xKey: 't' })
    const { propId } = await svcA.createProperty(t.id, { name: 'n', kind: 'number' })
    await sync()
    const w = await b.replica.write(t.id, [
      { op: 'set', ds: PROPERTIES_DS, id: propId, path: 'kind', value: 'string' },
      { op: 'set', ds: PROPERTIES_DS, id: propId, path: 'scope', value: 'local' },
      { op: 'set', ds: PROPERTIES_DS, id: propId, path: 'name', value: 'renamed' },
    ])
    expect(w.rejections?.map((r) => r.code)).toEqual(['merge.pinned', 'merge.pinned'])
    await sync()
    for (const s of [svcA, new TypesService(b)]) {
      expect(await s.getProperty(t.id, propId)).toMatchObject({ kind: 'number', scope: 'synced', name: 'renamed' })
    }
    expect(await a.replica.stateDigest()).toBe(await b.replica.stateDigest())
  })

  it('removal tombstones the definition: a concurrent PATCH from another member is absorbed', async () => {
    const { a, b, svcA, svcB, sync } = await twoMembers()
    const t = await svcA.createType({ xKey: 't' })
    const { propId } = await svcA.createProperty(t.id, { name: 'n', kind: 'string' })
    await sync()
    await svcA.deleteProperty(t.id, propId)
    await svcB.patchProperty(t.id, propId, { set: { name: 'late' } })
    await sync()
    expect(await svcA.listProperties(t.id)).toEqual([])
    expect(await svcB.listProperties(t.id)).toEqual([])
    expect((await a.replica.getRecord(t.id, PROPERTIES_DS, propId))?.deleted).toBe(true)
    expect(await a.replica.stateDigest()).toBe(await b.replica.stateDigest())
  })
})
