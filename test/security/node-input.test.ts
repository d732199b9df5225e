import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { SvcLibp2p } from '../../node/p2p/libp2p-node.ts'
import { headSyncStream, pour, probeHealth, rssOf, startTargetDaemon, stranger, type TargetDaemon } from './node-daemon.ts'

/**
 * Issue 11, "A stranger stalls the daemon before authenticating": a real daemon (child
 * process) and a stranger with a fresh libp2p key on loopback. While the stranger pours junk on
 * the head-sync protocol, `GET /v1/health` must keep answering and the daemon's memory must
 * stay bounded. The bound is for liveness, not speed (bench/hostile.ts measures): generous, as
 * tests share a loaded machine; before the fix a single probe took 22 to 37 s.
 */
const LIVENESS_MS = 1_000
const MAX_RSS_GROWTH = 256 * 1024 * 1024
const MiB = 1024 * 1024

let d: TargetDaemon
const nodes: SvcLibp2p[] = []
beforeAll(async () => {
  d = await startTargetDaemon()
}, 60_000)
afterAll(async () => {
  await Promise.all(nodes.map(async (n) => n.stop()))
  await d?.close()
})

/** Runs one flood from a fresh stranger while probing health; returns the worst latency and RSS growth. */
async function underFlood(chunks: () => Iterable<Uint8Array>, ms: number) {
  // Warm the daemon's HTTP path first so the first probe measures the flood, not a cold route.
  for (let i = 0; i < 5; i++) await (await fetch(`${d.url}/v1/health`)).arrayBuffer()
  const rss0 = rssOf(d.served.proc.pid!)
  const node = await stranger()
  nodes.push(node)
  const probe = probeHealth(d.url, 10)
  let peak = rss0
  const sampler = setInterval(() => (peak = Math.max(peak, rssOf(d.served.proc.pid!))), 25)
  const end = Date.now() + ms
  // Keep the pressure on for the whole window: a reset stream is reopened (the peer's id may
  // be refused by then, which is the point).
  while (Date.now() < end) {
    const s = await headSyncStream(node, d.addr).catch(() => undefined)
    if (!s) {
      await new Promise((r) => setTimeout(r, 50))
      continue
    }
    await Promise.race([pour(s, chunks()), new Promise((r) => setTimeout(r, Math.max(0, end - Date.now())))])
  }
  const times = await probe.stop()
  clearInterval(sampler)
  await node.stop()
  return { worst: Math.max(...times), probes: times.length, rssGrowth: peak - rss0 }
}

describe('A stranger stalls the daemon before authenticating', () => {
  it('4 MiB of zero bytes on the head-sync protocol: health answers within the liveness bound, memory stays bounded', async () => {
    const zeros = () => [new Uint8Array(4 * MiB)]
    const r = await underFlood(zeros, 3_000)
    console.info('flood', JSON.stringify(r))
    expect(r.probes).toBeGreaterThan(5)
    expect(r.worst).toBeLessThan(LIVENESS_MS)
    expect(r.rssGrowth).toBeLessThan(MAX_RSS_GROWTH)
  }, 90_000)

  it('a stream of tiny valid-length junk frames: health answers within the liveness bound, memory stays bounded', async () => {
    // Frames of one byte (prefix 0x01, then junk), 4 MiB per burst.
    const junk = () => {
      const b = new Uint8Array(4 * MiB)
      for (let i = 0; i < b.length; i += 2) {
        b[i] = 1
        b[i + 1] = 0xff
      }
      return [b]
    }
    const r = await underFlood(junk, 3_000)
    console.info('flood', JSON.stringify(r))
    expect(r.probes).toBeGreaterThan(5)
    expect(r.worst).toBeLessThan(LIVENESS_MS)
    expect(r.rssGrowth).toBeLessThan(MAX_RSS_GROWTH)
  }, 90_000)
})
