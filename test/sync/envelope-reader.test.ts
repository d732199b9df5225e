import { describe, expect, it } from 'vitest'
import fc from 'fast-check'
import { encode as cborEncode } from 'cborg'
import { readEnvelope, type EnvelopeParts } from '../../sync/dag/envelope-reader.ts'
import { applyByteEdits, byteEdits } from '../byte-edits.ts'
import { decodeChange, decodeEnvelope, derivedRoot, signChange, MalformedChange } from '../../sync/dag/change.ts'
import { keyPairFromSeed } from '../../sync/crypto/keys.ts'
import { nobleProvider } from '../../sync/crypto/provider.ts'
import { encodeCanonical } from '../../sync/core/encoding.ts'
import { toBase58 } from '../../sync/core/ids.ts'

const id = (n: number) => toBase58(new Uint8Array(32).fill(n))

async function sampleChanges(): Promise<Uint8Array[]> {
  const key = keyPairFromSeed(new Uint8Array(32).fill(7))
  const out: Uint8Array[] = [derivedRoot('', encodeCanonical({ type: 'root', seed: 's' })).raw, derivedRoot(id(1), new Uint8Array(0)).raw]
  const shapes = [
    { prevIds: [id(2)], seq: 1, lamport: 1, timestamp: 0, payload: new Uint8Array(3) },
    { prevIds: [id(2), id(3), id(4)].sort(), seq: 23, lamport: 24, timestamp: 255, payload: new Uint8Array(23) },
    { prevIds: Array.from({ length: 30 }, (_, i) => id(i + 10)).sort(), seq: 256, lamport: 65535, timestamp: 65536, payload: new Uint8Array(300) },
    { prevIds: [id(5)], seq: 2 ** 32 - 1, lamport: 2 ** 32, timestamp: Number.MAX_SAFE_INTEGER, payload: new Uint8Array(70_000) },
  ]
  for (const sh of shapes) {
    const c = await signChange(nobleProvider, key, { spaceId: id(1), treeId: id(9), aclHeadId: id(1), readKeyId: id(6), ...sh })
    out.push(c.raw)
  }
  return out
}

/** The decoded values, without the reader's own bookkeeping. */
const values = (p: EnvelopeParts | undefined) => p && { header: p.header, signed: p.signed, signature: p.signature }

/** What a decode gives, comparable: the parts, or the fact that it threw. */
function slow(raw: Uint8Array) {
  try {
    return values(decodeEnvelope(raw))
  } catch (err) {
    if (err instanceof MalformedChange) return 'malformed'
    throw err
  }
}

describe('readEnvelope (the direct change reader)', () => {
  it('reads every well-formed change itself, to exactly what cborg decodes', async () => {
    for (const raw of await sampleChanges()) {
      const fast = readEnvelope(raw)
      expect(fast).toBeDefined()
      expect(values(fast)).toEqual(values(decodeEnvelope(raw)))
      expect(decodeChange(raw).signed).toEqual(decodeEnvelope(raw).signed)
    }
  })

  it('never accepts bytes cborg refuses, nor reads them differently (mutated changes)', async () => {
    const samples = await sampleChanges()
    const small = samples.filter((r) => r.length < 2000)
    fc.assert(
      fc.property(fc.constantFrom(...small), byteEdits(4), (raw, edits) => {
        const bytes = applyByteEdits(raw, edits)
        const fast = readEnvelope(bytes)
        if (fast !== undefined) expect(values(fast)).toEqual(slow(bytes))
      }),
      { numRuns: 3000 },
    )
  })

  it('leaves non-minimal, indefinite, oversized and trailing forms to cborg', () => {
    const sig = new Uint8Array(64)
    const header = (seq: unknown) => cborEncode([1, id(1), id(9), [id(2)], id(1), id(3), seq, 1, 1, '', new Uint8Array(1)])
    const good = cborEncode([header(5), sig])
    expect(readEnvelope(good)).toBeDefined()
    // seq 5 as a one-byte-argument uint (0x18 0x05): not minimal.
    const h = header(5)
    const at = h.indexOf(0x05, h.length - 8)
    const nonMinimal = Uint8Array.from([...h.subarray(0, at), 0x18, ...h.subarray(at)])
    expect(readEnvelope(cborEncode([nonMinimal, sig]))).toBeUndefined()
    expect(readEnvelope(cborEncode([header(2 ** 53), sig]))).toBeUndefined() // cborg gives a BigInt
    expect(readEnvelope(Uint8Array.from([...good, 0]))).toBeUndefined() // trailing byte
    expect(readEnvelope(Uint8Array.from([0x9f, ...good.subarray(1), 0xff]))).toBeUndefined() // indefinite array
    expect(readEnvelope(cborEncode([cborEncode([1, 'é']), sig]))).toBeUndefined() // not base58 text
    for (const bad of [new Uint8Array(0), Uint8Array.of(0x82), Uint8Array.of(0x82, 0x5a, 0xff, 0xff, 0xff, 0xff)]) expect(readEnvelope(bad)).toBeUndefined()
  })
})
