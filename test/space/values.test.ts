import { describe, expect, it } from 'vitest'
import type { Json } from '../../sync/crdt/ops.ts'
import { FORMAT_SLUGS, MemoryScopedValueStore, TypesService, valueViolation, type PropertyKind } from '../../sync/space/types/index.ts'
import { expectCode, newSpace } from './helpers.ts'

const d = (iso: string) => ({ $date: iso })

/** Per slug: values that fit and values that must be refused (spec rule 3 and svc's table). */
const CASES: Record<string, { kind: PropertyKind; ok: Json[]; bad: Json[] }> = {
  text: { kind: 'string', ok: ['', 'hello'], bad: [1, true, ['x'], { a: 1 }] },
  email: { kind: 'string', ok: ['a@b.co'], bad: ['a@b', 'no at', 'a b@c.d'] },
  url: { kind: 'string', ok: ['https://x.org/p?q=1', 'mailto:a@b.c'], bad: ['x.org', 'not a url', '/relative'] },
  phone: { kind: 'string', ok: ['+49 (30) 123-456', '112'], bad: ['12', 'call me', '+1'.padEnd(30, '9')] },
  choice: { kind: 'string', ok: ['not-an-option-key', 'todo'], bad: [1, ['todo']] },
  relation: {
    kind: 'string',
    ok: ['svc://9hyVP8v1Cc9FUgwbkbCbCbhRbJdck8S89abS3g4Su99V'],
    bad: ['9hyVP8v1Cc9F', 'svc://', 'svc://abc/def', 'svc://0OIl', 'https://x', { id: 'x' }],
  },
  number: { kind: 'number', ok: [0, -1.5, 1e9], bad: ['1', true] },
  integer: { kind: 'number', ok: [3, -2], bad: [1.5, '3'] },
  percent: { kind: 'number', ok: [0.25, 1.5], bad: ['25%'] },
  rating: { kind: 'number', ok: [0, 5], bad: [6, -1, 2.5] },
  checkbox: { kind: 'boolean', ok: [true, false], bad: ['true', 0] },
  datetime: {
    kind: 'datetime',
    ok: [d('2024-02-29T10:11:12Z'), d('2024-01-01T00:00:00.123456Z')],
    bad: [
      '2024-01-01T00:00:00Z',
      d('2023-02-29T00:00:00Z'),
      d('2024-01-01'),
      d('2024-01-01T00:00:00+01:00'),
      d('2024-13-01T00:00:00Z'),
      { $date: '2024-01-01T00:00:00Z', x: 1 },
      1700000000,
    ],
  },
  date: { kind: 'datetime', ok: [d('2024-02-29T00:00:00Z'), d('2024-02-29T00:00:00.000Z')], bad: [d('2024-02-29T10:00:00Z')] },
  list: { kind: 'array', ok: [[], [1, 'a', { x: 1 }]], bad: ['a', { 0: 'a' }] },
  tags: { kind: 'array', ok: [['a', 'b']], bad: [[1], 'a'] },
  multichoice: { kind: 'array', ok: [['x', 'y']], bad: [[true]] },
  links: { kind: 'array', ok: [['svc://abc', 'svc://def']], bad: [['abc'], ['svc://a/b']] },
  json: { kind: 'object', ok: [{ a: 1 }, {}, d('2024-01-01T00:00:00Z')], bad: [[1], 'x'] },
  period: {
    kind: 'object',
    ok: [{ start: d('2024-01-01T00:00:00Z'), end: d('2024-01-02T00:00:00Z') }],
    bad: [
      { start: d('2024-01-02T00:00:00Z'), end: d('2024-01-01T00:00:00Z') },
      { start: d('2024-01-01T00:00:00Z') },
      { start: d('2024-01-01T00:00:00Z'), end: d('2024-01-02T00:00:00Z'), extra: 1 },
      { start: '2024-01-01', end: '2024-01-02' },
    ],
  },
  money: {
    kind: 'object',
    ok: [{ amount: 12.5, currency: 'EUR' }],
    bad: [{ amount: '12', currency: 'EUR' }, { amount: 1, currency: 'eur' }, { amount: 1 }, { amount: 1, currency: 'EUR', note: 'x' }],
  },
  geo: { kind: 'object', ok: [{ lat: 52.5, lon: 13.4 }], bad: [{ lat: 91, lon: 0 }, { lat: 0, lon: 181 }, { lat: 0 }, { lat: '1', lon: 2 }, { lat: 0, lon: 0, alt: 1 }] },
}

