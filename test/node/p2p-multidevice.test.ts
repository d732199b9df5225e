import { afterEach, describe, expect, it } from 'vitest'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { DaemonHost } from '../../node/daemon/daemon-host.ts'
import { keyPairFromSeed } from '../../sync/crypto/keys.ts'
import { keyFor } from '../helpers.ts'

const cleanups: Array<() => Promise<void>> = []
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c()
})

async function device(n: number) {
  const dir = mkdtempSync(join(tmpdir(), `svc-dev${n}-`))
  const engine = new DaemonHost({ dataRoot: dir, noMdns: true, p2pListen: ['/ip4/127.0.0.1/tcp/0'], scheduler: { debounceMs: 20 } })
  await engine.onBoot({ accountId: 'x', dir, keys: { account: keyFor(1), device: keyPairFromSeed(new Uint8Array(32).fill(100 + n)), index: 1 } })
  cleanups.push(async () => {
    await engine.onTeardown()
    rmSync(dir, { recursive: true, force: true })
  })
  return engine
}

async function until(cond: () => Promise<boolean> | boolean, ms = 20_000) {
  const end = Date.now() + ms
  while (!(await cond())) {
    if (Date.now() > end) throw new Error('timed out')
    await new Promise((r) => setTimeout(r, 50))
  }
}

describe('two devices of one account over libp2p on loopback', () => {
  it('the second device receives the spaces list and every space content; writes on both converge', async () => {
    const a = await device(1)
    const acc = a.account()
    const space = await acc.createSpace({ name: 'Shared' })
    const sp = acc.space(space.id)
    const objs: string[] = []
    for (let i = 0; i < 20; i++) objs.push(await sp.createObject({ initialProperties: { core: { name: `o${i}` } } }))

    const b = await device(2)
    // No discovery here: dial by address (mDNS has its own test inside the network namespace).
    await b.p2p()!.node.dial(a.p2p()!.node.getMultiaddrs()[0])
    await until(async () => (await b.account().listSpaces()).some((s) => s.id === space.id && s.name === 'Shared'))
    const spB = b.account().space(space.id)
    await until(() => objs.every((o) => !!spB.objectDoc(o)))
    expect(spB.objectDoc(objs[3])?.core).toMatchObject({ name: 'o3' })

    // Concurrent writes to the same record on both devices converge to one value.
    await sp.modify({ objectId: objs[0], dataset: 'd', records: [{ id: 'r', ops: [{ type: '$set', path: 'v', value: 'A' }] }] })
    await spB.modify({ objectId: objs[0], dataset: 'd', records: [{ id: 'r', ops: [{ type: '$set', path: 'v', value: 'B' }] }] })
    await until(async () => {
      const x = await sp.recordDoc(objs[0], 'd', 'r')
      const y = await spB.recordDoc(objs[0], 'd', 'r')
      return !!x && !!y && x.v === y.v
    })
    await until(async () => (await sp.replica.stateDigest()) === (await spB.replica.stateDigest()))
  }, 60_000)
})
