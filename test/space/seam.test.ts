import { describe, expect, it } from 'vitest'
import { defaultCryptoProvider } from '../../sync/crypto/provider.ts'
import { AccountEngine, type AccountEvents } from '../../sync/space/account-engine.ts'
import { defineModule, ModuleSet } from '../../sync/space/module.ts'
import { spacePolicy } from '../../sync/space/schema.ts'
import { SpaceEngine, type SpaceChange } from '../../sync/space/space-engine.ts'
import { editorModule } from '../../sync/modules/editor/module.ts'
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
    const engine = await SpaceEngine.create(await deps(2), keyFor(1))
    const heard: string[] = []
    const errors = console.error
    console.error = () => undefined
    try {
      engine.events.on('change', () => {
        throw new Error('boom')
      })
      engine.events.on('change', (c) => heard.push(c.versionId))
      const obj = await engine.createObject()
      expect(engine.objectDoc(obj)).toBeDefined()
      expect(heard.length).toBeGreaterThan(0)
    } finally {
      console.error = errors
    }
  })
})

describe('module set', () => {
  it('refuses two modules of one name, one dataset kind twice, and pins on a dataset the space layer pins', () => {
    const kind = editorModule.datasets![0]
    expect(() => new ModuleSet([editorModule, editorModule])).toThrow(/two modules are named editor/)
    expect(() => new ModuleSet([editorModule, { name: 'other', datasets: [kind] }])).toThrow(/declared twice/)
    expect(() => new ModuleSet([{ name: 'p', pins: { properties: ['x'] } }]).policy(spacePolicy)).toThrow(/pinned by the space layer/)
    expect(() => new ModuleSet([{ name: 'p', pins: { d: ['x'] } }, { name: 'q', pins: { d: ['y'] } }])).toThrow(/pinned by two modules/)
  })

  it("a space's services are built when it opens; a module not in the list has none", async () => {
    const engine = await SpaceEngine.create(await deps(3), keyFor(1), { modules: [editorModule] })
    expect(engine.services.of(editorModule).space).toBe(engine)
    expect(engine.services.bundles.types).toBe(engine.services.types)
    const absent = defineModule({ name: 'absent', service: () => 1 })
    expect(() => engine.services.of(absent)).toThrow(/not installed/)
  })
})
