import { rmSync } from 'node:fs'
import type { FastifyInstance } from 'fastify'
import { describe, expect, it } from 'vitest'
import { defaultCryptoProvider } from '../../sync/crypto/provider.ts'
import { DEFAULT_MODULES } from '../../sync/modules/index.ts'
import { searchModule } from '../../sync/modules/search/module.ts'
import { runSearch } from '../../sync/modules/search/search.ts'
import { AccountEngine } from '../../sync/space/account-engine.ts'
import { MemoryStorageAdapter } from '../../sync/storage/memory.ts'
import { AccountLifecycle } from '../../node/daemon/account-lifecycle.ts'
import { DaemonHost } from '../../node/daemon/daemon-host.ts'
import { buildApp } from '../../server/app.ts'
import { stopGracefully } from '../../server/lifecycle.ts'
import { systemEnv } from '../../sync/core/env.ts'
import { keyFor, seededEnv } from '../helpers.ts'
import { bootApp, call, ok } from '../routes/helpers.ts'

/** Storage whose batched reads (the object rows' load) answer late, as a large space's do. */
class SlowRowReads extends MemoryStorageAdapter {
  slow = false
  override async getMany(store: string, keys: readonly string[]) {
    if (this.slow) await new Promise((r) => setTimeout(r, 40))
    return super.getMany(store, keys)
  }
}

const OBJECTS = 1_200
const named = (i: number) => ({ initialProperties: { core: { name: `Comet ${i}`, description: i % 12 ? 'periodic tail' : 'sungrazer' } } })

describe('a restart answers searches while the object rows still load', () => {
  it('the account holds the space once its rows are in; its search answers from the saved index before', async () => {
    const storage = new SlowRowReads()
    const open = async () =>
      AccountEngine.open({ storage, crypto: await defaultCryptoProvider(), env: seededEnv(1), accountKey: keyFor(1), modules: DEFAULT_MODULES, spacesInBackground: true })
    const first = await open()
    const { id: spaceId } = await first.createSpace({ name: 'Sky' })
    const space = first.space(spaceId)
    for (let i = 0; i < OBJECTS; i++) await space.createObject(named(i))
    const idx = space.services.of(searchModule)
    expect((await runSearch(idx, { query: 'sungrazer', mode: 'fts', limit: 200 })).hits.length).toBe(100)
    await idx.settled()
    await first.close()

    storage.slow = true
    const again = await open()
    // Open, not held yet: its rows are still being read.
    expect(again.held(spaceId)).toBeUndefined()
    await again.replicaOpen(spaceId)
    const loading = again.searchable(spaceId)
    expect(loading.rowsReady).toBe(false)
    const early = await runSearch(loading.services.of(searchModule), { query: 'sungrazer', mode: 'fts', limit: 200 })
    expect(loading.rowsReady).toBe(false)
    expect(early.hits.length).toBe(100)
    expect(early.hits[0].snippet.text).toMatch(/sungrazer/i)
    expect(loading.services.of(searchModule).stats).toMatchObject({ builds: 0, loads: 1 })

    await again.loaded(spaceId)
    expect(again.space(spaceId)).toBe(loading)
    expect([...loading.objectDocs()].filter((d) => String((d.core as { name?: string })?.name).startsWith('Comet')).length).toBe(OBJECTS)
    // The catalog read from the loaded rows is the saved one: nothing was rebuilt.
    expect((await runSearch(loading.services.of(searchModule), { query: 'periodic', mode: 'fts', limit: 200 })).hits.length).toBe(200)
    expect(loading.services.of(searchModule).stats.builds).toBe(0)
    await again.close()
  })

  it("the daemon's routes of a space still loading wait for its rows; its search does not need to", async () => {
    const first = await bootApp()
    const { root, accountId } = first
    let app: FastifyInstance | undefined
    try {
      const spaceId = (await ok<{ id: string }>(call(first.app, 'POST', '/v1/spaces', { name: 'Sky' }), 201)).id
      const space = first.engine.account().space(spaceId)
      for (let i = 0; i < OBJECTS; i++) await space.createObject(named(i))
      const S = `/v1/spaces/${spaceId}`
      expect((await ok<{ hits: unknown[] }>(call(first.app, 'POST', `${S}/search`, { query: 'sungrazer', mode: 'fts', limit: 200 }))).hits.length).toBe(100)
      await space.services.of(searchModule).settled()
      await stopGracefully(first.app, 1000)

      const engine = new DaemonHost({ dataRoot: root, noMdns: true, p2p: false })
      const session = new AccountLifecycle({ dataRoot: root, mode: 'standalone', engine, env: systemEnv })
      expect(await session.bootAtStart()).toBe(accountId)
      app = buildApp({ session, engine })
      // Hold the space's loading open from here, whatever this machine's speed: routes that wait
      // for the rows wait for this; the search must not.
      const account = engine.account()
      const real = account.loaded.bind(account)
      let release!: () => void
      const gate = new Promise<void>((r) => (release = r))
      const realAll = account.opensSettled.bind(account)
      const waitedFor: string[] = []
      account.loaded = async (id: string) => {
        waitedFor.push(id)
        await gate
        return real(id)
      }
      account.opensSettled = async () => {
        waitedFor.push('*')
        await gate
        return realAll()
      }
      const answered = new Set<string>()
      const query = call(app, 'POST', `${S}/objects/query`, { filter: { 'core.description': 'sungrazer' }, limit: 200 }).then((r) => (answered.add('query'), r))
      // A route naming no space may read any: it waits for every one.
      const listed = call(app, 'GET', '/v1/spaces').then((r) => (answered.add('list'), r))
      const found = await ok<{ hits: Array<{ snippet: { text: string } }> }>(call(app, 'POST', `${S}/search`, { query: 'sungrazer', mode: 'fts', limit: 200 }))
      expect(found.hits.length).toBe(100)
      expect(found.hits[0].snippet.text).toMatch(/sungrazer/)
      await ok(call(app, 'GET', '/v1/processes'))
      expect([...answered]).toEqual([])
      expect(waitedFor.sort()).toEqual(['*', spaceId].sort())
      release()
      expect((await ok<{ records: unknown[] }>(query)).records.length).toBe(100)
      expect((await ok<Array<{ id: string; name: string }>>(listed)).find((s) => s.id === spaceId)?.name).toBe('Sky')
    } finally {
      if (app) await stopGracefully(app, 1000)
      rmSync(root, { recursive: true, force: true })
    }
  }, 120_000)
})
