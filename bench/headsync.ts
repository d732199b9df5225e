/**
 * Head sync vs Negentropy on the same set (issue 3, docs/protocol.md "Cost").
 *
 * N = 100,000 objects, each an (id, heads hash) pair: ids are base58 of 32 random bytes (as
 * change ids are), heads hashes 32 random bytes. For d = 0, 1, 10, 100 differing objects, in two
 * shapes:
 *   - changed: the object exists on both sides with other heads on one (the usual case);
 *   - added:   the object exists on one side only (new objects).
 * Head sync runs its range phase (sync/protocol/reconcile.ts, real message encoding, space id
 * and all) until every differing object is known. Negentropy (nostr-tools' NIP-77 port) runs on
 * the same set, one item per object with the id SHA-256(object id || heads hash) and timestamp
 * 0, so that a changed object is one item removed and one added, as it is for any set
 * reconciliation over (id, version) pairs; it stops when the initiator has nothing more to send.
 * Both count round trips as the messages the initiator sends, and bytes in each direction
 * (Negentropy's hex decoded to bytes; a responder's empty answer counts as its 1 version byte).
 * Negentropy runs with its default 60,000-byte frame limit, the relay default; head sync does not
 * limit its range messages.
 *
 * Targets: d = 0 in 1 round trip of at most 64 bytes each way; for every d, round trips <=
 * Negentropy's and total bytes <= 0.8x Negentropy's.
 */
import { bytesToHex } from '@noble/hashes/utils.js'
import { xorshiftBytes } from '../sync/core/xorshift.ts'
import { sha256 } from '../sync/crypto/hash.ts'
import { toBase58 } from '../sync/core/ids.ts'
import { utf8 } from '../sync/core/encoding.ts'
import { RangeIndex } from '../sync/protocol/range-index.ts'
import { reconcileIndexes, type ReconcileRun } from '../sync/protocol/reconcile.ts'

interface NegStorage {
  insert(timestamp: number, id: string): void
  seal(): void
}
interface Neg {
  initiate(): string
  reconcile(msg: string, onhave?: (id: string) => void, onneed?: (id: string) => void): string | null
}
interface Nip77 {
  Negentropy: new (storage: NegStorage, frameSizeLimit?: number) => Neg
  NegentropyStorageVector: new () => NegStorage
}

const N = 100_000
const DS = [0, 1, 10, 100]

const rng = xorshiftBytes

interface Side {
  roundTrips: number
  bytesOut: number
  bytesIn: number
  bytes: number
}

function negentropy(nip: Nip77, aItems: string[], bItems: string[]): Side & { have: number; need: number } {
  const a = new nip.NegentropyStorageVector()
  const b = new nip.NegentropyStorageVector()
  for (const x of aItems) a.insert(0, x)
  for (const x of bItems) b.insert(0, x)
  a.seal()
  b.seal()
  const na = new nip.Negentropy(a)
  const nb = new nip.Negentropy(b)
  let msg: string | null = na.initiate()
  const out: Side & { have: number; need: number } = { roundTrips: 0, bytesOut: 0, bytesIn: 0, bytes: 0, have: 0, need: 0 }
  while (msg !== null) {
    out.roundTrips++
    out.bytesOut += msg.length / 2
    const reply: string = nb.reconcile(msg) ?? '61'
    out.bytesIn += reply.length / 2
    msg = na.reconcile(
      reply,
      () => out.have++,
      () => out.need++,
    )
  }
  out.bytes = out.bytesOut + out.bytesIn
  return out
}

function ours(run: ReconcileRun): Side {
  return { roundTrips: run.roundTrips, bytesOut: run.bytesOut, bytesIn: run.bytesIn, bytes: run.bytesOut + run.bytesIn }
}

/**
 * The shared set: N + 100 random objects (the last 100 only ever added), both range indexes
 * over the first N, Negentropy's items for every object, and the other heads of "changed".
 * Draws from `rand` in a fixed order (ids and heads, then the other heads), so runs compare.
 */
