import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { main } from '../../server/cli/dispatch.ts'
import { streamFrames } from '../../server/cli/commands/subscribe.ts'
import { memoryIO } from '../server/process.ts'
import { bootApp, call, listen, newObject, ok, type Booted } from './helpers.ts'

let b: Booted
let url: string
beforeAll(async () => {
  b = await bootApp()
  url = await listen(b.app)
})
afterAll(() => b.close())

async function svc(...args: string[]) {
  const m = memoryIO('', { SVC_URL: url })
  // --json: these assertions read the API's JSON (test/cli/ covers the tables).
  const code = await main([...args, '--json'], m.io)
  return { code, out: m.out(), err: m.err(), json: () => JSON.parse(m.out()) }
}

describe('svc data commands', () => {
  it('spaces list/create/get/delete, with the exit codes of the spec', async () => {
    const created = await svc('spaces', 'create', 'CLI space', '--description', 'from the cli')
    expect(created.code).toBe(0)
    const space = created.json()
    expect(space).toMatchObject({ name: 'CLI space', description: 'from the cli', status: 'active' })
    const list = await svc('spaces')
    expect(list.code).toBe(0)
    expect(list.json().map((s: { id: string }) => s.id)).toContain(space.id)
    expect((await svc('spaces', 'get', space.id)).json().id).toBe(space.id)
    expect(await svc('spaces', 'delete', space.id)).toMatchObject({ code: 0, out: '' })
    expect((await svc('spaces', 'list', '--status', 'deleted')).json().map((s: { id: string }) => s.id)).toContain(space.id)
    const missing = await svc('spaces', 'get', 'nope')
    expect(missing.code).toBe(1)
    expect(missing.err).toContain('404 space.not_found')
    expect((await svc('spaces', 'frobnicate')).code).toBe(1)
    const down = memoryIO('', { SVC_URL: 'http://127.0.0.1:1' })
    expect(await main(['spaces'], down.io)).toBe(3)
  })

  it('objects create/query, query, modify', async () => {
    const space = (await svc('spaces', 'create', 'data')).json().id as string
    const made = await svc('objects', 'create', space, '--name', 'Note', '--props', '{"core":{"tags":["cli"]}}')
    expect(made.code).toBe(0)
    const { objectId } = made.json()
    const found = await svc('objects', 'query', space, '--filter', '{"core.tags":"cli"}', '--limit', '5')
    expect(found.json().records.map((r: { id: string; core: { name: string } }) => [r.id, r.core.name])).toEqual([[objectId, 'Note']])
    expect((await svc('objects', 'query', space, '--filter', 'not json')).code).toBe(1)
    expect((await svc('objects', 'query', space, '--filter', '{"a":{"$bogus":1}}')).err).toContain('filter.unknown_operator')

    const w = await svc('modify', space, objectId, 'tasks', '--record', 't1', '--set', 'title=Buy milk', '--set', 'n=3', '--set', 'meta={"a":true}')
    expect(w.code).toBe(0)
    expect(w.json()).toMatchObject({ recordIds: ['t1'], changeId: expect.any(String) })
    await svc('modify', space, objectId, 'tasks', '--record', 't1', '--unset', 'meta')
    const q = await svc('query', space, objectId, 'tasks', '--filter', '{"n":{"$gte":3}}', '--total')
    expect(q.json()).toMatchObject({ records: [{ id: 't1', title: 'Buy milk', n: 3 }], total: 1, hasNext: false })
    expect(q.json().records[0].meta).toBeUndefined()
    expect((await svc('modify', space, objectId, 'tasks', '--record', 't1')).code).toBe(1)
    // --local writes device-local fields only: `tasks` declares none, so the op comes back rejected and nothing is written.
    const local = await svc('modify', space, objectId, 'tasks', '--record', 't1', '--set', 'title=here only', '--local')
    expect(local.json()).toMatchObject({ changeId: '', recordIds: [], rejections: [{ recordId: 't1', index: 0, code: 'upsert.rejected' }] })
    // A field declared scope local is written and read back merged.
    const S = `/v1/spaces/${space}`
    const typeId = (await ok(call(b.app, 'POST', `${S}/types`, { xKey: 'cli-local' }), 201)).id as string
    const part = await ok(call(b.app, 'POST', `${S}/types/${typeId}/parts`, { key: 'rows', datasets: [{ fields: { title: {}, starred: { scope: 'local' } } }] }), 201)
    const ds = part.datasets[0].collection as string
    const typed = await newObject(b.app, space, { types: [typeId] })
    await svc('modify', space, typed, ds, '--record', 'r', '--set', 'title=T')
    expect((await svc('modify', space, typed, ds, '--record', 'r', '--set', 'starred=true', '--local')).json()).toEqual({
      versionId: expect.any(String),
      changeId: '',
      recordIds: ['r'],
    })
    expect((await svc('query', space, typed, ds)).json().records).toEqual([{ id: 'r', title: 'T', starred: true, _ver: { id: expect.any(String) } }])
    expect((await svc('query', space, 'nope', 'tasks')).code).toBe(1)
  })

  it('subscribe prints ready, snapshot and changes frames as JSON lines until stopped', async () => {
    const space = (await svc('spaces', 'create', 'live')).json().id as string
    const m = memoryIO('', { SVC_URL: url })
    const ac = new AbortController()
    const done = streamFrames({ url, io: m.io }, `/v1/spaces/${space}/objects/query/subscribe`, { limit: 10, filter: { 'core.name': 'watched' } }, ac.signal)
    const lines = () =>
      m
        .out()
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l) as { event: string; data: any })
    const until = async (pred: () => boolean) => {
      for (let i = 0; i < 200 && !pred(); i++) await new Promise((r) => setTimeout(r, 25))
      expect(pred()).toBe(true)
    }
    await until(() => lines().some((l) => l.event === 'snapshot'))
    await svc('objects', 'create', space, '--name', 'watched')
    await until(() => lines().some((l) => l.event === 'changes'))
    ac.abort()
    expect(await done).toBe(0)
    expect(lines().map((l) => l.event)).toEqual(['ready', 'snapshot', 'changes'])
    expect(lines()[2].data[0].added[0].doc.core.name).toBe('watched')

    const bad = await svc('subscribe', space, '--object', 'nope', '--dataset', 'd')
    expect(bad.code).toBe(1)
    expect(bad.err).toContain('object.not_found')
    expect((await svc('subscribe', space, '--object', 'x')).code).toBe(1)
  })
})
