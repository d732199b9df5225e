import { expect } from 'vitest'
import { SpaceEngine } from '../../sync/space/space-engine.ts'
import { DEFAULT_MODULES } from '../../sync/modules/index.ts'
import { deps, idFor, keyFor, pushAll } from '../helpers.ts'

/** A fresh space owned by key 1, with its types service. */
export async function newSpace(seed = 1) {
  const engine = await SpaceEngine.create(await deps(seed), keyFor(1), { modules: DEFAULT_MODULES })
  return { engine, svc: engine.services.types }
}

/** Two members of one space (owner key 1, writer key 2), each with a service; `sync` pushes both ways. */
export async function twoMembers() {
  const a = await SpaceEngine.create(await deps(1), keyFor(1), { modules: DEFAULT_MODULES })
  await a.replica.addMember(idFor(2), 'writer')
  const b = await SpaceEngine.open(await deps(2), a.spaceId, keyFor(2), { modules: DEFAULT_MODULES })
  const sync = async () => {
    await pushAll(a.replica, b.replica)
    await pushAll(b.replica, a.replica)
    await a.settled()
    await b.settled()
  }
  await sync()
  return { a, b, svcA: a.services.types, svcB: b.services.types, sync }
}

/** Expects a promise (or a thunk that may throw synchronously) to fail with an SvcError code and details. */
export async function expectCode(p: Promise<unknown> | (() => unknown), code: string, details?: Record<string, unknown>) {
  const run = typeof p === 'function' ? (async () => p())() : p
  const err = await run.then(
    () => undefined,
    (e: unknown) => e,
  )
  expect(err, `expected ${code}`).toMatchObject({ code })
  if (details) expect((err as { details?: unknown }).details).toMatchObject(details)
}
