/**
 * svc's own bound for the writes and the first sync (issue 40, "Report"): what its guarantees
 * cost with nothing else around them. For N records of the benchmark's shape, each as one
 * change's payload: seal (XChaCha20-Poly1305) and sign (Ed25519) every one, as a write must, and
 * open and verify every one, as a receiver must before applying it, on the daemon's provider
 * (signatures on the thread pool, pipelined as ingest runs them). Neither includes the change
 * header's encoding, storage, indexes or the network.
 */
import { nodeCryptoProvider } from '../../node/crypto/node-provider.ts'
import { encodeCanonical } from '../../sync/core/encoding.ts'
import { systemEnv } from '../../sync/core/env.ts'
import { open, seal } from '../../sync/crypto/box.ts'
import { keyPairFromSeed } from '../../sync/crypto/keys.ts'
import { now, recordFields, recordId } from './harness.ts'

const INFLIGHT = 4
const CHUNK = 1000

export async function cryptoBound(n: number) {
  const crypto = nodeCryptoProvider({ verify: 'threadpool' })
  const key = keyPairFromSeed(new Uint8Array(32).fill(7))
  const readKey = new Uint8Array(32).fill(9)
  // A change header's worth of bytes beside the payload (ids, parents, clock, key id).
  const header = new Uint8Array(160).fill(1)
  const t0 = now()
  const signed: Array<{ msg: Uint8Array; sig: Uint8Array; payload: Uint8Array }> = []
  for (let i = 0; i < n; i++) {
    const f = recordFields(i)
    const payload = seal(
      systemEnv,
      readKey,
      encodeCanonical({ ops: [{ op: 'set', ds: 'records', id: recordId(i), path: '', value: { ...f, at: { $date: f.at } } }] }),
      undefined,
      crypto.aead,
    )
    const msg = new Uint8Array(header.length + payload.length)
    msg.set(header)
    msg.set(payload, header.length)
    signed.push({ msg, sig: await crypto.sign(key.privateKey, msg), payload })
  }
  const writeMs = now() - t0
  const t1 = now()
  const inflight: Array<Promise<boolean[]>> = []
  let good = 0
  const settle = async () => (good += (await inflight.shift()!).filter(Boolean).length)
  for (let i = 0; i < n; i += CHUNK) {
    const part = signed.slice(i, i + CHUNK)
    for (const p of part) open(readKey, p.payload, undefined, crypto.aead)
    inflight.push(Promise.all(part.map((p) => crypto.verify(key.publicKey, p.msg, p.sig))))
    if (inflight.length >= INFLIGHT) await settle()
  }
  while (inflight.length) await settle()
  if (good !== n) throw new Error('crypto bound: a signature failed')
  const readMs = now() - t1
  return { cryptoBoundWritesPerSec: Math.round(n / (writeMs / 1000)), cryptoBoundSyncMs: Math.round(readMs) }
}
