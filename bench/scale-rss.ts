/**
 * A real daemon's memory at growing numbers of spaces (issue 41): `npm run bench -- --json
 * --only scaleRss`. For each N of `BENCH_SCALE_RSS_SPACES` (default 10,100,1000), an account of
 * N spaces of `BENCH_SCALE_SPACE_OBJECTS` (1,000) small objects is filled in process (as
 * bench/scale.ts fills it), then `svc serve` starts on it as a user runs it (the launcher on
 * dist/cli, built first in this run), with the default memory budget. A query runs on every
 * space once, least recently used first (each opens its space; the budget closes the least
 * recently used ones), and the daemon's VmRSS is read after it (`rssMB`), then again once it has
 * idled 45 s (`rssIdleMB`). Targets: RSS <= 1 GB at 1,000 spaces, and flat past the budget
 * (`rssRatio`: RSS at the largest N over RSS at the smallest).
 * The in-process figures of bench/scale.ts (heap after GC) cannot show this: that process
 * also filled the account, and its RSS keeps what the fill took.
 */
import { rmSync } from 'node:fs'
import { buildCli } from '../scripts/build.ts'
import { ok, startDaemon, stopDaemon } from '../test/e2e/daemons.ts'
import { rssMB } from './peers/ipc-system.ts'
import { fillSpaces } from './scale.ts'

const COUNTS = (process.env.BENCH_SCALE_RSS_SPACES ?? '10,100,1000').split(',').map(Number)
const OBJECTS = Number(process.env.BENCH_SCALE_SPACE_OBJECTS ?? 1_000)
/** Polls 5 s apart of an idle daemon's RSS: V8 shrinks its heap within about 30 s of idling. */
const SETTLE_POLLS = 9
const progress = (m: string) => process.stderr.write(`[bench scaleRss] ${m}\n`)

async function measure(spaces: number) {
  progress(`filling ${spaces} x ${OBJECTS}`)
  const { root, ids } = await fillSpaces(spaces, OBJECTS)
  try {
    const t0 = performance.now()
    const d = await startDaemon(root, { mdns: false, built: true })
    try {
      await ok(d, 'GET', '/v1/health')
      const healthMs = performance.now() - t0
      const q0 = performance.now()
      for (const id of ids) await ok(d, 'POST', `/v1/spaces/${id}/objects/query`, { filter: { 'core.tags': 't1' }, limit: 10 })
      const perSpaceQueryMs = (performance.now() - q0) / ids.length
      const rss = await rssMB(d.proc.pid!)
      // V8 frees what its collector no longer uses once the process idles (its memory reducer
      // runs after some seconds without allocation): RSS at rest, polled until it settles.
      let settled = rss
      for (let t = 0; t < SETTLE_POLLS; t++) {
        await new Promise((r) => setTimeout(r, 5_000))
        settled = await rssMB(d.proc.pid!)
      }
      progress(`${spaces} spaces: RSS ${rss} MB after a query on each, ${settled} MB after ${SETTLE_POLLS * 5} s idle`)
      return {
        spaces,
        objectsPerSpace: OBJECTS,
        spawnToHealthMs: Math.round(healthMs),
        perSpaceQueryMs: Math.round(perSpaceQueryMs * 10) / 10,
        rssMB: rss,
        rssIdleMB: settled,
      }
    } finally {
      await stopDaemon(d, 'SIGTERM')
    }
  } finally {
    rmSync(root, { recursive: true, force: true })
  }
}

export async function benchScaleRss(): Promise<Record<string, unknown>> {
  progress('building dist/cli')
  await buildCli()
  const runs = []
  for (const n of COUNTS) runs.push(await measure(n))
  const last = runs[runs.length - 1]
  return {
    runs,
    rssRatio: Math.round((last.rssMB / runs[0].rssMB) * 100) / 100,
    rssIdleRatio: Math.round((last.rssIdleMB / runs[0].rssIdleMB) * 100) / 100,
    target: { rssMBAt1000: 1024 },
    pass: last.spaces < 1000 || last.rssMB <= 1024,
    passIdle: last.spaces < 1000 || last.rssIdleMB <= 1024,
  }
}
