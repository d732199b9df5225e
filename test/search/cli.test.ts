import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { main } from '../../server/cli/dispatch.ts'
import { memoryIO } from '../server/process.ts'
import { bootApp, call, listen, newObject, newSpace, type Booted } from '../routes/helpers.ts'

let b: Booted
let url: string
beforeAll(async () => {
  b = await bootApp()
  url = await listen(b.app)
})
afterAll(() => b.close())

async function svc(...args: string[]) {
  const m = memoryIO('', { SVC_URL: url })
  const code = await main(args, m.io)
  return { code, out: m.out(), err: m.err(), json: () => JSON.parse(m.out()) }
}

describe('svc search', () => {
  it('searches a space; bad mode and scope exit 1 with the spec code; usage errors print the usage', async () => {
    const space = await newSpace(b.app, 'CLI search')
    const obj = await newObject(b.app, space, { initialProperties: { core: { name: 'Kilimanjaro expedition' } } })
    expect((await call(b.app, 'GET', `/v1/spaces/${space}`)).statusCode).toBe(200)
    const found = await svc('search', space, 'kilimanjaro', 'exped', '--mode', 'fts', '--scope', 'basic', '--limit', '5')
    expect(found.code).toBe(0)
    expect(found.json()).toMatchObject({ mode: 'fts', vectorStatus: 'disabled', hits: [{ objectId: obj, scope: 'basic' }] })
    const hybrid = await svc('search', space, 'kilimanjaro')
    expect(hybrid.json().mode).toBe('fts')
    const badMode = await svc('search', space, 'x', '--mode', 'semantic')
    expect(badMode.code).toBe(1)
    expect(badMode.err).toContain('search.bad_mode')
    expect((await svc('search', space, 'x', '--scope', 'Nope')).err).toContain('search.bad_scope')
    const usage = await svc('search', space)
    expect(usage.code).toBe(1)
    expect(usage.err).toContain('usage: svc search')
  })
})
