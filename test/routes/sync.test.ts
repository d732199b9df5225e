import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { bootApp, call, expectError, listen, ok, openSse, type Booted, type Frame } from './helpers.ts'
import { main } from '../../server/cli/dispatch.ts'
import { memoryIO } from '../server/process.ts'

let b: Booted
let spaceId: string
let objectId: string
beforeAll(async () => {
  b = await bootApp()
  spaceId = (await ok(call(b.app, 'POST', '/v1/spaces', { name: 'S' }), 201)).id
  objectId = (await ok(call(b.app, 'POST', `/v1/spaces/${spaceId}/objects`, {}), 201)).objectId
})
afterAll(async () => b.close())
let listening: Promise<string> | undefined
const baseUrl = () => (listening ??= listen(b.app))

describe('debug, sync status, processes, devices (P2P off)', () => {
  it('p2p snapshot, per-space counters and the object debug view', async () => {
    const p2p = await ok(call(b.app, 'GET', '/v1/debug/p2p'))
    expect(p2p).toMatchObject({ listen: [], peers: [], discovered: [], mdns: false })
    expect(p2p.peerId).toMatch(/^[1-9A-HJ-NP-Za-km-z]+$/)
    expect(await ok(call(b.app, 'GET', `/v1/spaces/${spaceId}/debug`))).toEqual({ spaceId, peers: [] })
    const obj = await ok(call(b.app, 'GET', `/v1/spaces/${spaceId}/debug/objects/${objectId}`))
    expect(obj).toMatchObject({ objectId, syncState: 'offline', headsCount: 1, branchCount: 0, treeLen: 2, pending: [objectId] })
    expectError(await call(b.app, 'GET', `/v1/spaces/${spaceId}/debug/objects/nope`), 404, 'object.not_found')
    expectError(await call(b.app, 'GET', `/v1/spaces/nope/debug`), 404, 'space.not_found')
  })

  it('sync-status snapshots; the peers variant answers 501; processes list', async () => {
    const all = await ok(call(b.app, 'GET', '/v1/sync-status'))
    expect(all.spaces.map((s: any) => s.spaceId)).toContain(spaceId)
    expect(await ok(call(b.app, 'GET', `/v1/spaces/${spaceId}/sync-status`))).toMatchObject({ spaceId, state: 'offline', peers: 0 })
    expect(await ok(call(b.app, 'GET', `/v1/spaces/${spaceId}/sync-status/objects/${objectId}`))).toMatchObject({ objectId, state: 'offline' })
    expectError(await call(b.app, 'GET', '/v1/sync-status/peers'), 501, 'sdk.not_implemented')
    expectError(await call(b.app, 'GET', '/v1/sync-status/peers/subscribe'), 501, 'sdk.not_implemented')
    expect(await ok(call(b.app, 'GET', '/v1/processes'))).toEqual({ processes: [] })
    // {S}/sync with no peers returns at once
    await ok(call(b.app, 'POST', `/v1/spaces/${spaceId}/sync`), 204)
  })

  it('devices: this one is listed; rename; a device cannot remove itself; unknown and pruned devices', async () => {
    const { devices, self } = await ok(call(b.app, 'GET', '/v1/devices'))
    expect(devices.map((d: any) => d.id)).toEqual([self])
    await ok(call(b.app, 'PATCH', `/v1/devices/${self}`, { name: 'laptop' }), 204)
    expect((await ok(call(b.app, 'GET', `/v1/devices/${self}`))).name).toBe('laptop')
    expectError(await call(b.app, 'DELETE', `/v1/devices/${self}`), 400, 'device.self_delete')
    expectError(await call(b.app, 'GET', '/v1/devices/unknown'), 404, 'device.not_found')
    await b.engine.account().devices.register('OtherDevice1111')
    await ok(call(b.app, 'DELETE', '/v1/devices/OtherDevice1111'), 204)
    expectError(await call(b.app, 'DELETE', '/v1/devices/OtherDevice1111'), 409, 'device.pruned')
    expectError(await call(b.app, 'PATCH', '/v1/devices/OtherDevice1111', { name: 'x' }), 409, 'device.pruned')
    expectError(await call(b.app, 'PATCH', `/v1/devices/${self}`, { name: 'x', extra: 1 }), 400, 'request.unknown_field')
  })
})

