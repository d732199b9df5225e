import type { Env } from '../../sync/core/env.ts'
import { defaultCryptoProvider } from '../../sync/crypto/provider.ts'
import type { JsonObject } from '../../sync/crdt/ops.ts'
import { DEFAULT_MODULES } from '../../sync/modules/index.ts'
import { PROGRAMS_DS } from '../../sync/modules/agents/record.ts'
import { anchorIdOf, createTrigger, ensureAnchor } from '../../sync/modules/agents/store.ts'
import { AccountEngine } from '../../sync/space/account-engine.ts'
import { setupUsecase } from '../../sync/space/catalog/setup.ts'
import type { SpaceEngine } from '../../sync/space/space-engine.ts'
import { MemoryStorageAdapter } from '../../sync/storage/memory.ts'
import { keyFor, xorshiftBytes } from '../helpers.ts'

export const T0 = 1_700_000_000_000

/** A virtual clock: time moves only when the test says; timers fire when it passes them. */
export function virtualEnv(start = T0): Env & { advance(ms: number): void; set(t: number): void } {
  let t = start
  const timers: Array<{ at: number; fn: () => void }> = []
  const fireDue = () => {
    timers.sort((a, b) => a.at - b.at)
    while (timers.length && timers[0].at <= t) timers.shift()!.fn()
  }
  return {
    now: () => t,
    randomBytes: xorshiftBytes(7),
    setTimer: (ms, fn) => {
      const timer = { at: t + ms, fn }
      timers.push(timer)
      return () => void timers.splice(timers.indexOf(timer) >>> 0, timers.includes(timer) ? 1 : 0)
    },
    advance(ms) {
      t += ms
      fireDue()
    },
    set(at) {
      t = at
      fireDue()
    },
  }
}

export const MODULES = DEFAULT_MODULES

/** One account with one space holding its general chat and the agents anchor, on a virtual clock. */
export async function agentAccount(env = virtualEnv(), storage = new MemoryStorageAdapter()) {
  const account = await AccountEngine.open({ storage, crypto: await defaultCryptoProvider(), env, accountKey: keyFor(1), modules: MODULES })
  const info = await account.createSpace({ name: 'team' })
  const space = account.space(info.id)
  const chatId = (await setupUsecase(space.services.bundles, 'general-chat')).bundles[0].bundle.rootId
  const anchor = await ensureAnchor(space)
  return { account, space, chatId, anchor, env, storage }
}

export async function addTrigger(space: SpaceEngine, id: string, fields: JsonObject) {
  await createTrigger(space, id, { name: id, args: {}, owner: '', enabled: true, logRuns: true, limits: {}, ...fields })
}

export async function addProgram(space: SpaceEngine, id: string, source: string) {
  const [name, v] = id.split('@v')
  await space.modify({
    objectId: anchorIdOf(space.spaceId),
    dataset: PROGRAMS_DS,
    records: [{ id, upsert: true, ops: [{ type: '$set', path: '', value: { name, version: Number(v), source } }] }],
  })
}
