import { afterAll, describe, expect, it } from 'vitest'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { api, datasetState, IN_NETNS, ok, startDaemon, stopDaemon, until, type Daemon } from './daemons.ts'

const DURATION_MS = 60_000
const dirs: string[] = []
const all: Daemon[] = []
afterAll(async () => {
  for (const d of all) await stopDaemon(d, 'SIGKILL')
  for (const d of dirs) rmSync(d, { recursive: true, force: true })
})

describe.runIf(IN_NETNS)('five daemons of one account on one LAN', () => {
  it('write concurrently for 60 s while one is stopped and restarted twice: all converge, nothing acknowledged is lost', async () => {
    const dataDirs = Array.from({ length: 5 }, () => mkdtempSync(join(tmpdir(), 'svc-five-')))
    dirs.push(...dataDirs)
    const d: Daemon[] = []
    d[0] = await startDaemon(dataDirs[0])
    all.push(d[0])
    const { mnemonic } = await ok(d[0], 'POST', '/v1/auth', {})
    for (let i = 1; i < 5; i++) {
      d[i] = await startDaemon(dataDirs[i])
      all.push(d[i])
      await ok(d[i], 'POST', '/v1/auth', { mnemonic })
    }
    const space = await ok(d[0], 'POST', '/v1/spaces', { name: 'Five' })
    const S = `/v1/spaces/${space.id}`
    const obj = (await ok(d[0], 'POST', `${S}/objects`, {})).objectId
    await until(
      'the object on every daemon',
      async () => {
        for (const x of d) if ((await api(x, 'POST', `${S}/query`, { objectId: obj, dataset: 'load', limit: 1 })).status !== 200) return false
        return true
      },
      120_000,
    )

    const acked: string[] = []
    let stopAt = Date.now() + DURATION_MS
    let down = false
    const writer = async (i: number) => {
      for (let k = 0; Date.now() < stopAt; k++) {
        if (i === 4 && down) {
          await new Promise((r) => setTimeout(r, 100))
          continue
        }
        const id = `d${i}-${k}`
        const r = await api(d[i], 'POST', `${S}/modify`, {
          objectId: obj,
          dataset: 'load',
          records: [
            { id, ops: [{ type: '$set', path: 'k', value: k }] },
            { id: 'shared', ops: [{ type: '$set', path: `by.d${i}`, value: k }] },
          ],
        }).catch(() => undefined)
        if (r?.status === 200) acked.push(id)
        await new Promise((res) => setTimeout(res, 150))
      }
    }
    // Daemon 4 goes down twice: once killed outright, once stopped cleanly, and comes back.
    const chaos = (async () => {
      const cycle = async (signal: NodeJS.Signals) => {
        await new Promise((r) => setTimeout(r, 12_000))
        down = true
        await stopDaemon(d[4], signal)
        await new Promise((r) => setTimeout(r, 4_000))
        d[4] = await startDaemon(dataDirs[4])
        all.push(d[4])
        await until('daemon 4 booted', async () => (await ok(d[4], 'GET', '/v1/health')).account !== '')
        down = false
      }
      await cycle('SIGKILL')
      await cycle('SIGTERM')
    })()
    await Promise.all([0, 1, 2, 3, 4].map(writer))
    await chaos
    stopAt = 0
    expect(acked.length).toBeGreaterThan(500)

    let last = ''
    try {
      await until(
        'all five converge with every acknowledged write',
        async () => {
          const states = await Promise.all(d.map((x) => datasetState(x, space.id, obj, 'load')))
          last = JSON.stringify(states.map((s, i) => ({ daemon: i, length: s.length, missing: acked.filter((id) => !s.includes(`"id":"${id}"`)).slice(0, 5) })))
          return states.every((s) => s === states[0]) && acked.every((id) => states[0].includes(`"id":"${id}"`))
        },
        180_000,
        1000,
      )
    } catch (err) {
      const debug = await Promise.all(
        d.map(async (x) => ({
          p2p: (await api(x, 'GET', '/v1/debug/p2p')).json?.peers?.length,
          dbg: (await api(x, 'GET', `${S}/debug`)).json,
          st: (await api(x, 'GET', `${S}/sync-status`)).json,
        })),
      )
      throw new Error(`${(err as Error).message}: ${last} ${JSON.stringify(debug)}`, { cause: err })
    }
  }, 600_000)
})
