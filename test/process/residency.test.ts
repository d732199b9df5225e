import { rmSync } from 'node:fs'
import type { FastifyInstance } from 'fastify'
import { afterEach, describe, expect, it } from 'vitest'
import { AccountLifecycle } from '../../node/daemon/account-lifecycle.ts'
import { DaemonHost } from '../../node/daemon/daemon-host.ts'
import { buildApp } from '../../server/app.ts'
import { stopGracefully } from '../../server/lifecycle.ts'
import { systemEnv } from '../../sync/core/env.ts'
import type { MemoryBudgetOptions } from '../../sync/space/residency.ts'
import { bootApp, call, ok } from '../routes/helpers.ts'
import { serve, stop, type Served } from '../server/process.ts'

/**
 * Issue 41 / 42 item 2: spaces open on demand and by recency in the background, one memory
 * budget closes the idle ones (sync/space/residency.ts), and a daemon holding more objects than
 * its heap fits answers rather than crash. Real SQLite, real daemon processes for the last.
 */

const roots: string[] = []
afterEach(() => {
  for (const r of roots.splice(0)) rmSync(r, { recursive: true, force: true })
})

const obj = (typeId: string, i: number) => ({ types: [typeId], initialProperties: { core: { name: `Object ${i}`, description: i % 10 ? 'plain' : 'tenth', tags: [`t${i % 4}`] } } })

/** An account with `spaces` spaces of `objects` objects each, created (and so used) in order: the first is the least recently used. */
async function fill(spaces: number, objects: number) {
  const b = await bootApp()
  const ids: string[] = []
  for (let s = 0; s < spaces; s++) {
    const id = (await ok<{ id: string }>(call(b.app, 'POST', '/v1/spaces', { name: `Space ${s}` }), 201)).id
    const S = `/v1/spaces/${id}`
    const typeId = (await ok<{ id: string }>(call(b.app, 'POST', `${S}/types`, { xKey: 'task', name: 'Task' }), 201)).id
    for (let start = 0; start < objects; start += 500) {
      const batch = Array.from({ length: Math.min(500, objects - start) }, (_, k) => obj(typeId, start + k))
      await ok(call(b.app, 'POST', `${S}/objects/batch`, { objects: batch }), 201)
    }
    ids.push(id)
  }
  await stopGracefully(b.app, 1000)
  roots.push(b.root)
  return { root: b.root, ids }
}

async function boot(root: string, memoryBudget: MemoryBudgetOptions) {
  const engine = new DaemonHost({ dataRoot: root, noMdns: true, p2p: false, memoryBudget })
  const session = new AccountLifecycle({ dataRoot: root, mode: 'standalone', engine, env: systemEnv })
  await session.bootAtStart()
  const app: FastifyInstance = buildApp({ session, engine })
  return { app, engine, account: engine.account() }
}

const tenth = (app: FastifyInstance, spaceId: string) =>
  ok<{ records: Array<{ id: string; core: { name: string } }> }>(
    call(app, 'POST', `/v1/spaces/${spaceId}/objects/query`, { filter: { 'core.description': 'tenth' }, sort: ['core.name'], limit: 500 }),
  )

