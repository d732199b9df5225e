/** Per-thread CPU of a process from /proc (Linux), shared by bench/hub.ts and bench/peers.ts. */
import { readdirSync, readFileSync } from 'node:fs'

/** CPU ms per thread of a process so far (/proc/PID/task/TID/stat: utime + stime), the main thread as `main`. */
export function threadCpu(pid: number): Map<string, number> {
  const out = new Map<string, number>()
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    let stat: string
    try {
      stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8')
    } catch {
      continue
    }
    // The main thread runs the event loop; libuv-worker: the pool (signature checks); node: V8's workers (GC).
    const name = tid === String(pid) ? 'main' : stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'))
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
    // Fields 14 and 15 of stat, in clock ticks (100 a second on Linux).
    out.set(name, (out.get(name) ?? 0) + (Number(f[11]) + Number(f[12])) * 10)
  }
  return out
}
/** Per thread name: CPU ms between two readings, and its share of one core over `wallMs`. */
export const cpuDelta = (a: Map<string, number>, b: Map<string, number>, wallMs: number) =>
  Object.fromEntries(
    [...b]
      .map(([k, v]) => [k, v - (a.get(k) ?? 0)] as const)
      .filter(([, d]) => d > 0)
      .map(([k, d]) => [k, { cpuMs: d, cores: Math.round((d / wallMs) * 100) / 100 }]),
  )
