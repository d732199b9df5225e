import { rmSync } from 'node:fs'
import type { FastifyInstance } from 'fastify'
import { describe, expect, it } from 'vitest'
import { AccountLifecycle } from '../../node/daemon/account-lifecycle.ts'
import { DaemonHost } from '../../node/daemon/daemon-host.ts'
import { buildApp } from '../../server/app.ts'
import { stopGracefully } from '../../server/lifecycle.ts'
import { systemEnv } from '../../sync/core/env.ts'
import { DEFAULT_MODULES } from '../../sync/modules/index.ts'
import { SEARCH_STORES } from '../../sync/modules/search/limits.ts'
import { searchModule } from '../../sync/modules/search/module.ts'
import { runSearch } from '../../sync/modules/search/search.ts'
import type { AccountEngine } from '../../sync/space/account-engine.ts'
import { SpaceEngine } from '../../sync/space/space-engine.ts'
import type { StorageAdapter } from '../../sync/storage/adapter.ts'
import { MemoryStorageAdapter } from '../../sync/storage/memory.ts'
import { deps, keyFor } from '../helpers.ts'
import { bootApp, call, ok } from '../routes/helpers.ts'

const SPACES = 4
const named = (name: string) => ({ initialProperties: { core: { name, description: 'periodic tail' } } })
const idx = (e: SpaceEngine) => e.services.of(searchModule)
const hits = async (e: SpaceEngine, query: string) => (await runSearch(idx(e), { query, mode: 'fts', limit: 200 })).hits.length

/** Waits for every open space's search index to settle; the full builds each ran, by space. */
async function builds(account: AccountEngine): Promise<Record<string, number>> {
  const out: Record<string, number> = {}
  for (const space of account.openSpaces()) {
    await idx(space).settled()
    out[space.spaceId] = idx(space).stats.builds
  }
  return out
}

/** The generation of each space's saved index base (a full build writes the next one). */
async function generations(storage: StorageAdapter, spaceIds: readonly string[]): Promise<Record<string, number>> {
  const out: Record<string, number> = {}
  for (const id of spaceIds) {
    const raw = await storage.get(SEARCH_STORES.fts, `${id}/meta`)
    out[id] = raw ? (JSON.parse(new TextDecoder().decode(raw)) as { gen: number }).gen : -1
  }
  return out
}

/** A daemon booting the account kept in `root` (SQLite), as `svc serve` does after a stop. */
async function boot(root: string) {
  const engine = new DaemonHost({ dataRoot: root, noMdns: true, p2p: false })
  const session = new AccountLifecycle({ dataRoot: root, mode: 'standalone', engine, env: systemEnv })
  await session.bootAtStart()
  const app: FastifyInstance = buildApp({ session, engine })
  const account = engine.account()
  await account.allLoaded()
  return { app, account, storage: engine.storage()! }
}

describe('a restart with no writes rebuilds no search index (issue 42)', () => {
  it('with several spaces over the daemon, whichever space wrote last; the boot write of the device row included', async () => {
    const first = await bootApp()
    const { root } = first
    try {
      const ids: string[] = []
      for (let s = 0; s < SPACES; s++) ids.push((await ok<{ id: string }>(call(first.app, 'POST', '/v1/spaces', { name: `Space ${s}` }), 201)).id)
      // Space s writes s + 1 objects, in turns; space 0 also writes last: every space's count differs.
      for (let round = 0; round < 2; round++)
        for (const [s, id] of ids.entries()) for (let i = 0; i <= s; i++) await ok(call(first.app, 'POST', `/v1/spaces/${id}/objects`, named(`Comet ${round} ${i}`)), 201)
      await ok(call(first.app, 'POST', `/v1/spaces/${ids[0]}/objects`, named('Halley')), 201)
      await builds(first.engine.account())
      await stopGracefully(first.app, 1000)

      let gens: Record<string, number> | undefined
      // The first boot follows writes (each index saved at close); the next ones follow none.
      for (let restart = 0; restart < 3; restart++) {
        const again = await boot(root)
        const all = again.account.openSpaces().map((s) => s.spaceId)
        expect(all.length).toBe(SPACES + 1)
        expect(await builds(again.account)).toEqual(Object.fromEntries(all.map((id) => [id, 0])))
        const now = await generations(again.storage, all)
        if (gens) expect(now).toEqual(gens)
        gens = now
        // Still answers with what was written before the stops.
        expect(await hits(again.account.space(ids[0]), 'halley')).toBe(1)
        await stopGracefully(again.app, 1000)
      }
    } finally {
      rmSync(root, { recursive: true, force: true })
    }
  }, 120_000)
})

describe('a saved index is current only at the very state it was saved from', () => {
  const withoutSearch = DEFAULT_MODULES.filter((m) => m !== searchModule)

  it('writes the index never saw, reaching the version it was saved at again, are not served stale', async () => {
    const storage = new MemoryStorageAdapter()
    const a = await SpaceEngine.create(await deps(1, storage), keyFor(1), { modules: DEFAULT_MODULES })
    const b = await SpaceEngine.create(await deps(2, storage), keyFor(1), { modules: DEFAULT_MODULES })
    for (let i = 0; i < 6; i++) await a.createObject(named(`Pulsar ${i}`))
    await b.createObject(named('Nebula'))
    await idx(a).settled()
    const saved = Number(a.replica.versionId())
    await a.close()
    await b.close()

    // Writes the index does not follow (as if a crash came before their drain), up to the
    // version its saved meta names, or past it.
    const plain = await SpaceEngine.open(await deps(3, storage), a.spaceId, keyFor(1), { modules: withoutSearch })
    await plain.createObject(named('Quasar'))
    while (Number(plain.replica.versionId()) < saved) await plain.replica.createObject()
    await plain.close()

    const again = await SpaceEngine.open(await deps(4, storage), a.spaceId, keyFor(1), { modules: DEFAULT_MODULES })
    await idx(again).settled()
    expect(await hits(again, 'quasar')).toBe(1)
    expect(await hits(again, 'pulsar')).toBe(6)
    expect(idx(again).stats.builds).toBe(1)
    await again.close()
  })

  it('an index saved while every space shared one counter (no `versions` in its meta) is rebuilt once', async () => {
    const storage = new MemoryStorageAdapter()
    const a = await SpaceEngine.create(await deps(1, storage), keyFor(1), { modules: DEFAULT_MODULES })
    await a.createObject(named('Pulsar'))
    await idx(a).settled()
    await a.close()
    const key = `${a.spaceId}/meta`
    const meta = JSON.parse(new TextDecoder().decode(await storage.get(SEARCH_STORES.fts, key))) as Record<string, unknown>
    expect(meta.versions).toBe('space')
    delete meta.versions
    await storage.commit({ puts: [{ store: SEARCH_STORES.fts, key, value: new TextEncoder().encode(JSON.stringify(meta)) }], dels: [] })

    const again = await SpaceEngine.open(await deps(2, storage), a.spaceId, keyFor(1), { modules: DEFAULT_MODULES })
    await idx(again).settled()
    expect(idx(again).stats.builds).toBe(1)
    expect(await hits(again, 'pulsar')).toBe(1)
    await again.close()
    const third = await SpaceEngine.open(await deps(3, storage), a.spaceId, keyFor(1), { modules: DEFAULT_MODULES })
    await idx(third).settled()
    expect(idx(third).stats.builds).toBe(0)
    await third.close()
  })
})