describe('spaces open on demand under one memory budget', () => {
  it('a request opens its space ahead of the background opening, which goes by recency; the list answers from summaries', async () => {
    const { root, ids } = await fill(8, 200)
    // A budget the first opened space fills: the background opens the most recent one, no more.
    const d = await boot(root, { bytes: 1 })
    try {
      const oldest = ids[0]
      expect(d.account.isClosed(oldest)).toBe(true)
      const found = await tenth(d.app, oldest)
      expect(found.records.length).toBe(20)
      expect(d.account.held(oldest)).toBeDefined()
      await d.account.allLoaded()
      // The background opened the most recently used space and stopped at the budget.
      expect(d.account.held(ids[7])).toBeDefined()
      for (const id of ids.slice(1, 7)) expect(d.account.isClosed(id)).toBe(true)
      // Every space listed, with its name, none of the closed ones opened for it.
      const listed = await ok<Array<{ id: string; name: string; ownRole: string }>>(call(d.app, 'GET', '/v1/spaces'))
      const names = new Map(listed.map((s) => [s.id, s]))
      for (const [i, id] of ids.entries()) expect(names.get(id)).toMatchObject({ name: `Space ${i}`, ownRole: 'owner' })
      for (const id of ids.slice(1, 7)) expect(d.account.isClosed(id)).toBe(true)
    } finally {
      await stopGracefully(d.app, 1000)
    }
  })

  it('an idle space closes under the budget and reopens with the same answers', async () => {
    const { root, ids } = await fill(3, 1000)
    const d = await boot(root, { bytes: 1, minIdleMs: 200, sweepMs: 3_600_000 })
    try {
      const [a, b] = ids
      const before = await tenth(d.app, a)
      const info = await ok(call(d.app, 'GET', `/v1/spaces/${a}`))
      await tenth(d.app, b)
      await new Promise((r) => setTimeout(r, 250))
      const closed = await d.account.enforceBudget()
      expect(closed).toContain(a)
      expect(d.account.isClosed(a)).toBe(true)
      const listed = await ok<Array<{ id: string }>>(call(d.app, 'GET', '/v1/spaces'))
      expect(listed.find((s) => s.id === a)).toEqual(info)
      // Reopened by the request, answering the same.
      expect(await tenth(d.app, a)).toEqual(before)
      expect(d.account.isClosed(a)).toBe(false)
      expect(await ok(call(d.app, 'GET', `/v1/spaces/${a}`))).toEqual(info)
      // A write after the reopen lands once (the closed replica refuses work; the new one takes it).
      await ok(call(d.app, 'POST', `/v1/spaces/${a}/objects`, { initialProperties: { core: { name: 'Late', description: 'tenth' } } }), 201)
      expect((await tenth(d.app, a)).records.length).toBe(before.records.length + 1)
    } finally {
      await stopGracefully(d.app, 1000)
    }
  })

  it('a space a holder keeps open across restarts (agents) opens first at the next start, whatever the budget', async () => {
    const { root, ids } = await fill(6, 50)
    const first = await boot(root, { bytes: 1 })
    await first.account.opened(ids[1])
    // Kept by a holder that stops with the account (the agents scheduler), not dropped.
    const release = first.account.keepOpen(ids[1], true)
    release()
    await stopGracefully(first.app, 1000)
    const d = await boot(root, { bytes: 1 })
    try {
      await d.account.allLoaded()
      expect(d.account.held(ids[1])).toBeDefined()
      // It fills the budget: nothing else opened, not even the most recently used.
      for (const id of [ids[0], ids[2], ids[3], ids[4], ids[5]]) expect(d.account.isClosed(id)).toBe(true)
      // Dropped by its holder: the next start opens the most recently used instead.
      d.account.keepOpen(ids[1], true)(true)
      await d.account.opened(ids[3])
    } finally {
      await stopGracefully(d.app, 1000)
    }
    const again = await boot(root, { bytes: 1 })
    try {
      await again.account.allLoaded()
      expect(again.account.isClosed(ids[1])).toBe(true)
      expect(again.account.held(ids[3])).toBeDefined()
    } finally {
      await stopGracefully(again.app, 1000)
    }
  })

  it('a daemon whose heap holds far less than its data answers queries on every space and does not crash', async () => {
    // 40 spaces of 1,000 objects: about 105 MB of rows and tree metas if every space were open
    // (2.6 KB an object, issue 42), in a 112 MB heap that also holds the daemon itself.
    const { root, ids } = await fill(40, 1000)
    let d: Served | undefined
    try {
      d = await serve(['--data', root], { env: { NODE_OPTIONS: '--max-old-space-size=112' } })
      const served = d
      const q = async (id: string) => {
        const res = await fetch(`${served.url}/v1/spaces/${id}/objects/query`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ filter: { 'core.description': 'tenth' }, limit: 500 }),
        })
        expect(res.status).toBe(200)
        return ((await res.json()) as { records: unknown[] }).records.length
      }
      for (const id of ids) expect(await q(id)).toBe(100)
      for (const id of ids.slice(0, 10)) expect(await q(id)).toBe(100)
      expect(d.proc.exitCode).toBeNull()
      const health = await fetch(`${d.url}/v1/health`)
      expect(health.status).toBe(200)
    } finally {
      if (d) {
        const code = await stop(d)
        expect({ code, signal: d.proc.signalCode, stderr: d.stderr().slice(-2000) }).toMatchObject({ code: 0 })
      }
    }
  }, 300_000)
})
