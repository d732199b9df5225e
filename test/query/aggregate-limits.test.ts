import { describe, expect, it } from 'vitest'
import { AGGREGATE_FIELDS, compileAggregate, HARD_MEMORY_LIMIT_BYTES, InMemoryIndex, MAX_STAGES, parseAggregateBody, runAggregate } from '../../sync/query/index.ts'
import { expectSvcError, rec } from './helpers.ts'

const docs = Array.from({ length: 20 }, (_, i) => rec(i, { g: 'g' + (i % 5), v: i, s: 'x'.repeat(i) }))

const run = (pipeline: unknown, limits: Record<string, unknown> = {}, source: Iterable<object> = docs) => runAggregate(source, { pipeline, ...limits })

describe('aggregate limits', () => {
  it('groupLimit: more distinct groups than allowed is limit_exceeded (group)', () => {
    const pipeline = [{ $match: {} }, { $group: { _id: '$g', n: { $count: {} } } }]
    expect(run(pipeline, { groupLimit: 5 })).toMatchObject({ records: { length: 5 } })
    expectSvcError(() => run(pipeline, { groupLimit: 4 }), 'aggregate.limit_exceeded', { limit: 'group', max: 4, stage: 1 })
  })

  it('accumArrayLimit: a $push or $addToSet array longer than allowed is limit_exceeded (accumArray)', () => {
    const push = [{ $group: { _id: '$g', vs: { $push: '$v' } } }]
    expect(run(push, { accumArrayLimit: 4 })).toMatchObject({ records: { length: 5 } })
    expectSvcError(() => run(push, { accumArrayLimit: 3 }), 'aggregate.limit_exceeded', { limit: 'accumArray', max: 3, stage: 0, field: 'vs' })
    // $addToSet counts distinct elements only.
    const set = [{ $group: { _id: null, gs: { $addToSet: '$g' } } }]
    expect(run(set, { accumArrayLimit: 5 })).toMatchObject({ records: [{ gs: ['g0', 'g1', 'g2', 'g3', 'g4'] }] })
    expectSvcError(() => run(set, { accumArrayLimit: 4 }), 'aggregate.limit_exceeded', { limit: 'accumArray', max: 4, field: 'gs', accumulator: '$addToSet' })
  })

  it('memoryLimitBytes bounds what $group holds', () => {
    const pipeline = [{ $group: { _id: '$v', docs: { $push: '$$ROOT' } } }]
    expect(run(pipeline, { memoryLimitBytes: 1_000_000 })).toMatchObject({ records: { length: 20 } })
    expectSvcError(() => run(pipeline, { memoryLimitBytes: 2000 }), 'aggregate.limit_exceeded', { limit: 'memory', max: 2000, stage: 0 })
  })

  it('memoryLimitBytes bounds what $sort holds; a $sort + $limit heap holds only k records', () => {
    expectSvcError(() => run([{ $sort: { v: -1 } }], { memoryLimitBytes: 2000 }), 'aggregate.limit_exceeded', { limit: 'memory', max: 2000, stage: 0 })
    const top = run([{ $sort: { v: -1 } }, { $limit: 2 }], { memoryLimitBytes: 2000 })
    expect(top).toMatchObject({ records: [{ v: 19 }, { v: 18 }] })
  })

  it('streaming stages hold nothing: $match/$project/$unwind/$limit pass under a tiny memory limit', () => {
    const pipeline = [{ $match: { v: { $gte: 3 } } }, { $project: { v: 1 } }, { $unwind: '$v' }, { $skip: 1 }, { $limit: 5 }]
    expect(run(pipeline, { memoryLimitBytes: 1 })).toMatchObject({ records: { length: 5 } })
  })

  it('the hard memory cap applies without memoryLimitBytes (and clamps larger values)', () => {
    const big = 'y'.repeat(200_000)
    const many = Array.from({ length: 1000 }, (_, i) => ({ i, big }))
    const e = expectSvcError(() => run([{ $sort: { i: -1 } }], {}, many), 'aggregate.limit_exceeded', { limit: 'memory', max: HARD_MEMORY_LIMIT_BYTES })
    expect(e.details?.hardCap).toBe(true)
    expectSvcError(() => run([{ $sort: { i: -1 } }], { memoryLimitBytes: 2 ** 40 }, many), 'aggregate.limit_exceeded', { limit: 'memory', max: HARD_MEMORY_LIMIT_BYTES })
  })

  it('limits must be positive integers (request.invalid_field)', () => {
    for (const field of ['groupLimit', 'accumArrayLimit', 'memoryLimitBytes']) {
      for (const bad of [0, -1, 1.5, '10', true]) expectSvcError(() => run([], { [field]: bad }), 'request.invalid_field', { field })
    }
    expect(run([], { groupLimit: null })).toMatchObject({ records: { length: 20 } })
  })
})