describe('value shapes per slug (unit)', () => {
  it('the table covers every slug', () => {
    expect(Object.keys(CASES).sort()).toEqual(Object.values(FORMAT_SLUGS).flat().sort())
  })
  for (const [slug, c] of Object.entries(CASES)) {
    it(slug, () => {
      for (const v of c.ok) expect(valueViolation(c.kind, slug, v), JSON.stringify(v)).toBeUndefined()
      for (const v of c.bad) expect(valueViolation(c.kind, slug, v), JSON.stringify(v)).toBeTypeOf('string')
      expect(valueViolation(c.kind, slug, null)).toBeUndefined()
    })
  }
  it('rating max comes from xFormat.config.max; array items kind is checked; unknown slugs check the kind only', () => {
    expect(valueViolation('number', 'rating', 9, { max: 10 })).toBeUndefined()
    expect(valueViolation('number', 'rating', 11, { max: 10 })).toBeTypeOf('string')
    expect(valueViolation('array', 'list', [1, 2], undefined, { kind: 'number' })).toBeUndefined()
    expect(valueViolation('array', 'list', [1, 'x'], undefined, { kind: 'number' })).toBeTypeOf('string')
    expect(valueViolation('string', 'future-slug', 'x')).toBeUndefined()
    expect(valueViolation('string', 'future-slug', 1)).toBeTypeOf('string')
  })
})

async function setup() {
  const s = await newSpace()
  const t = await s.svc.createType({ xKey: 'task' })
  const mk = async (body: Record<string, unknown>) => (await s.svc.createProperty(t.id, body)).propId
  const obj = await s.engine.createObject({ types: [t.id] })
  await s.engine.settled()
  return { ...s, typeId: t.id, mk, obj, row: () => s.engine.objectDoc(obj)! }
}

