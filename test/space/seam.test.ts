import { readdirSync, readFileSync, statSync } from 'node:fs'
import { join, relative } from 'node:path'
import { describe, expect, it } from 'vitest'
import { defaultCryptoProvider } from '../../sync/crypto/provider.ts'
import { memoryLogger } from '../../sync/core/log.ts'
import { AccountEngine, type AccountEvents } from '../../sync/space/account-engine.ts'
import { defineModule, ModuleSet, type AccountModuleContext } from '../../sync/space/module.ts'
import { ROW_DS, ROW_ID, spacePolicy } from '../../sync/space/schema.ts'
import { SpaceEngine, type SpaceChange } from '../../sync/space/space-engine.ts'
import { editorModule } from '../../sync/modules/editor/module.ts'
import { eventsModule } from '../../sync/modules/events/module.ts'
import { checkSubscribe } from '../../sync/modules/events/envelope.ts'
import { MemoryStorageAdapter } from '../../sync/storage/memory.ts'
import { deps, idFor, keyFor, seededEnv } from '../helpers.ts'

describe('a write resolves once its effects are readable', () => {
  it('the object index, the module hooks and the change listeners have seen a write when it resolves', async () => {
    const hooked: string[] = []
    // A hook that takes a macrotask (as an IndexedDB read would): the write must wait for it.
    const probe = defineModule({
      name: 'probe',
      onCommit: async (c: SpaceChange) => {
        await new Promise((r) => setTimeout(r, 5))
        hooked.push(c.versionId)
      },
    })
    const engine = await SpaceEngine.create(await deps(1), keyFor(1), { modules: [probe] })
    const obj = await engine.createObject({ initialProperties: { core: { name: 'a' } } })
    const heard: SpaceChange[] = []
    engine.events.on('change', (c) => heard.push(c))
    // No settled(): the resolved write is readable at once.
    const res = await engine.setRowValues(obj, 'core', { name: 'b' })
    expect((engine.objectDoc(obj)?.core as { name?: string }).name).toBe('b')
    expect(heard.map((c) => c.versionId)).toEqual([res.versionId])
    expect(hooked).toContain(res.versionId)
  })
})

describe('typed account events', () => {
  it('one emitter carries every held space: changes, members and spaces opened', async () => {
    const a = await AccountEngine.open({ storage: new MemoryStorageAdapter(), crypto: await defaultCryptoProvider(), env: seededEnv(1), accountKey: keyFor(1) })
    const seen: Array<keyof AccountEvents> = []
    const opened: string[] = []
    a.events.on('spacesOpened', (e) => opened.push(...e.spaceIds))
    a.events.on('change', () => seen.push('change'))
    a.events.on('members', () => seen.push('members'))
    const info = await a.createSpace({ name: 'S' })
    expect(opened).toEqual([info.id])
    const sp = a.space(info.id)
    const spaces = new Set<string>()
    a.events.on('change', (e) => spaces.add(e.space.spaceId))
    await sp.createObject()
    expect(spaces).toEqual(new Set([info.id]))
    seen.length = 0
    await sp.replica.addMember(idFor(2), 'writer')
    await sp.settled()
    expect(seen).toContain('members')
    await a.close()
  })

  it('a listener that throws starves no other listener', async () => {
    const log = memoryLogger()
    const engine = await SpaceEngine.create(await deps(2), keyFor(1), { log })
    const heard: string[] = []
    engine.events.on('change', () => {
      throw new Error('boom')
    })
    engine.events.on('change', (c) => heard.push(c.versionId))
    const obj = await engine.createObject()
    expect(engine.objectDoc(obj)).toBeDefined()
    expect(heard.length).toBeGreaterThan(0)
    // The throwing listener is a bug: logged at error, with the event it failed on.
    expect(log.lines).toContainEqual(expect.objectContaining({ level: 'error', msg: 'event listener failed', event: 'change', err: 'Error: boom' }))
  })
})

