import { signJoinProof } from '../sync/acl/join-proof.ts'
import { encodeAclRecord } from '../sync/acl/records.ts'
import { contentId } from '../sync/crypto/hash.ts'
import { decodeChange, signChange } from '../sync/dag/change.ts'
import { forgedAcl, forgedWrite, junkDerivedRoot, markerOps, randomId, tamper as tamperBytes, type WriteHeader } from './attacks.ts'
import type { Hostile } from './adversary-types.ts'

/**
 * Attacks with changes and frames nobody may accept: writes and ACL records signed as someone
 * else, tampered bytes, replayed frames, joins without the invite's key, unsigned object roots.
 * Every change they craft is `rejected` in the ledger.
 */

/** Impersonates an honest writer (a member knows the key to seal under), or the owner. */
export async function forge(a: Hostile): Promise<string> {
  const rep = a.peer.replica
  const tree = a.pickTree()
  const honest = a.ctx
    .honest()
    .map((p) => p.identity)
    .filter((id) => rep.known && rep.acl.current().canWrite(id))
  if (tree && honest.length && a.r.chance(0.7)) {
    const cite = rep.acl.citation()
    const head = 'head' in cite ? cite.head : cite.merge[0]
    const keyId = rep.acl.stateAt([head]).readKeyId ?? ''
    const rk = keyId ? rep.keyring.get(keyId) : undefined
    const meta = rep.treeMeta(tree)!
    const marker = a.marker()
    const h: WriteHeader = {
      spaceId: a.ctx.spaceId,
      treeId: tree,
      prevIds: meta.heads,
      aclHeadId: head,
      lamport: meta.maxLamport + 1,
      timestamp: a.peer.env.now(),
      readKeyId: keyId,
      seq: a.nextSeq(),
    }
    const c = await forgedWrite(a.ctx.crypto, a.peer.env, a.peer.key, a.r.pick(honest), h, rk, markerOps(marker), a.r)
    a.note(c, 'forge', 'rejected', 'change', marker)
    return `write as another ${c.id} to ${a.push([c.raw])}`
  }
  // The owner "adds" an accomplice as admin, with a signature that is not the owner's.
  const heads = rep.known ? rep.acl.headIds() : [a.ctx.spaceId]
  const lamport = rep.known ? Math.max(...heads.map((h) => rep.acl.entries.get(h)!.lamport)) + 1 : 1
  const who = a.r.pick(a.ctx.accomplices())
  const c = forgedAcl(a.ctx.spaceId, a.ctx.owner, heads, lamport, { type: 'add', identity: who, role: 'admin', keyId: randomId(a.r), key: a.r.bytes(80) }, a.r)
  a.note(c, 'forge', 'rejected', 'acl')
  return `owner's record ${c.id} to ${a.push([c.raw])}`
}

/** Flips bytes of a real change (one it holds, or a fresh write of its own). */
export async function tamper(a: Hostile): Promise<string> {
  const all = await a.peer.replica.allChanges()
  if (!all.length) return 'nothing to tamper with'
  const out: Uint8Array[] = []
  for (let i = 0; i < 1 + a.r.int(4); i++) {
    const src = a.r.pick(all)
    const bad = tamperBytes(src.raw, a.r)
    const id = contentId(bad)
    if (id === src.id) continue
    let tree = src.treeId
    try {
      const c = decodeChange(bad)
      tree = c.treeId === '' ? c.id : c.treeId
    } catch {
      // Unparseable: still sent, still must never be held.
    }
    a.ledger.push({ id, tree, kind: 'tamper', seq: a.ctx.timeline.next(), expect: 'rejected', what: 'change', author: a.identity })
    out.push(bad)
  }
  return `${out.length} changes to ${a.push(out)}`
}

/** Sends frames it received earlier again, to whoever. */
export function replay(a: Hostile): string {
  if (!a.captured.length) return 'nothing captured'
  let n = 0
  for (const to of a.targets()) {
    for (let i = 0; i < 1 + a.r.int(8); i++) {
      a.send(to, a.r.pick(a.captured))
      n++
    }
  }
  return `${n} frames`
}

/**
 * Asks to join without the invite's private key: a proof signed by a random key, or an honest
 * joiner's proof (bound to the honest joiner's identity) in a join of its own, for an invite
 * that is live (it reads them off honest replicas) or made up. Sent as `join` messages, or
 * pushed as an ACL change in steps. No honest peer may ever list such a request.
 */
export async function forgeJoin(a: Hostile): Promise<string> {
  const holders = a.ctx.honest().filter((p) => p.alive && p.replica?.known)
  const invites = holders.flatMap((p) => p.replica.acl.current().invites())
  const inviteId = invites.length && a.r.chance(0.85) ? a.r.pick(invites).recordId : randomId(a.r)
  const proofs = holders.flatMap((p) => [...p.replica.acl.entries.values()].flatMap((e) => (e.record.type === 'join' ? [e.record.proof] : [])))
  const stolen = proofs.length > 0 && a.r.chance(0.5)
  const proof = stolen ? a.r.pick(proofs) : signJoinProof(a.r.bytes(32), a.ctx.spaceId, a.identity, inviteId)
  const c = await signChange(a.ctx.crypto, a.peer.key, {
    spaceId: a.ctx.spaceId,
    treeId: a.ctx.spaceId,
    prevIds: [a.ctx.spaceId],
    aclHeadId: '',
    seq: 0,
    lamport: 1,
    timestamp: a.peer.env.now(),
    readKeyId: '',
    payload: encodeAclRecord({ type: 'join', invite: inviteId, proof, metadata: { name: `x${a.spec.index}` } }),
  })
  a.note(c, 'forgeJoin', 'rejected', 'join')
  const how = stolen ? 'stolen proof' : 'random proof'
  if (a.r.chance(0.5)) return `${how} ${c.id} pushed to ${a.push([c.raw])}`
  const targets = a.targets()
  for (const to of targets) await a.peer.driver.sendJoin(to, a.ctx.spaceId, c.raw).catch(() => false)
  return `${how} ${c.id} as join to ${targets.length}`
}

/** Unsigned object roots with seeds nobody expects. */
export function derivedRoots(a: Hostile): string {
  const roots = Array.from({ length: 1 + a.r.int(8) }, () => junkDerivedRoot(a.ctx.spaceId, a.r))
  for (const c of roots) a.note(c, 'derivedRoot', 'rejected', 'derived')
  return `${roots.length} to ${a.push(roots.map((c) => c.raw))}`
}