describe('aggregate bad pipelines', () => {
  const bad = (pipeline: unknown, details: Record<string, unknown>) => expectSvcError(() => compileAggregate(pipeline), 'aggregate.bad_pipeline', details)

  it('the pipeline must be an array of at most 64 stages', () => {
    bad({ $match: {} }, { stage: null })
    bad(null, { stage: null })
    bad('[]', { stage: null })
    expect(compileAggregate(Array.from({ length: MAX_STAGES }, () => ({ $skip: 0 }))).stages).toHaveLength(64)
    bad(
      Array.from({ length: MAX_STAGES + 1 }, () => ({ $skip: 0 })),
      { stage: 64, max: 64 },
    )
  })

  it('unknown and malformed stages name their index', () => {
    bad([{ $match: {} }, { $lookup: {} }], { stage: 1, op: '$lookup' })
    bad([{ $match: {}, $limit: 1 }], { stage: 0 })
    bad([{}], { stage: 0 })
    bad([42], { stage: 0 })
    bad([{ $skip: 1 }, { $limit: -1 }], { stage: 1, op: '$limit' })
    bad([{ $limit: 1.5 }], { stage: 0, op: '$limit' })
    bad([{ $skip: '1' }], { stage: 0, op: '$skip' })
    bad([{ $count: '' }], { stage: 0, op: '$count' })
    bad([{ $count: 'a.b' }], { stage: 0, op: '$count' })
    bad([{ $count: '$n' }], { stage: 0, op: '$count' })
    bad([{ $count: 3 }], { stage: 0, op: '$count' })
  })

  it('$match: a bad filter is wrapped with its cause', () => {
    bad([{ $match: { a: { $regex: 'x' } } }], { stage: 0, op: '$match', cause: { code: 'filter.unknown_operator', details: { operator: '$regex', path: 'a' } } })
    bad([{ $limit: 1 }, { $match: { $and: {} } }], { stage: 1, op: '$match', cause: { code: 'filter.invalid' } })
    bad([{ $match: [] }], { stage: 0, op: '$match' })
    bad([{ $match: null }], { stage: 0, op: '$match' })
  })

  it('$group: _id required, unknown accumulators, malformed fields and expressions', () => {
    bad([{ $group: { n: { $sum: 1 } } }], { stage: 0, op: '$group', field: '_id' })
    bad([{ $group: [] }], { stage: 0, op: '$group' })
    bad([{ $group: { _id: null, n: { $median: '$v' } } }], { stage: 0, op: '$group', field: 'n', accumulator: '$median' })
    bad([{ $group: { _id: null, n: { $toString: '$v' } } }], { stage: 0, accumulator: '$toString' })
    bad([{ $group: { _id: null, n: { $sum: 1, $avg: 1 } } }], { stage: 0, field: 'n' })
    bad([{ $group: { _id: null, n: 5 } }], { stage: 0, field: 'n' })
    bad([{ $group: { _id: null, 'a.b': { $sum: 1 } } }], { stage: 0, field: 'a.b' })
    bad([{ $group: { _id: null, $n: { $sum: 1 } } }], { stage: 0, field: '$n' })
    bad([{ $group: { _id: null, n: { $count: '$v' } } }], { stage: 0, field: 'n', accumulator: '$count' })
    bad([{ $group: { _id: { $add: ['$a', 1] } } }], { stage: 0, field: '_id', operator: '$add' })
    bad([{ $group: { _id: '$$NOW' } }], { stage: 0, operator: '$$NOW' })
    bad([{ $group: { _id: '$a..b' } }], { stage: 0, field: '_id' })
    bad([{ $group: { _id: { 'a.b': '$a' } } }], { stage: 0, field: 'a.b' })
    let deep: unknown = '$v'
    for (let i = 0; i < 40; i++) deep = { k: deep }
    bad([{ $group: { _id: deep } }], { stage: 0, max: 32 })
  })

  it('$sort, $project, $unwind', () => {
    bad([{ $sort: { a: 2 } }], { stage: 0, op: '$sort', field: 'a' })
    bad([{ $sort: {} }], { stage: 0, op: '$sort' })
    bad([{ $sort: 'a' }], { stage: 0, op: '$sort' })
    bad([{ $sort: ['a..b'] }], { stage: 0, op: '$sort', cause: { code: 'request.invalid_field' } })
    bad([{ $sort: Array.from({ length: 9 }, (_, i) => 'f' + i) }], { stage: 0, op: '$sort' })
    bad([{ $project: {} }], { stage: 0, op: '$project' })
    bad([{ $project: { a: 1, b: 0 } }], { stage: 0, op: '$project' })
    bad([{ $project: { a: 0, b: '$c' } }], { stage: 0, op: '$project' })
    bad([{ $project: { a: 1, 'a.b': '$c' } }], { stage: 0, op: '$project', field: 'a.b' })
    bad([{ $project: { a: { $concat: ['x'] } } }], { stage: 0, op: '$project', operator: '$concat' })
    bad([{ $unwind: 'tags' }], { stage: 0, op: '$unwind' })
    bad([{ $unwind: { path: '$t', extra: 1 } }], { stage: 0, op: '$unwind', field: 'extra' })
    bad([{ $unwind: { path: '$t', preserveNullAndEmptyArrays: 'yes' } }], { stage: 0, op: '$unwind' })
    bad([{ $unwind: { preserveNullAndEmptyArrays: true } }], { stage: 0, op: '$unwind' })
  })
})

