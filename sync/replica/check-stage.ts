import { contentId } from '../crypto/hash.ts'
import { decodeChange, verifyChangeSignature, type Change } from '../dag/change.ts'
import type { ReplicaState } from './replica-state.ts'
import type { IngestReport, RawItem } from './types.ts'

/**
 * Stage one of ingest: shape, id and signature of every item; known changes are skipped
 * early. Needs no replica state beyond "is this change known", so it runs outside the serial
 * queue: while one batch applies, the next one's signatures verify on other threads.
 * `local`: changes this replica just signed, whose signatures need no check.
 */
export async function checkStage(
  s: ReplicaState,
  items: RawItem[],
  local: boolean,
  known: (c: Change) => boolean | Promise<boolean>,
): Promise<{ report: IngestReport; verified: Change[] }> {
  const { report, chunks } = await checkChunks(s, items, local, known, Infinity)
  const verified: Change[] = []
  for (const chunk of chunks) verified.push(...(await verifiedOf(report, chunk)))
  return { report, verified }
}

/** A check stage under way (SpaceReplica.checkAhead), for `ingest` to take over. */
export type IngestChecks = Promise<{ report: IngestReport; chunks: CheckedChunk[] }>

/** Changes of one chunk, fresh and decoded, with their signature checks under way. */
export interface CheckedChunk {
  changes: Change[]
  /** One per change: its signature holds (all true for local changes). */
  sigs: Promise<boolean[]>
}

/**
 * The check stage cut into chunks of at most `chunkItems` fresh changes, in arrival order.
 * Every item is decoded (and its signature check started) before this returns, but a chunk's
 * signatures are awaited only by whoever takes it (`verifiedOf`): the apply stage can take the
 * first chunk while the thread pool still verifies the later ones, instead of the pool idling
 * while a whole step applies. Rejections found while decoding are in `report` already.
 */
export async function checkChunks(
  s: ReplicaState,
  items: RawItem[],
  local: boolean,
  known: (c: Change) => boolean | Promise<boolean>,
  chunkItems: number,
): Promise<{ report: IngestReport; chunks: CheckedChunk[] }> {
  const report: IngestReport = { accepted: [], rejected: [], missing: [] }
  const chunks: CheckedChunk[] = []
  let fresh: Change[] = []
  let sigs: Promise<boolean>[] = []
  const close = () => {
    if (fresh.length === 0) return
    chunks.push({ changes: fresh, sigs: local ? Promise.resolve(fresh.map(() => true)) : Promise.all(sigs) })
    fresh = []
    sigs = []
  }
  const seen = new Set<string>()
  // Decoding hashes every change: a step of a few thousand takes tens of milliseconds, so the
  // loop gives the event loop a turn as the apply stage does (this stage holds no replica state).
  const { env } = s.deps
  // The clock is read only where the env yields: a seeded test clock must not move for it.
  let sliceStart = env.yield ? env.now() : 0
  let sliced = 0
  for (const item of items) {
    if (env.yield && (++sliced >= s.limits.checkSliceItems || ((sliced & 7) === 0 && env.now() - sliceStart >= s.limits.applySliceMs))) {
      await env.yield()
      sliced = 0
      sliceStart = env.now()
    }
    let c: Change
    try {
      c = decodeChange(item.raw, s.deps.crypto.sha256)
    } catch {
      report.rejected.push({ id: (item.id ??= contentId(item.raw, s.deps.crypto.sha256)), reason: 'malformed' })
      continue
    }
    if (item.id === undefined) item.id = c.id
    else if (c.id !== item.id) {
      report.rejected.push({ id: item.id, reason: 'bad_id' })
      continue
    }
    if (seen.has(c.id)) continue
    seen.add(c.id)
    if (!belongsHere(s.spaceId, c)) {
      report.rejected.push({ id: c.id, reason: 'wrong_space' })
      continue
    }
    const k = known(c)
    if (k instanceof Promise ? await k : k) continue
    fresh.push(c)
    // Signatures dominate ingest cost; the native verifier runs them in parallel, starting
    // while the rest of the items decode. (Providers resolve false, never reject.)
    if (!local) sigs.push(verifyChangeSignature(s.deps.crypto, c))
    if (fresh.length >= chunkItems) close()
  }
  close()
  return { report, chunks }
}

/** A chunk's changes whose signatures hold, once checked; the others rejected into `report`. */
export async function verifiedOf(report: IngestReport, chunk: CheckedChunk): Promise<Change[]> {
  const ok = await chunk.sigs
  const verified: Change[] = []
  chunk.changes.forEach((c, i) => (ok[i] ? verified.push(c) : report.rejected.push({ id: c.id, reason: 'bad_signature' })))
  return verified
}

function belongsHere(spaceId: string, c: Change): boolean {
  if (c.id === spaceId) return c.spaceId === '' && c.treeId === ''
  return c.spaceId === spaceId
}
