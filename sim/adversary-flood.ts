import { encodeMessage } from '../sync/protocol/messages.ts'
import { TransportError } from '../sync/protocol/transport.ts'
import { malformedFrames, orphanChange, oversizedCounts, randomId, wholeSpaceRanges } from './attacks.ts'
import type { Hostile } from './adversary-types.ts'

/**
 * Attacks on resources: changes that can only be parked, floods of malformed frames and costly
 * steps, and storms of short-lived peer ids.
 */

/** Sybils minted at once, and the gap between batches. */
const SYBIL_BATCH = 32
const SYBIL_GAP_MS = 100
/** Bytes one park-junk action sends, in changes of 16..96 KiB. */
const JUNK_BYTES = 1536 * 1024

/** Signed changes whose parents never arrive, 16..96 KiB each: they can only be parked. */
export async function parkJunk(a: Hostile): Promise<string> {
  const rep = a.peer.replica
  const trees = rep.treeIds()
  const out: Uint8Array[] = []
  let bytes = 0
  while (bytes < JUNK_BYTES) {
    const size = 16 * 1024 + a.r.int(80 * 1024)
    const tree = trees.length && a.r.chance(0.5) ? a.r.pick(trees) : randomId(a.r)
    const c = await orphanChange(a.ctx.crypto, a.peer.key, a.ctx.spaceId, tree, a.ctx.spaceId, size, a.r)
    a.note(c, 'parkJunk', 'rejected', 'change')
    out.push(c.raw)
    bytes += c.raw.length
  }
  return `${out.length} changes, ${bytes} bytes, to ${a.push(out)}`
}

/** Malformed frames, oversized counts, and the step that asks the most work one step may ask. */
export function flood(a: Hostile): string {
  const frames = malformedFrames(a.ctx.spaceId, a.r, 50 + a.r.int(150))
  frames.push(encodeMessage(wholeSpaceRanges(a.ctx.spaceId, a.r)))
  for (const m of oversizedCounts(a.ctx.spaceId, a.r)) frames.push(encodeMessage(m))
  const targets = a.targets()
  for (const to of targets) for (const f of frames) a.send(to, f)
  return `${frames.length} frames to ${targets.length}`
}

/**
 * Mints peer ids for free: each comes up (linked to the honest peers and hubs only), sends each of them
 * a junk frame, and goes away. A storm mints more than the per-peer state bound, a batch at a
 * time.
 */
export function sybil(a: Hostile): string {
  const n = a.spec.sybilStorm && a.sybils === 0 ? a.ctx.sybilStormSize : 4 + a.r.int(12)
  const { net, sched } = a.ctx
  for (let i = 0; i < n; i++) {
    const id = `${a.peer.id}s${a.sybils++}`
    const junk = malformedFrames(a.ctx.spaceId, a.r, 1)[0]
    sched.after(Math.floor(i / SYBIL_BATCH) * SYBIL_GAP_MS, `sybil ${id}`, () => {
      if (!a.ctx.inSafety()) return
      const t = net.attach(id, (other) => other.startsWith('p') || other.startsWith('h'))
      sched.after(20, `sybil ${id} sends`, () => {
        for (const p of t.peers()) {
          try {
            t.send(p, junk)
          } catch (err) {
            if (!(err instanceof TransportError)) throw err
          }
        }
      })
      sched.after(60, `sybil ${id} leaves`, () => t.close())
    })
  }
  return `${n} peer ids`
}
