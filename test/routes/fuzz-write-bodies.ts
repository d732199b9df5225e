import fc from 'fast-check'

/**
 * Request bodies for fuzz.test.ts's "generated requests" on the write routes: bad and half-good
 * bodies (modify ops with paths like `a..b` or `__proto__`, filters, projections, parts and
 * datasets, initial properties), naming the test's object and type where a real id is needed.
 */
export function writeBodies(obj: string, typeId: string) {
  const { keys, val, path, op, filter } = writeParts(obj, typeId)
  const body = fc.oneof(
    fc.dictionary(keys, val, { maxKeys: 5 }),
    fc.record({
      objectId: fc.constantFrom(obj, 'x'),
      dataset: fc.constantFrom('d', 'e'),
      records: fc.array(fc.record({ id: fc.string({ minLength: 1, maxLength: 5 }), ops: fc.array(op, { maxLength: 3 }) }), { maxLength: 3 }),
    }),
    fc.record(
      {
        objectId: fc.constant(obj),
        dataset: fc.constant('d'),
        filter,
        sort: fc.array(path, { maxLength: 2 }),
        limit: fc.integer({ min: 0, max: 20 }),
        projection: fc.dictionary(path, fc.constantFrom(0, 1, true)),
      },
      { requiredKeys: [] },
    ),
    fc.record({ objectId: fc.constant(obj), dataset: fc.constant(`${typeId}_items`), records: fc.array(fc.record({ id: val, fields: val }), { maxLength: 3 }) }),
    fc.record(
      {
        types: fc.array(fc.constantFrom(typeId, 'core', 'page', 'x'), { maxLength: 2 }),
        initialProperties: fc.dictionary(fc.constantFrom('core', typeId, 'x'), fc.dictionary(fc.constantFrom('name', 'tags', 'description', 'icon', 'x'), val)),
      },
      { requiredKeys: [] },
    ),
    fc.record({ set: fc.dictionary(path, val, { maxKeys: 3 }), unset: fc.array(path, { maxLength: 2 }) }, { requiredKeys: [] }),
    fc.record(
      {
        key: fc.constantFrom('items', 'k', '1x'),
        datasets: fc.array(fc.dictionary(fc.constantFrom('key', 'module', 'shared', 'idRule', 'idPattern', 'idMaxLen', 'fields', 'dynamic'), val, { maxKeys: 4 }), {
          maxLength: 2,
        }),
      },
      { requiredKeys: [] },
    ),
  )
  return body
}

/** The parts the bodies are made of: body keys, any value (real ids among them), op paths, ops and filters. */
function writeParts(obj: string, typeId: string) {
  const keys = fc.constantFrom(
    'objectId',
    'dataset',
    'filter',
    'sort',
    'limit',
    'offset',
    'projection',
    'records',
    'name',
    'set',
    'unset',
    'types',
    'initialProperties',
    'xKey',
    'kind',
    'key',
    'datasets',
    'recordIds',
    'pageSize',
    'meta',
    'xFormat',
    'fields',
    'idRule',
    'module',
    'core',
    'ops',
    'includeTotal',
    'scope',
    'traceIds',
    'constructor',
    '$where',
  )
  const val = fc.letrec((tie) => ({
    v: fc.oneof(
      { depthSize: 'small' },
      fc.constant(null),
      fc.boolean(),
      fc.integer(),
      fc.double(),
      fc.string(),
      fc.constantFrom(obj, typeId, 'svc://x', '$gt', '', 'None'),
      fc.array(tie('v'), { maxLength: 3 }),
      fc.dictionary(fc.oneof(keys, fc.string()), tie('v'), { maxKeys: 4 }),
    ),
  })).v
  const path = fc.oneof(fc.constantFrom('', 'a', 'a.b', 'a.0', '.', 'a..b', '__proto__', 'a.__proto__.b', '$x', 'core.name', '_ver.id', 'id'), fc.string({ maxLength: 6 }))
  const op = fc.record({ type: fc.constantFrom('$set', '$unset', '$inc', '$addToSet', '$pull'), path, value: val }, { requiredKeys: ['type', 'path'] })
  const filter = fc.dictionary(
    fc.oneof(path, fc.constantFrom('$and', '$or', '$nor', '$text', '$not')),
    fc.oneof(
      val,
      fc.dictionary(fc.constantFrom('$eq', '$ne', '$gt', '$in', '$nin', '$exists', '$text', '$size', '$all', '$elemMatch', '$not', '$date', '$regex'), val, { maxKeys: 2 }),
    ),
    { maxKeys: 3 },
  )
  return { keys, val, path, op, filter }
}