function buildSets(rand: ReturnType<typeof rng>) {
  const ids: string[] = []
  const heads: Uint8Array[] = []
  for (let i = 0; i < N + 100; i++) {
    ids.push(toBase58(rand(32)))
    heads.push(rand(32))
  }
  const item = (id: string, h: Uint8Array) => {
    const idb = utf8(id)
    const buf = new Uint8Array(idb.length + h.length)
    buf.set(idb)
    buf.set(h, idb.length)
    return bytesToHex(sha256(buf))
  }
  const items = ids.map((id, i) => item(id, heads[i]))
  // Objects N..N+99 exist only in the "added" shape; "changed" alters objects 0..d-1 (random ids).
  const a = new RangeIndex()
  const b = new RangeIndex()
  for (let i = 0; i < N; i++) {
    a.set(ids[i], heads[i])
    b.set(ids[i], heads[i])
  }
  a.fingerprint()
  b.fingerprint()
  const spaceId = toBase58(sha256(utf8('bench space')))
  const other = rand(32)
  const otherItems = ids.slice(0, 100).map((id) => item(id, other))
  return { ids, heads, items, a, b, spaceId, other, otherItems }
}

/** One scenario: head sync on the indexes (left as they were), then Negentropy on the same objects. */
function runScenario(nip: Nip77, sets: ReturnType<typeof buildSets>, shape: 'changed' | 'added', d: number) {
  const { ids, heads, items, a, b, spaceId, other, otherItems } = sets
  // Head sync: change b (changed) or add to a (added), run, undo.
  if (shape === 'changed') for (let i = 0; i < d; i++) b.set(ids[i], other)
  else for (let i = 0; i < d; i++) a.set(ids[N + i], heads[N + i])
  const t = performance.now()
  const run = reconcileIndexes(a, b, { spaceId, salt: 0x5eed0000 + d })
  const headMs = performance.now() - t
  const found = new Set([...run.initiatorMine, ...run.responderMine])
  const expected = shape === 'changed' ? ids.slice(0, d) : ids.slice(N, N + d)
  const complete = expected.every((x) => found.has(x)) && found.size === expected.length
  if (shape === 'changed') for (let i = 0; i < d; i++) b.set(ids[i], heads[i])
  else for (let i = 0; i < d; i++) a.delete(ids[N + i])

  // Negentropy on the same objects.
  const aItems = shape === 'changed' ? items.slice(0, N) : items.slice(0, N + d)
  const bItems = shape === 'changed' ? [...otherItems.slice(0, d), ...items.slice(d, N)] : items.slice(0, N)
  const t2 = performance.now()
  const neg = negentropy(nip, aItems, bItems)
  const negMs = performance.now() - t2

  const hs = ours(run)
  const met = complete && hs.roundTrips <= neg.roundTrips && hs.bytes <= 0.8 * neg.bytes && (d > 0 || (hs.roundTrips === 1 && hs.bytesOut <= 64 && hs.bytesIn <= 64))
  return {
    shape,
    d,
    headSync: { ...hs, complete, ms: Math.round(headMs) },
    negentropy: { ...neg, ms: Math.round(negMs) },
    ratio: { roundTrips: +(hs.roundTrips / neg.roundTrips).toFixed(3), bytes: +(hs.bytes / neg.bytes).toFixed(3) },
    meetsTargets: met,
  }
}

export async function benchHeadSync(): Promise<object> {
  const t0 = performance.now()
  const nip = (await import(new URL('../node_modules/nostr-tools/lib/esm/nip77.js', import.meta.url).href)) as Nip77
  const sets = buildSets(rng(20_251_122))
  const buildMs = performance.now() - t0

  const scenarios: Array<Record<string, unknown>> = []
  let allMet = true
  for (const shape of ['changed', 'added'] as const) {
    for (const d of DS) {
      if (shape === 'added' && d === 0) continue
      const scenario = runScenario(nip, sets, shape, d)
      allMet &&= scenario.meetsTargets
      scenarios.push(scenario)
    }
  }
  return {
    n: N,
    scenarios,
    targets: { d0: { roundTrips: 1, maxBytesEachWay: 64 }, roundTrips: '<= negentropy', bytes: '<= 0.8 x negentropy' },
    allTargetsMet: allMet,
    setupMs: Math.round(buildMs),
    totalMs: Math.round(performance.now() - t0),
  }
}

// Run directly: `npx tsx bench/headsync.ts`.
if (import.meta.url === `file://${process.argv[1]}`) {
  console.log(JSON.stringify(await benchHeadSync(), null, 2))
}
