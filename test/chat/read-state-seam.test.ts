import { describe, expect, it } from 'vitest'
import { compileQuery, runQuery } from '../../sync/query/index.ts'
import { defineModule } from '../../sync/space/module.ts'
import { SpaceEngine, type SpaceChange } from '../../sync/space/space-engine.ts'
import { setPropertyValues } from '../../sync/space/types/values.ts'
import { deps, keyFor } from '../helpers.ts'
import { expectCode } from '../space/helpers.ts'

/**
 * The overlay and row-group seam chat read state uses, exercised by a module declared in this
 * file alone: nothing in the space layer names chat.
 */
class Stars {
  starred = new Set<string>()
  constructor(readonly space: SpaceEngine) {}
  async star(objectId: string, id: string) {
    this.starred.add(id)
    await this.space.announceOverlay({
      records: new Map([[objectId, new Map([['notes', new Map([[id, [{ type: '$set' as const, path: 'starred', value: true }]]])]])]]),
      rows: new Map([[objectId, [{ type: '$set' as const, path: 'stars.count', value: this.starred.size }]]]),
    })
  }
}

const starsModule = defineModule({
  name: 'stars',
  service: ({ space }) => new Stars(space),
  overlay: {
    records: (svc, _objectId, dataset, docs) => (dataset === 'notes' ? docs.map((d) => (svc.starred.has(d.id) ? { ...d, starred: true } : d)) : docs),
    row: (svc, _objectId, doc) => (doc.core && (doc.core as { name?: string }).name === 'board' ? { ...doc, stars: { count: svc.starred.size } } : doc),
  },
  rowGroups: {
    stars: {
      fields: { count: { scope: 'engine' }, color: { scope: 'account', check: (v) => (typeof v === 'string' ? undefined : 'a string') } },
      accepts: (_svc, _id, row) => (row.core as { name?: string }).name === 'board',
    },
  },
})

describe('the module overlay seam', () => {
  it('record and row overlays reach filters, sorts and change events; row groups refuse engine fields', async () => {
    const space = await SpaceEngine.create(await deps(1), keyFor(1), { modules: [starsModule] })
    const board = await space.createObject({ initialProperties: { core: { name: 'board' } } })
    const other = await space.createObject({ initialProperties: { core: { name: 'other' } } })
    await space.write(board, [
      { op: 'set', ds: 'notes', id: 'n1', path: 'text', value: 'one' },
      { op: 'set', ds: 'notes', id: 'n2', path: 'text', value: 'two' },
    ])
    expect(space.objectDoc(board)?.stars).toEqual({ count: 0 })
    const heard: SpaceChange[] = []
    space.events.on('change', (c) => heard.push(c))
    await space.services.of(starsModule).star(board, 'n2')
    const docs = await space.datasetDocs(board, 'notes')
    expect(runQuery(docs, compileQuery({ filter: { starred: true } })).records.map((d) => d.id)).toEqual(['n2'])
    expect((await space.recordDoc(board, 'notes', 'n2'))?.starred).toBe(true)
    expect(runQuery(space.objectSource(), compileQuery({ sort: ['-stars.count'], filter: { id: { $in: [board, other] } } })).records.map((d) => d.id)).toEqual([board, other])
    expect(heard).toHaveLength(1)
    expect(heard[0].records.get(board)?.get('notes')?.get('n2')).toEqual([{ type: '$set', path: 'starred', value: true }])
    expect(heard[0].rowOps.get(board)).toEqual([{ type: '$set', path: 'stars.count', value: 1 }])
    const store = space.services.types.scoped
    await expectCode(setPropertyValues(space, store, board, 'stars', { count: 3 }), 'property.immutable', { path: 'stars.count' })
    await expectCode(setPropertyValues(space, store, board, 'stars', { color: 3 }), 'property.format_violation')
    await expectCode(setPropertyValues(space, store, other, 'stars', { color: 'red' }), 'object.type_required')
    expect(await setPropertyValues(space, store, board, 'stars', { color: 'red' })).toMatchObject({ scoped: { account: ['color'] } })
    expect(await space.services.types.scopedValues(board)).toEqual({ stars: { color: 'red' } })
  })
})
