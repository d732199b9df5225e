/**
 * Where a phase's time went on two cores: CPU per thread of each process taking part, from
 * /proc (bench/thread-cpu.ts), with each thread's share of one core over the phase.
 */
import { cpuDelta, threadCpu } from '../thread-cpu.ts'
import { now } from './harness.ts'

export function cpuOf(pids: Record<string, number>) {
  const t0 = now()
  const start = Object.fromEntries(Object.entries(pids).map(([k, pid]) => [k, threadCpu(pid)]))
  return {
    done: () => {
      const wall = now() - t0
      return Object.fromEntries(Object.entries(pids).map(([k, pid]) => [k, cpuDelta(start[k], threadCpu(pid), wall)]))
    },
  }
}
