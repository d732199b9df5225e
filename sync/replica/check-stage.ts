import { decodeChange, verifyChangeSignature, type Change } from '../dag/change.ts'
import type { ReplicaState } from './replica-state.ts'
import type { IngestItem, IngestReport } from './types.ts'

/**
 * Stage one of ingest: shape, id and signature of every item; known changes are skipped
 * early. Needs no replica state beyond "is this change known", so it runs outside the serial
 * queue: while one batch applies, the next one's signatures verify on other threads.
 * `local`: changes this replica just signed, whose signatures need no check.
 */
export async function checkStage(
  s: ReplicaState,
  items: IngestItem[],
  local: boolean,
  known: (c: Change) => boolean | Promise<boolean>,
): Promise<{ report: IngestReport; verified: Change[] }> {
  const report: IngestReport = { accepted: [], rejected: [], missing: [] }
  const fresh: Change[] = []
  const seen = new Set<string>()
  for (const item of items) {
    let c: Change
    try {
      c = decodeChange(item.raw, s.deps.crypto.sha256)
    } catch {
      report.rejected.push({ id: item.id, reason: 'malformed' })
      continue
    }
    if (c.id !== item.id) {
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
  }
  // Signatures dominate ingest cost; the native verifier runs them in parallel.
  const sigOk = local ? fresh.map(() => true) : await Promise.all(fresh.map((c) => verifyChangeSignature(s.deps.crypto, c)))
  const verified: Change[] = []
  fresh.forEach((c, i) => (sigOk[i] ? verified.push(c) : report.rejected.push({ id: c.id, reason: 'bad_signature' })))
  return { report, verified }
}

function belongsHere(spaceId: string, c: Change): boolean {
  if (c.id === spaceId) return c.spaceId === '' && c.treeId === ''
  return c.spaceId === spaceId
}