describe('POST {S}/properties/:objectId/set/:typeKey', () => {
  it('writes synced values to {typeId}.{propId} in one change; null unsets; the patch wrapper works', async () => {
    const { svc, typeId, mk, obj, row } = await setup()
    const due = await mk({ name: 'Due', kind: 'datetime' })
    const est = await mk({ name: 'Estimate', kind: 'number' })
    const res = await svc.setValues(obj, typeId, { [due]: d('2024-05-01T12:00:00Z'), [est]: 3 })
    expect(res).toMatchObject({ recordIds: [obj], changeId: expect.any(String), versionId: expect.any(String) })
    expect(row()[typeId]).toEqual({ [due]: d('2024-05-01T12:00:00Z'), [est]: 3 })
    await svc.setValues(obj, typeId, { patch: { [est]: null } })
    expect(row()[typeId]).toEqual({ [due]: d('2024-05-01T12:00:00Z') })
    await expectCode(svc.setValues(obj, typeId, {}), 'request.missing_field')
    await expectCode(svc.setValues(obj, typeId, { patch: {} }), 'request.missing_field')
  })

  it('400 property.format_violation with propId, format and reason; nothing written when one value fails', async () => {
    const { svc, typeId, mk, obj, row } = await setup()
    const mail = await mk({ name: 'Mail', kind: 'string', format: 'email' })
    const n = await mk({ name: 'N', kind: 'number' })
    await expectCode(svc.setValues(obj, typeId, { [n]: 1, [mail]: 'nope' }), 'property.format_violation', { propId: mail, format: 'email', reason: expect.any(String) })
    expect(row()[typeId]).toBeUndefined()
    // Not of the kind at all is the other code (spec Errors: property.kind_mismatch).
    await expectCode(svc.setValues(obj, typeId, { [n]: '1' }), 'property.kind_mismatch', { propId: n, kind: 'number', format: 'number', reason: expect.any(String) })
    expect(row()[typeId]).toBeUndefined()
    // Validation follows the current slug: moving text -> email changes what is accepted.
    const p = await mk({ name: 'P', kind: 'string' })
    await svc.setValues(obj, typeId, { [p]: 'free text' })
    await svc.patchProperty(typeId, p, { set: { 'xFormat.type': 'url' } })
    await expectCode(svc.setValues(obj, typeId, { [p]: 'free text' }), 'property.format_violation', { format: 'url' })
    await svc.setValues(obj, typeId, { [p]: 'https://ok.example' })
  })

  it('property.kind_mismatch: a value not of the definition kind; property.format_violation: the right kind breaking the slug', async () => {
    const { svc, typeId, mk, obj } = await setup()
    const when = await mk({ name: 'When', kind: 'datetime', format: 'date' })
    const flag = await mk({ name: 'Flag', kind: 'boolean' })
    const list = await mk({ name: 'List', kind: 'array', format: 'tags' })
    const age = await mk({ name: 'Age', kind: 'number', format: 'integer' })
    await expectCode(svc.setValues(obj, typeId, { [when]: 'yesterday' }), 'property.kind_mismatch', { propId: when, kind: 'datetime' })
    await expectCode(svc.setValues(obj, typeId, { [flag]: 1 }), 'property.kind_mismatch', { propId: flag, kind: 'boolean' })
    await expectCode(svc.setValues(obj, typeId, { [list]: { a: 1 } }), 'property.kind_mismatch', { propId: list, kind: 'array' })
    await expectCode(svc.setValues(obj, typeId, { [age]: '4' }), 'property.kind_mismatch', { propId: age, kind: 'number' })
    // the right kind, not the slug's shape (rule 3: a well-formed instant, an integer, strings in tags)
    await expectCode(svc.setValues(obj, typeId, { [when]: { $date: 'not a date' } }), 'property.format_violation', { propId: when, format: 'date' })
    await expectCode(svc.setValues(obj, typeId, { [when]: d('2024-01-01T10:00:00Z') }), 'property.format_violation', { propId: when, format: 'date' })
    await expectCode(svc.setValues(obj, typeId, { [list]: [1] }), 'property.format_violation', { propId: list, format: 'tags' })
    await expectCode(svc.setValues(obj, typeId, { [age]: 4.5 }), 'property.format_violation', { propId: age, format: 'integer' })
    await svc.setValues(obj, typeId, { [when]: d('2024-01-01T00:00:00Z'), [flag]: true, [list]: ['x'], [age]: 4 })
  })

  it('compound and relation shapes are exact; a choice value is not checked against options', async () => {
    const { svc, typeId, mk, obj, row } = await setup()
    const rel = await mk({ name: 'Owner', kind: 'string', format: 'relation' })
    const money = await mk({ name: 'Price', kind: 'object', format: 'money' })
    const period = await mk({ name: 'When', kind: 'object', format: 'period' })
    const geo = await mk({ name: 'Where', kind: 'object', format: 'geo' })
    const choice = await mk({ name: 'Status', kind: 'string', xFormat: { type: 'choice', options: { a: { name: 'A' } } } })
    await expectCode(svc.setValues(obj, typeId, { [rel]: obj }), 'property.format_violation', { propId: rel, format: 'relation' })
    await expectCode(svc.setValues(obj, typeId, { [money]: { amount: 1, currency: 'EUR', x: 1 } }), 'property.format_violation', { format: 'money' })
    await expectCode(svc.setValues(obj, typeId, { [period]: { start: d('2024-01-01T00:00:00Z') } }), 'property.format_violation', { format: 'period' })
    await expectCode(svc.setValues(obj, typeId, { [geo]: { lat: 100, lon: 0 } }), 'property.format_violation', { format: 'geo' })
    await svc.setValues(obj, typeId, {
      [rel]: `svc://${obj}`,
      [money]: { amount: 1, currency: 'EUR' },
      [period]: { start: d('2024-01-01T00:00:00Z'), end: d('2024-01-01T00:00:00Z') },
      [geo]: { lat: 1, lon: 2 },
      [choice]: 'not-an-option',
    })
    expect(row()[typeId]).toMatchObject({ [choice]: 'not-an-option', [rel]: `svc://${obj}` })
  })

  it('unknown propIds are refused (404 property.not_found); removed ones are dropped and reported', async () => {
    const { svc, typeId, mk, obj, row } = await setup()
    const a = await mk({ name: 'A', kind: 'string' })
    const b = await mk({ name: 'B', kind: 'string' })
    await expectCode(svc.setValues(obj, typeId, { [a]: 'x', nope: 1 }), 'property.not_found', { propId: 'nope', typeId })
    expect(row()[typeId]).toBeUndefined()
    await svc.setValues(obj, typeId, { [b]: 'kept' })
    await svc.deleteProperty(typeId, b)
    const res = await svc.setValues(obj, typeId, { [a]: 'x', [b]: 'late' })
    expect(res.rejections).toEqual([{ recordId: b, index: 1, code: 'property.deleted', reason: expect.any(String) }])
    expect(row()[typeId]).toEqual({ [a]: 'x', [b]: 'kept' }) // old value stays as orphan data
    const only = await svc.setValues(obj, typeId, { [b]: 'late' })
    expect(only.changeId).toBeUndefined()
    expect(only.rejections).toHaveLength(1)
  })

  it('core is the universal group: name, description, icon, tags; core.types is not a property', async () => {
    const { svc, obj, row } = await setup()
    await svc.setValues(obj, 'core', { name: 'Hello', tags: ['x', 'y'], icon: 'cid' })
    expect(row().core).toMatchObject({ name: 'Hello', tags: ['x', 'y'], icon: 'cid' })
    await expectCode(svc.setValues(obj, 'core', { tags: 'x' }), 'property.kind_mismatch', { propId: 'tags', kind: 'array', format: 'tags' })
    await expectCode(svc.setValues(obj, 'core', { types: ['x'] }), 'request.invalid_field')
    await expectCode(svc.setValues(obj, 'core', { bogus: 1 }), 'property.not_found')
  })

  it('object and type checks: 404 object.not_found, 404 type.not_found, 400 object.type_required', async () => {
    const { svc, engine, typeId, mk, obj } = await setup()
    const p = await mk({ name: 'A', kind: 'string' })
    await expectCode(svc.setValues('missing', typeId, { [p]: 'x' }), 'object.not_found')
    await expectCode(svc.setValues(obj, 'nope', { [p]: 'x' }), 'type.not_found')
    const other = await engine.createObject({ types: [] })
    await engine.settled()
    await expectCode(svc.setValues(other, typeId, { [p]: 'x' }), 'object.type_required', { objectId: other, typeId })
    await expectCode(svc.setValues(obj, typeId, 'x'), 'request.invalid_field')
  })

  it('scopes: synced values go to the row; account and local values to the scoped store, never the replica', async () => {
    const store = new MemoryScopedValueStore()
    const s = await newSpace()
    const svc = new TypesService(s.engine, { scopedValues: store })
    const t = await svc.createType({ xKey: 'task' })
    const synced = (await svc.createProperty(t.id, { name: 's', kind: 'number' })).propId
    const acc = (await svc.createProperty(t.id, { name: 'a', kind: 'boolean', scope: 'account' })).propId
    const loc = (await svc.createProperty(t.id, { name: 'l', kind: 'string', scope: 'local' })).propId
    const obj = await s.engine.createObject({ types: [t.id] })
    await s.engine.settled()
    const res = await svc.setValues(obj, t.id, { [synced]: 1, [acc]: true, [loc]: 'here' })
    expect(res.scoped).toEqual({ account: [acc], local: [loc] })
    expect(s.engine.objectDoc(obj)![t.id]).toEqual({ [synced]: 1 })
    expect(await svc.scopedValues(obj)).toEqual({ [t.id]: { [acc]: true, [loc]: 'here' } })
    expect(await store.get({ scope: 'local', spaceId: s.engine.spaceId, objectId: obj, typeKey: t.id, propId: loc })).toBe('here')
    // Scoped values are validated too, and null removes them.
    await expectCode(svc.setValues(obj, t.id, { [acc]: 'yes' }), 'property.kind_mismatch', { propId: acc, format: 'checkbox' })
    const only = await svc.setValues(obj, t.id, { [loc]: null })
    expect(only.changeId).toBeUndefined()
    expect(await svc.scopedValues(obj)).toEqual({ [t.id]: { [acc]: true } })
  })

  it('checkValues validates without writing (for object creation and bundles)', async () => {
    const { svc, typeId, mk, row } = await setup()
    const n = await mk({ name: 'N', kind: 'number' })
    const gone = await mk({ name: 'G', kind: 'string' })
    await svc.deleteProperty(typeId, gone)
    expect(await svc.checkValues(typeId, { [n]: 1, [gone]: 'x' })).toEqual({ dropped: [gone] })
    await expectCode(svc.checkValues(typeId, { [n]: 'x' }), 'property.kind_mismatch', { propId: n })
    await expectCode(svc.checkValues(typeId, { nope: 1 }), 'property.not_found')
    await expectCode(svc.checkValues('nope', { [n]: 1 }), 'type.not_found')
    expect(await svc.checkValues('core', { name: 'x' })).toEqual({ dropped: [] })
    expect(row()[typeId]).toBeUndefined()
  })
})