describe('aggregate explain', () => {
  it('returns the plan instead of records', () => {
    const out = runAggregate(docs, {
      pipeline: [
        { $match: { g: 'g1' } },
        { $unwind: '$v' },
        { $group: { _id: '$g', n: { $sum: 1 }, vs: { $push: '$v' } } },
        { $sort: { n: -1 } },
        { $skip: 1 },
        { $limit: 2 },
        { $project: { n: 1 } },
        { $count: 'groups' },
      ],
      groupLimit: 10,
      memoryLimitBytes: 1 << 20,
      explain: true,
    })
    expect('plan' in out).toBe(true)
    if (!('plan' in out)) return
    expect(out.plan.stages.map((s) => [s.stage, s.op, s.blocking])).toEqual([
      [0, '$match', false],
      [1, '$unwind', false],
      [2, '$group', true],
      [3, '$sort', true],
      [4, '$skip', false],
      [5, '$limit', false],
      [6, '$project', false],
      [7, '$count', true],
    ])
    expect(out.plan.stages[0]).toMatchObject({ filter: { g: 'g1' }, indexable: ['g'] })
    expect(out.plan.stages[2]).toMatchObject({
      id: '$g',
      key: 'expression',
      accumulators: [
        { field: 'n', op: '$sum', arg: 1 },
        { field: 'vs', op: '$push', arg: '$v' },
      ],
    })
    expect(out.plan.stages[3]).toMatchObject({ fields: [{ path: 'n', desc: true }], topK: 3 })
    expect(out.plan.stages[6]).toMatchObject({ mode: 'include', include: ['n'] })
    expect(out.plan.limits).toEqual({ groupLimit: 10, accumArrayLimit: null, memoryLimitBytes: 1 << 20, hardMemoryLimitBytes: HARD_MEMORY_LIMIT_BYTES })
    // A plain array cannot narrow the scan.
    expect(out.plan.index).toEqual({ stage: 0, paths: ['g'], used: false })
  })

  it('reports index use of a leading $match over a QuerySource', () => {
    const ix = new InMemoryIndex(['g'], docs)
    const c = compileAggregate([{ $match: { g: { $in: ['g1', 'g2'] } } }, { $count: 'n' }])
    expect(c.explain(ix).index).toEqual({ stage: 0, paths: ['g'], used: true, exact: true, candidates: 8, size: 20 })
    expect(c.run(ix)).toEqual([{ n: 8 }])
    expect(compileAggregate([{ $match: { v: 3 } }]).explain(ix).index).toEqual({ stage: 0, paths: ['v'], used: false, size: 20 })
    expect(compileAggregate([{ $group: { _id: null } }]).explain(ix).index).toBeNull()
  })

  it('clamps memoryLimitBytes to the hard cap', () => {
    expect(compileAggregate([], { memoryLimitBytes: 2 ** 40 }).explain().limits.memoryLimitBytes).toBe(HARD_MEMORY_LIMIT_BYTES)
  })
})

describe('parseAggregateBody', () => {
  it('validates fields, ignores unknown keys and compiles the pipeline', () => {
    const body = parseAggregateBody({ pipeline: [{ $count: 'n' }], groupLimit: 3, explain: null, extra: 1 })
    expect(body.explain).toBe(false)
    expect(body.limits).toEqual({ groupLimit: 3 })
    expect(body.aggregate.run(docs)).toEqual([{ n: 20 }])
    expect(AGGREGATE_FIELDS).toEqual(['pipeline', 'groupLimit', 'accumArrayLimit', 'memoryLimitBytes', 'explain'])
  })

  it('data plane: objectId and dataset', () => {
    const b = parseAggregateBody({ objectId: 'o1', dataset: 'tasks', pipeline: [] }, { perObject: true, requireDataset: true })
    expect(b).toMatchObject({ objectId: 'o1', dataset: 'tasks' })
    expectSvcError(() => parseAggregateBody({ pipeline: [] }, { perObject: true }), 'object.id_required')
    expectSvcError(() => parseAggregateBody({ objectId: 'null', pipeline: [] }, { perObject: true }), 'object.id_required')
    expectSvcError(() => parseAggregateBody({ objectId: 'o', pipeline: [] }, { perObject: true, requireDataset: true }), 'request.missing_field', { field: 'dataset' })
    expectSvcError(() => parseAggregateBody({ objectId: 3, pipeline: [] }), 'request.invalid_field', { field: 'objectId' })
  })

  it('errors', () => {
    expectSvcError(() => parseAggregateBody([]), 'request.schema')
    expectSvcError(() => parseAggregateBody({}), 'aggregate.bad_pipeline', { stage: null })
    expectSvcError(() => parseAggregateBody({ pipeline: {} }), 'aggregate.bad_pipeline', { stage: null })
    expectSvcError(() => parseAggregateBody({ pipeline: [], explain: 'yes' }), 'request.invalid_field', { field: 'explain' })
    expectSvcError(() => parseAggregateBody({ pipeline: [], memoryLimitBytes: -5 }), 'request.invalid_field', { field: 'memoryLimitBytes' })
  })
})
