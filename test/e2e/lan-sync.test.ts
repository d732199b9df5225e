import { afterAll, describe, expect, it } from 'vitest'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { api, datasetState, IN_NETNS, ok, startDaemon, stopDaemon, until, type Daemon } from './daemons.ts'

const dirs: string[] = []
const daemons: Daemon[] = []
const tmp = () => {
  const d = mkdtempSync(join(tmpdir(), 'svc-lan-'))
  dirs.push(d)
  return d
}
afterAll(async () => {
  for (const d of daemons) await stopDaemon(d, 'SIGKILL')
  for (const d of dirs) rmSync(d, { recursive: true, force: true })
})

// mDNS may only run inside the private network namespace (CI runs the suite there).
describe.runIf(IN_NETNS)('two svc daemons on one LAN (mDNS, real processes)', () => {
  it('discover each other, sync 1,000 objects, converge on concurrent writes, and survive SIGKILL mid-burst', async () => {
    const dirA = tmp()
    const dirB = tmp()
    const a = await startDaemon(dirA)
    daemons.push(a)
    const { mnemonic } = await ok(a, 'POST', '/v1/auth', {})
    let b = await startDaemon(dirB)
    daemons.push(b)
    await ok(b, 'POST', '/v1/auth', { mnemonic })

    // Discovery with no address given.
    const peerA = (await ok(a, 'GET', '/v1/debug/p2p')).peerId
    await until('mDNS discovery', async () => (await ok(b, 'GET', '/v1/debug/p2p')).peers.some((p: any) => p.peerId === peerA))

    const space = await ok(a, 'POST', '/v1/spaces', { name: 'LAN' })
    const S = `/v1/spaces/${space.id}`
    const objects: string[] = []
    for (let i = 0; i < 1000; i++) objects.push((await ok(a, 'POST', `${S}/objects`, { initialProperties: { core: { name: `obj ${i}` } } })).objectId)

    await until('the space on B', async () => (await ok(b, 'GET', '/v1/spaces')).some((s: any) => s.id === space.id))
    // Every object A wrote (and the space's own index object) is on B.
    await until(
      '1,000 objects on B',
      async () => {
        const r = await api(b, 'POST', `${S}/objects/query`, { filter: { id: { $in: objects } }, limit: 0, includeTotal: true })
        return r.status === 200 && r.json.total === 1000
      },
      120_000,
    )

    // Concurrent writes to the same records from both sides converge to identical results.
    const target = objects[0]
    await Promise.all([
      ok(a, 'POST', `${S}/modify`, {
        objectId: target,
        dataset: 'd',
        records: [
          { id: 'r1', ops: [{ type: '$set', path: 'v', value: 'A' }] },
          { id: 'r2', ops: [{ type: '$set', path: 'a', value: 1 }] },
        ],
      }),
      ok(b, 'POST', `${S}/modify`, {
        objectId: target,
        dataset: 'd',
        records: [
          { id: 'r1', ops: [{ type: '$set', path: 'v', value: 'B' }] },
          { id: 'r2', ops: [{ type: '$set', path: 'b', value: 2 }] },
        ],
      }),
    ])
    await until('convergence after concurrent writes', async () => {
      const [x, y] = [await datasetState(a, space.id, target, 'd'), await datasetState(b, space.id, target, 'd')]
      return x === y && x.includes('"a":1') && x.includes('"b":2')
    })

    // SIGKILL B in the middle of a write burst; every write B acknowledged must survive.
    const acked: string[] = []
    let burstDone = false
    const burst = (async () => {
      for (let i = 0; !burstDone && i < 5000; i++) {
        const r = await api(b, 'POST', `${S}/modify`, { objectId: target, dataset: 'burst', records: [{ id: `k${i}`, ops: [{ type: '$set', path: 'i', value: i }] }] }).catch(
          () => undefined,
        )
        if (r?.status === 200) acked.push(`k${i}`)
        else break
      }
    })()
    await until('some acknowledged writes', async () => acked.length >= 50)
    b.proc.kill('SIGKILL')
    burstDone = true
    await burst
    await b.exited
    b = await startDaemon(dirB)
    daemons.push(b)
    await until('B boots its account again', async () => (await ok(b, 'GET', '/v1/health')).account !== '')
    await until(
      'both hold every acknowledged write, identically',
      async () => {
        const [x, y] = [await datasetState(a, space.id, target, 'burst'), await datasetState(b, space.id, target, 'burst')]
        return x === y && acked.every((k) => x.includes(`"id":"${k}"`))
      },
      120_000,
    )
    expect(acked.length).toBeGreaterThanOrEqual(50)
  }, 600_000)
})
