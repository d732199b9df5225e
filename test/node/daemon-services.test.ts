import { describe, expect, it } from 'vitest'
import { memoryLogger } from '../../sync/core/log.ts'
import { defaultCryptoProvider } from '../../sync/crypto/provider.ts'
import { AccountEngine } from '../../sync/space/account-engine.ts'
import { DEFAULT_MODULES } from '../../sync/modules/index.ts'
import { MemoryStorageAdapter } from '../../sync/storage/memory.ts'
import { startOrder, startServices, stopServices, type AnyDaemonService, type BaseComponents } from '../../node/daemon/service.ts'
import { releaseServices } from '../../node/daemon/services.ts'
import { keyFor, seededEnv } from '../helpers.ts'

const service = (name: string, o: { needs?: string[]; after?: string[]; log?: string[]; fail?: boolean; skip?: boolean } = {}): AnyDaemonService => ({
  name,
  needs: o.needs,
  after: o.after,
  async start() {
    if (o.fail) throw new Error(`${name} cannot start`)
    if (o.skip) return undefined
    o.log?.push(`start ${name}`)
    return { stop: () => void o.log?.push(`stop ${name}`) }
  },
})

describe('the daemon-service seam (node/daemon/service.ts)', () => {
  it('orders services after those they need or follow, and keeps the list order otherwise', () => {
    const names = startOrder([
      service('agents', { after: ['head-sync'] }),
      service('events', { needs: ['head-sync'] }),
      service('head-sync'),
      service('status', { after: ['absent'] }),
    ]).map((s) => s.name)
    expect(names).toEqual(['head-sync', 'agents', 'events', 'status'])
  })

  it('refuses a list with a missing need, a repeated name or a cycle before anything starts', () => {
    expect(() => startOrder([service('events', { needs: ['head-sync'] })])).toThrow(/events needs head-sync, which is not in the daemon's service list/)
    expect(() => startOrder([service('a'), service('a')])).toThrow(/listed twice/)
    expect(() => startOrder([service('a', { needs: ['b'] }), service('b', { needs: ['a'] })])).toThrow(/need each other: a -> b -> a/)
  })

  it('stops in reverse order, and stops the started ones when a later one fails to start', async () => {
    const log: string[] = []
    const base = { log: memoryLogger() } as unknown as BaseComponents
    const running = await startServices([service('a', { log }), service('b', { log, skip: true }), service('c', { log })], base)
    await stopServices(running, memoryLogger())
    expect(log).toEqual(['start a', 'start c', 'stop c', 'stop a'])
    log.length = 0
    await expect(startServices([service('a', { log }), service('z', { fail: true })], base)).rejects.toThrow(/z cannot start/)
    expect(log).toEqual(['start a', 'stop a'])
  })

  it("the release's list names every need it has, with P2P on or off", () => {
    expect(startOrder(releaseServices({ p2p: { mdns: false }, agents: {} })).map((s) => s.name)).toEqual([
      'head-sync',
      'sync-processes',
      'events',
      'blocks',
      'push',
      'sync-status',
      'hub-link',
      'agents',
    ])
    expect(startOrder(releaseServices({ p2p: false })).map((s) => s.name)).toEqual(['sync-status'])
  })
})

describe('module dependencies (SvcModule.dependencies)', () => {
  it('an account whose module list leaves out a module another needs refuses to open, naming both', async () => {
    const open = async (modules: typeof DEFAULT_MODULES) =>
      AccountEngine.open({ storage: new MemoryStorageAdapter(), crypto: await defaultCryptoProvider(), env: seededEnv(7), accountKey: keyFor(7), modules })
    await expect(open(DEFAULT_MODULES.filter((m) => m.name !== 'chat-read'))).rejects.toThrow(/module push needs module chat-read/)
    await expect(open(DEFAULT_MODULES.filter((m) => m.name !== 'events'))).rejects.toThrow(/module editor needs module events/)
    const whole = await open(DEFAULT_MODULES)
    await whole.close()
  })
})