describe('POST /v1/devices/query/subscribe', () => {
  const changes = (frames: Frame[]) => frames.filter((f) => f.event === 'changes').flatMap((f) => f.data as Array<Record<string, any>>)
  it('windowed frames: snapshot of the live devices, then added, updated and filtered-out on register, rename and prune', async () => {
    const base = await baseUrl()
    const { self } = await ok(call(b.app, 'GET', '/v1/devices'))
    const s = await openSse(`${base}/v1/devices/query/subscribe`, { filter: { pruned: false }, sort: ['id'], limit: 10, includeTotal: true })
    try {
      expect(s.res.statusCode).toBe(200)
      await s.until((f) => f.length >= 2)
      expect(s.frames[0]).toEqual({ event: 'ready', data: {} })
      expect(s.frames[1]).toMatchObject({ event: 'snapshot', data: { total: 1, hasNext: false, records: [{ id: self, pruned: false }] } })

      await b.engine.account().devices.register('LiveDevice2222', 'phone')
      let seen = await s.until((f) => changes(f).some((e) => e.added.some((x: { id: string }) => x.id === 'LiveDevice2222')))
      expect(changes(seen).flatMap((e) => e.added)[0]).toMatchObject({ id: 'LiveDevice2222', doc: { name: 'phone', pruned: false } })

      await ok(call(b.app, 'PATCH', '/v1/devices/LiveDevice2222', { name: 'tablet' }), 204)
      seen = await s.until((f) => changes(f).some((e) => e.updated.some((x: { id: string }) => x.id === 'LiveDevice2222')))
      const upd = changes(seen).flatMap((e) => e.updated)[0]
      expect(upd).toMatchObject({ id: 'LiveDevice2222', doc: { name: 'tablet' }, ops: [{ type: '$set', path: 'name', value: 'tablet' }] })

      await ok(call(b.app, 'DELETE', '/v1/devices/LiveDevice2222'), 204)
      seen = await s.until((f) => changes(f).some((e) => e.removed.length > 0))
      expect(changes(seen).flatMap((e) => e.removed)).toEqual([{ id: 'LiveDevice2222', reason: 'filtered-out' }])
    } finally {
      s.destroy()
    }
  })

  it('the body is a strict snapshot body plus the subscribe fields', async () => {
    expectError(await call(b.app, 'POST', '/v1/devices/query/subscribe', { dataset: 'devices' }), 400, 'request.unknown_field')
    expectError(await call(b.app, 'POST', '/v1/devices/query/subscribe', { mailboxCapacity: 4 }), 400, 'request.invalid_field')
  })
})

describe('svc peers and svc sync-status', () => {
  it('print this device and the state of every space; exit 3 when unreachable', async () => {
    const url = await baseUrl()
    const run = async (args: string[]) => {
      const m = memoryIO('', { SVC_URL: url })
      return { code: await main(args, m.io), out: m.out(), err: m.err() }
    }
    const peers = await run(['peers'])
    expect(peers.code).toBe(0)
    expect(peers.out).toContain('this device')
    expect(peers.out).toContain('no connected peers')
    const status = await run(['sync-status'])
    expect(status.code).toBe(0)
    expect(status.out).toContain(`${spaceId}  offline`)
    const one = await run(['sync-status', spaceId, '--json'])
    expect(JSON.parse(one.out)).toMatchObject({ spaceId, state: 'offline' })
    expect((await run(['sync-status', 'nope'])).code).toBe(1)
    const down = memoryIO('', { SVC_URL: 'http://127.0.0.1:1' })
    expect(await main(['peers'], down.io)).toBe(3)
  })
})
