import { runTransportConformance } from '../../sync/protocol/transport-conformance.ts'
import { SYNC_LIMITS } from '../../sync/protocol/limits.ts'
import { SimNetwork, type NetFaults } from '../../sim/network.ts'
import { Prng } from '../../sim/prng.ts'
import { Scheduler } from '../../sim/scheduler.ts'

function simFixture(faults: NetFaults, seed: number) {
  return async () => {
    const sched = new Scheduler()
    const net = new SimNetwork(sched, new Prng(seed), faults, SYNC_LIMITS.maxMessageBytes)
    // Backpressure on: a sender that waits for drain has at most this much in flight.
    net.sendWatermark = 2 * 1024 * 1024
    // Links come up as events: the suite's handlers are registered before they fire.
    const a = net.attach('a')
    const b = net.attach('b')
    return { a, b, connect: async () => undefined, settle: () => sched.run() }
  }
}

// The simulator's transport as the liveness phase runs it: delay, no loss, FIFO links.
runTransportConformance('sim', simFixture({ loss: 0, dup: 0, delayMin: 1, delayMax: 20, ordered: true }, 1))
// With reordering on, it says so (ordered = false) and still keeps every other promise.
runTransportConformance('sim, reordering', simFixture({ loss: 0, dup: 0, delayMin: 1, delayMax: 300, ordered: false }, 2))
