import { randomBytes } from 'node:crypto'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { multiaddr } from '@multiformats/multiaddr'
import type { Stream } from '@libp2p/interface'
import { keyPairFromSeed } from '../../sync/crypto/keys.ts'
import { createSvcNode, type SvcLibp2p } from '../../node/p2p/libp2p-node.ts'
import { P2P } from '../../sync/p2p/constants.ts'
import { serve, stop, type Served } from '../server/process.ts'

/** A real `svc serve` child process with an account booted, reachable over libp2p on loopback. */
export interface TargetDaemon {
  served: Served
  dir: string
  url: string
  peerId: string
  addr: string
  close(): Promise<void>
}

export async function startTargetDaemon(): Promise<TargetDaemon> {
  const dir = mkdtempSync(join(tmpdir(), 'svc-hostile-'))
  const served = await serve(['--data', dir], { env: { SVC_P2P_LISTEN: '/ip4/127.0.0.1/tcp/0' } })
  const res = await fetch(`${served.url}/v1/auth`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' })
  if (res.status >= 300) throw new Error(`auth failed: ${res.status} ${await res.text()}`)
  const p2p = (await (await fetch(`${served.url}/v1/debug/p2p`)).json()) as { peerId: string; listen: string[] }
  const addr = p2p.listen.find((a) => a.includes('/127.0.0.1/')) ?? p2p.listen[0]
  return {
    served,
    dir,
    url: served.url,
    peerId: p2p.peerId,
    addr: addr.includes('/p2p/') ? addr : `${addr}/p2p/${p2p.peerId}`,
    async close() {
      await stop(served)
      rmSync(dir, { recursive: true, force: true })
    },
  }
}

/** A stranger: a libp2p node with a key nobody has seen, on loopback. */
export async function stranger(): Promise<SvcLibp2p> {
  return createSvcNode({ deviceKey: keyPairFromSeed(new Uint8Array(randomBytes(32))), listen: ['/ip4/127.0.0.1/tcp/0'] })
}

/** Opens the head-sync protocol on the daemon from `node`. */
export async function headSyncStream(node: SvcLibp2p, addr: string): Promise<Stream> {
  return node.dialProtocol(multiaddr(addr), P2P.headSyncProtocol, { signal: AbortSignal.timeout(10_000) })
}

/** Sends bytes as fast as the stream takes them; stops quietly when the daemon resets it. */
export async function pour(stream: Stream, chunks: Iterable<Uint8Array>): Promise<void> {
  try {
    for (const c of chunks) {
      if (stream.status !== 'open') return
      if (!stream.send(c)) await stream.onDrain({ signal: AbortSignal.timeout(10_000) })
    }
  } catch {
    /* reset by the daemon: what a hostile sender expects */
  }
}

/** Resident set size of a process, in bytes (Linux). */
export function rssOf(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))
  return m ? Number(m[1]) * 1024 : 0
}

/** Times `GET /v1/health` repeatedly until `stop()` is called; resolves to every latency (ms). */
export function probeHealth(url: string, everyMs = 20): { stop: () => Promise<number[]> } {
  const times: number[] = []
  let running = true
  const loop = (async () => {
    while (running) {
      const t0 = performance.now()
      const res = await fetch(`${url}/v1/health`, { signal: AbortSignal.timeout(60_000) })
      await res.arrayBuffer()
      times.push(performance.now() - t0)
      await new Promise((r) => setTimeout(r, everyMs))
    }
  })()
  return {
    async stop() {
      running = false
      await loop
      return times
    },
  }
}

export const tmpDir = (prefix: string) => mkdtempSync(join(tmpdir(), prefix))
