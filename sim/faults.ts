/**
 * The safety phase's faults (docs/simulation.md, "What a run does"): partitions (isolate, split,
 * swizzle-clog) and crashes, drawn from the run's stream. Each is a no-op once the liveness phase
 * has begun, except heals, which always land.
 */
import type { SimPeer } from './peer.ts'
import type { Simulator } from './simulator.ts'

type Link = [string, string]

/** A crashed peer comes back 0.5..6 s later while the safety phase lasts (liveness restarts the rest). */
export function restartAfterCrash(sim: Simulator, p: SimPeer) {
  p.stop()
  sim.sched.record(`crashed ${p.id}`)
  if (sim.phase === 'safety') {
    sim.sched.after(sim.rng.range(500, 6000), `restart ${p.id}`, async () => {
      if (!p.alive && sim.phase === 'safety') await p.start()
    })
  }
}

/** Schedules every partition and crash of the seed, drawing from the run's stream in a fixed order. */
export function scheduleFaults(sim: Simulator) {
  const ids = sim.peers.map((p) => p.id)
  const allLinks: Link[] = []
  for (let i = 0; i < ids.length; i++) for (let j = i + 1; j < ids.length; j++) allLinks.push([ids[i], ids[j]])
  for (let k = 0; k < sim.cfg.partitions; k++) schedulePartitions(sim, ids, allLinks)
  for (let k = 0; k < sim.cfg.crashes; k++) scheduleCrash(sim)
}

/** One partition of each kind the seed drew; the draws happen even for kinds it did not. */
function schedulePartitions(sim: Simulator, ids: string[], allLinks: Link[]) {
  const { rng, cfg } = sim
  const T = cfg.safetyMs
  const at = rng.int(Math.floor(T * 0.8))
  const dur = rng.range(2000, 8000)
  if (cfg.faults.includes('isolate')) {
    const x = rng.pick(ids)
    partition(
      sim,
      `isolate ${x}`,
      at,
      dur,
      allLinks.filter(([a, b]) => a === x || b === x),
    )
  }
  if (cfg.faults.includes('split')) {
    const order = rng.shuffle(ids)
    const side = new Set(order.slice(0, rng.range(1, ids.length - 1)))
    partition(
      sim,
      'split',
      rng.int(Math.floor(T * 0.8)),
      dur,
      allLinks.filter(([a, b]) => side.has(a) !== side.has(b)),
    )
  }
  if (cfg.faults.includes('swizzle')) scheduleSwizzle(sim, allLinks)
}

function partition(sim: Simulator, label: string, at: number, dur: number, links: Link[]) {
  const { sched, net } = sim
  sched.at(at, `${label} cut ${links.length}`, () => {
    if (sim.phase !== 'safety') return
    links.forEach(([a, b]) => net.cut(a, b))
    sched.after(dur, `${label} heal`, () => links.forEach(([a, b]) => net.restore(a, b)))
  })
}

/**
 * FoundationDB's swizzle-clog: cut a random subset of links one by one, then restore them one
 * by one in another random order.
 */
function scheduleSwizzle(sim: Simulator, allLinks: Link[]) {
  const { rng, sched, net } = sim
  const T = sim.cfg.safetyMs
  const start = rng.int(Math.floor(T * 0.7))
  const subset = rng.shuffle(allLinks).slice(0, rng.range(1, allLinks.length))
  const gap = Math.max(5, Math.min(rng.range(50, 600), Math.floor((T - start) / (2 * subset.length + 1))))
  const cut = new Set<string>()
  subset.forEach(([a, b], i) =>
    sched.at(start + i * gap, `swizzle cut ${a}|${b}`, () => {
      if (sim.phase !== 'safety') return
      net.cut(a, b)
      cut.add(`${a}|${b}`)
    }),
  )
  const healAt = start + subset.length * gap + rng.range(500, 4000)
  rng.shuffle(subset).forEach(([a, b], i) =>
    sched.at(healAt + i * gap, `swizzle heal ${a}|${b}`, () => {
      if (cut.delete(`${a}|${b}`)) net.restore(a, b)
    }),
  )
}

/** A random live peer dies at a random time: at once, or at its 1st..3rd next storage commit. */
function scheduleCrash(sim: Simulator) {
  const { rng, sched } = sim
  sched.at(rng.int(Math.floor(sim.cfg.safetyMs * 0.9)), 'crash', () => {
    if (sim.phase !== 'safety') return
    const candidates = sim.live()
    if (!candidates.length) return
    const p = rng.pick(candidates)
    if (rng.chance(0.5)) {
      sched.record(`crash ${p.id} now`)
      p.storage.crashNow()
    } else {
      const n = rng.range(1, 3)
      sched.record(`crash ${p.id} at commit +${n}`)
      p.storage.armCrash(n)
    }
  })
}