describe('module set', () => {
  it('refuses two modules of one name, one dataset kind twice, and pins on a dataset the space layer pins', () => {
    const kind = editorModule.datasets![0]
    expect(() => new ModuleSet([editorModule, editorModule])).toThrow(/two modules are named editor/)
    expect(() => new ModuleSet([editorModule, { name: 'other', datasets: [kind] }])).toThrow(/declared twice/)
    expect(() => new ModuleSet([{ name: 'p', pins: { properties: ['x'] } }]).policy(spacePolicy)).toThrow(/pinned by the space layer/)
    expect(
      () =>
        new ModuleSet([
          { name: 'p', pins: { d: ['x'] } },
          { name: 'q', pins: { d: ['y'] } },
        ]),
    ).toThrow(/pinned by two modules/)
  })

  it("a space's services are built when it opens; a module not in the list has none", async () => {
    const engine = await SpaceEngine.create(await deps(3), keyFor(1), { modules: [editorModule] })
    expect(engine.services.of(editorModule).space).toBe(engine)
    expect(engine.services.bundles.types).toBe(engine.services.types)
    const absent = defineModule({ name: 'absent', service: () => 1 })
    expect(() => engine.services.of(absent)).toThrow(/not installed/)
  })
})

describe('account services', () => {
  /** An account-level service that records what it was built from, what it heard and when it closed. */
  class Ledger {
    readonly opened: string[] = []
    constructor(
      readonly name: string,
      readonly ctx: AccountModuleContext,
      private readonly log: string[],
    ) {
      log.push(`build ${name}`)
      ctx.events.on('spacesOpened', (e) => void this.opened.push(...e.spaceIds))
    }
    close() {
      this.log.push(`close ${this.name}`)
    }
  }

  it('are built once when the account opens, typed by the module, and closed with it in reverse order', async () => {
    const log: string[] = []
    const first = defineModule({ name: 'first', accountService: (ctx) => new Ledger('first', ctx, log) })
    const second = defineModule({ name: 'second', accountService: (ctx) => new Ledger('second', ctx, log) })
    const failing = defineModule({ name: 'failing', accountService: () => ({ close: () => Promise.reject(new Error('close failed')) }) })
    const spaceOnly = defineModule({ name: 'space-only', service: () => 1 })
    const logged = memoryLogger('account')
    const a = await AccountEngine.open({
      storage: new MemoryStorageAdapter(),
      crypto: await defaultCryptoProvider(),
      env: seededEnv(4),
      accountKey: keyFor(1),
      modules: [first, spaceOnly, failing, second],
      log: logged,
    })
    try {
      expect(log).toEqual(['build first', 'build second'])
      // Typed by the module value: no cast, and the same instance on every call.
      const ledger: Ledger = a.services.of(first)
      expect(a.services.of(first)).toBe(ledger)
      expect(ledger.ctx.accountId).toBe(a.accountId)
      expect(ledger.ctx.env).toBe(a.env)
      // Built before any space opens: it hears every space the account opens.
      const info = await a.createSpace({ name: 'S' })
      expect(ledger.opened).toContain(info.id)
      expect(ledger.ctx.space(info.id)).toBe(a.space(info.id))
      expect(ledger.ctx.held(a.tech.spaceId)).toBe(a.tech)
      expect(() => ledger.ctx.space('nowhere')).toThrow(/space not found/)
      expect(() => a.services.of(spaceOnly)).toThrow(/no account service/)
      expect(a.services.find(spaceOnly)).toBeUndefined()
      const absent = defineModule({ name: 'absent', accountService: () => 1 })
      expect(() => a.services.of(absent)).toThrow(/not installed/)
      expect(a.services.find(absent)).toBeUndefined()
    } finally {
      await a.close()
      // A later module may use an earlier one's service: the later closes first. A failing close stops no other.
      expect(log).toEqual(['build first', 'build second', 'close second', 'close first'])
      expect(logged.lines).toContainEqual({ level: 'warn', scope: 'account', msg: 'closing a module service failed', services: 'account', err: 'Error: close failed' })
      await a.close()
      expect(log.filter((l) => l.startsWith('close'))).toHaveLength(2)
    }
  })

  it('space services with a close are closed with the account, every space and the tech space, after their commits reached the hooks', async () => {
    const log: string[] = []
    const hooked = new Map<string, number>()
    const watcher = defineModule({
      name: 'watcher',
      service: ({ space }) => ({
        close: () => void log.push(`close ${space.spaceId === a.tech.spaceId ? 'tech' : space.spaceId} after ${hooked.get(space.spaceId) ?? 0} commits`),
      }),
      // Slow hooks: a close that did not wait for the commit feed would come first.
      onCommit: async (_change, _service, { space }) => {
        await new Promise((r) => setTimeout(r, 15))
        hooked.set(space.spaceId, (hooked.get(space.spaceId) ?? 0) + 1)
      },
    })
    const failing = defineModule({ name: 'failing', service: () => ({ close: () => Promise.reject(new Error('close failed')) }) })
    const logged = memoryLogger('account')
    const a = await AccountEngine.open({
      storage: new MemoryStorageAdapter(),
      crypto: await defaultCryptoProvider(),
      env: seededEnv(5),
      accountKey: keyFor(1),
      modules: [watcher, failing],
      log: logged,
    })
    const info = await a.createSpace({ name: 'S' })
    const space = a.space(info.id)
    // Written through the replica: committed, not yet through the commit feed; the close waits for their hooks.
    const before = hooked.get(info.id) ?? 0
    for (let i = 0; i < 3; i++) await space.replica.write(space.spaceIndexObjectId, [{ op: 'set', ds: ROW_DS, id: ROW_ID, path: 'core.name', value: `n${i}` }])
    await a.close()
    const commits = hooked.get(info.id)!
    expect(commits).toBe(before + 3)
    expect(log).toContain(`close ${info.id} after ${commits} commits`)
    expect(log.filter((l) => l.startsWith('close tech'))).toHaveLength(1)
    // Every space's failing close is logged at warn by the space's logger (a child of the account's).
    expect(logged.lines.filter((l) => l.level === 'warn' && l.scope === 'account/space' && l.msg === 'closing a module service failed' && l.services === 'space')).toHaveLength(2)
    await a.close()
    expect(log).toHaveLength(2)
  })

  it("the event bus is the events module's account service: one per account, closed with it", async () => {
    const crypto = await defaultCryptoProvider()
    const open = (n: number) => AccountEngine.open({ storage: new MemoryStorageAdapter(), crypto, env: seededEnv(n), accountKey: keyFor(n), modules: [eventsModule] })
    const [a, b] = [await open(5), await open(6)]
    const bus = a.services.of(eventsModule)
    expect(bus.accountId).toBe(a.accountId)
    expect(b.services.of(eventsModule)).not.toBe(bus)
    const got: string[] = []
    bus.subscribe(checkSubscribe({}), (e) => void got.push(e.type))
    expect(bus.publish({ type: 'ui.ping', scope: 'device' })).toBe(1)
    expect(got).toEqual(['ui.ping'])
    await a.close()
    await b.close()
    // Nothing reaches a subscriber of a closed account's bus.
    expect(bus.publish({ type: 'ui.ping', scope: 'device' })).toBe(0)
    expect(got).toEqual(['ui.ping'])
  })
})

describe('the seam has one direction', () => {
  const root = join(import.meta.dirname, '..', '..')
  const files = (dir: string): string[] =>
    readdirSync(dir).flatMap((n) => {
      const p = join(dir, n)
      return statSync(p).isDirectory() ? files(p) : p.endsWith('.ts') ? [p] : []
    })

  it('no file under sync/ outside sync/modules imports a module: the list reaches the space layer as a value', () => {
    const offenders: string[] = []
    for (const f of files(join(root, 'sync'))) {
      const rel = relative(root, f)
      if (rel.startsWith(join('sync', 'modules'))) continue
      // The browser entry assembles an app as the daemon does (node/daemon/daemon-host.ts): it hands the list in.
      if (rel.startsWith(join('sync', 'browser'))) continue
      for (const m of readFileSync(f, 'utf8').matchAll(/from\s+['"]([^'"]+)['"]/g)) if (/(^|\/)modules\//.test(m[1])) offenders.push(`${rel} imports ${m[1]}`)
    }
    expect(offenders).toEqual([])
  })
})
