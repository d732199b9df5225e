/**
 * The hostile side of bench/hostile.ts, run as its own process (a stranger's machine):
 * `node --import tsx bench/hostile-flood.ts <daemon multiaddr> <ms>`. Floods the daemon at full
 * speed with every kind of junk a stranger can send, each attempt from a fresh libp2p key (a
 * new peer id every time), and prints one JSON line of counts when done.
 */
import { randomBytes } from 'node:crypto'
import { multiaddr } from '@multiformats/multiaddr'
import type { Stream } from '@libp2p/interface'
import * as lp from 'it-length-prefixed'
import { createSvcNode, type SvcLibp2p } from '../node/p2p/libp2p-node.ts'
import { P2P } from '../sync/p2p/constants.ts'
import { Libp2pTransport } from '../sync/p2p/libp2p-transport.ts'
import { nodeCryptoProvider } from '../node/crypto/node-provider.ts'
import { systemEnv } from '../sync/core/env.ts'
import { identityOf, keyPairFromSeed } from '../sync/crypto/keys.ts'
import { encodeMessage } from '../sync/protocol/messages.ts'
import { SyncSession } from '../sync/protocol/session.ts'
import { SyncDriver } from '../sync/protocol/sync-driver.ts'
import { realTimer } from '../node/daemon/p2p-service.ts'

const [addr, msArg] = process.argv.slice(2)
const end = Date.now() + Number(msArg ?? 10_000)
const MiB = 1024 * 1024
const fresh = () => keyPairFromSeed(new Uint8Array(randomBytes(32)))
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

const counts: Record<string, number> = {}
const bump = (k: string, n = 1) => (counts[k] = (counts[k] ?? 0) + n)

async function withStranger(kind: string, fn: (node: SvcLibp2p) => Promise<void>) {
  const node = await createSvcNode({ deviceKey: fresh(), listen: ['/ip4/127.0.0.1/tcp/0'] })
  bump('peerIds')
  try {
    await fn(node)
    bump(`${kind}.done`)
  } catch {
    bump(`${kind}.refused`)
    // Refused at connect (libp2p's per-host rate, or a back-off): try again soon, fresh key.
    await sleep(20)
  } finally {
    try {
      await node.stop()
    } catch {
      /* already down */
    }
  }
}

async function pour(s: Stream, chunks: Iterable<Uint8Array>) {
  for (const c of chunks) {
    if (s.status !== 'open' || Date.now() > end) return
    bump('bytesSent', c.byteLength)
    if (!s.send(c)) await s.onDrain({ signal: AbortSignal.timeout(5_000) })
  }
}

const open = (node: SvcLibp2p) => node.dialProtocol(multiaddr(addr), P2P.headSyncProtocol, { signal: AbortSignal.timeout(5_000) })

const zeros = new Uint8Array(4 * MiB)
const junk = new Uint8Array(4 * MiB)
for (let i = 0; i < junk.length; i += 2) {
  junk[i] = 1
  junk[i + 1] = 0xff
}
const randomSpace = () => identityOf(fresh().publicKey)

/** Well-formed messages a stranger may not send before it authenticates. */
function* preAuthMessages(): Generator<Uint8Array> {
  for (let i = 0; Date.now() < end; i++) {
    const m =
      i % 2
        ? encodeMessage({ type: 'sync', spaceId: randomSpace(), req: i, fp: randomBytes(8), count: 1 + (i % 1000) })
        : encodeMessage({ type: 'step', spaceId: randomSpace(), req: i, hop: 1, ranges: [], heads: [], wants: [i], changes: [randomBytes(200)] })
    yield lp.encode.single(m).subarray()
  }
}

const loops: Record<string, () => Promise<void>> = {
  zeroFrames: () => withStranger('zeroFrames', async (node) => pour(await open(node), [zeros])),
  junkFrames: () => withStranger('junkFrames', async (node) => pour(await open(node), [junk])),
  preAuth: () => withStranger('preAuth', async (node) => pour(await open(node), preAuthMessages())),
  // An authenticated stranger (a fresh account of its own) asking about random spaces.
  randomSpaces: () =>
    withStranger('randomSpaces', async (node) => {
      const crypto = nodeCryptoProvider({ verify: 'sync' })
      const transport = await Libp2pTransport.start(node)
      const session = new SyncSession({ host: { space: () => undefined }, key: fresh(), peerId: transport.peerId, crypto, env: systemEnv })
      const driver = new SyncDriver({ transport, session, timer: realTimer, timeoutMs: 2_000 })
      const up = new Promise<string>((r) => transport.onPeerUp(r))
      await node.dial(multiaddr(addr), { signal: AbortSignal.timeout(5_000) })
      const peer = await Promise.race([up, sleep(5_000).then(() => undefined)])
      if (!peer) throw new Error('no link')
      for (let i = 0; Date.now() < end && transport.peers().includes(peer); i++) {
        try {
          transport.send(peer, encodeMessage({ type: 'sync', spaceId: randomSpace(), req: i, fp: randomBytes(8), count: 1 }))
          bump('randomSpaces.syncs')
        } catch {
          break
        }
        if (i % 64 === 63) await sleep(0)
      }
      await driver.close()
    }),
}

await Promise.all(
  Object.values(loops).map(async (loop) => {
    while (Date.now() < end) await loop()
  }),
)
process.stdout.write(JSON.stringify(counts) + '\n')
process.exit(0)
