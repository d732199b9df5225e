import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { main } from '../../server/cli/dispatch.ts'
import { memoryIO } from '../server/process.ts'
import { bootApp, listen, newSpace, type Booted } from './helpers.ts'

/** `svc events publish|watch` against a real app. */
let b: Booted
let url: string
beforeAll(async () => {
  b = await bootApp()
  url = await listen(b.app)
}, 30_000)
afterAll(() => b.close())

async function svc(...args: string[]) {
  const m = memoryIO('', { SVC_URL: url })
  const code = await main(args, m.io)
  return { code, out: m.out(), err: m.err() }
}

async function until(pred: () => boolean, ms = 5000) {
  const end = Date.now() + ms
  while (!pred()) {
    if (Date.now() > end) throw new Error('timed out')
    await new Promise((r) => setTimeout(r, 20))
  }
}

describe('svc events', () => {
  it('publish prints the subscribers matched; usage and API errors exit 1', async () => {
    const r = await svc('events', 'publish', '--type', 'ui.open_space', '--scope', 'device', '--data', '{"spaceId":"x"}')
    expect(r.code).toBe(0)
    expect(JSON.parse(r.out)).toEqual({ subscribers: 0 })
    expect((await svc('events', 'publish', '--type', 'a')).code).toBe(1)
    expect((await svc('events', 'publish', '--type', 'a', '--scope', 'device', '--data', 'not json')).code).toBe(1)
    const bad = await svc('events', 'publish', '--type', 'A', '--scope', 'device')
    expect(bad.code).toBe(1)
    expect(bad.err).toContain('400 request.invalid_field')
    expect((await svc('events', 'frob')).code).toBe(1)
    const down = memoryIO('', { SVC_URL: 'http://127.0.0.1:1' })
    expect(await main(['events', 'publish', '--type', 'a', '--scope', 'device'], down.io)).toBe(3)
  })

  it('watch prints one JSON line per matching event and exits 0 when the server closes the stream', async () => {
    const space = await newSpace(b.app, 'cli events')
    const m = memoryIO('', { SVC_URL: url })
    const watching = main(['events', 'watch', '--type', 'ui.*', '--space', space], m.io)
    // The stream is up once a publish counts it.
    let matched = 0
    const end = Date.now() + 5000
    while (matched === 0 && Date.now() < end) {
      const r = await svc('events', 'publish', '--type', 'ui.open_object', '--scope', 'space', '--space', space, '--target', 'o1')
      matched = JSON.parse(r.out).subscribers
      if (matched === 0) await new Promise((r) => setTimeout(r, 50))
    }
    expect(matched).toBe(1)
    await svc('events', 'publish', '--type', 'other', '--scope', 'device')
    await until(() => m.out().trim().split('\n').filter(Boolean).length >= 1)
    const lines = m
      .out()
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l))
    expect(lines[0]).toMatchObject({ type: 'ui.open_object', scope: 'space', spaceId: space, target: 'o1', sender: { self: true } })
    b.app.sse.closeAll('server_shutdown')
    expect(await watching).toBe(0)
    expect(m.out().trim().split('\n')).toHaveLength(1)
    // A refused subscription is a 4xx: exit 1 before any stream.
    const refused = memoryIO('', { SVC_URL: url })
    expect(await main(['events', 'watch', '--scope', 'space'], refused.io)).toBe(1)
    expect(refused.err()).toContain('request.missing_field')
  })
})
