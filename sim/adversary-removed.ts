import type { AclRecord, Rotation } from '../sync/acl/records.ts'
import { seal } from '../sync/crypto/box.ts'
import { publicKeyOf } from '../sync/crypto/keys.ts'
import { wrapKeyTo } from '../sync/crypto/wrap.ts'
import { encodeCanonical } from '../sync/core/encoding.ts'
import { decodeChange, signChange, type Change } from '../sync/dag/change.ts'
import { groundBelow, markerOps, sealedWrite, signedAcl } from './attacks.ts'
import type { Hostile } from './adversary-types.ts'

/**
 * Attacks of a member with real keys, removed or about to be: ACL records concurrent with its
 * removal, writes and objects made after it, and writes through its own replica. Their changes
 * are `judged` in the ledger: void when the timeline says the author was removed.
 */

/** Signatures tried to grind a record id below another (about 1 in 2 succeed per try on average). */
const GRIND_TRIES = 256

/**
 * A removed admin signs a record concurrent with its removal: at the removal's lamport with
 * an id ground below it (the (lamport, id) fold meets it first), or at a huge lamport (it
 * becomes the "latest" head). It adds an accomplice as admin, or removes an honest member.
 */
export async function backdateAcl(a: Hostile, huge: boolean): Promise<string> {
  const rm = a.removal()
  if (!rm) return 'no removal yet'
  const judge = a.holderOf(rm.id)
  if (!judge) return 'removal not held'
  const before = judge.acl.stateAt(rm.prevIds)
  const keyId = before.readKeyId
  const rk = keyId ? a.peer.replica.keyring.get(keyId) : undefined
  if (!keyId || !rk) return 'never held the key'
  let record: AclRecord
  const env = a.peer.env
  const victims = before.readers().filter((id) => id !== a.ctx.owner && id !== a.identity && !a.ctx.accomplices().includes(id))
  if (a.r.chance(0.5) || !victims.length) {
    const who = a.r.pick(a.ctx.accomplices())
    record = { type: 'add', identity: who, role: 'admin', keyId, key: wrapKeyTo(env, publicKeyOf(who), rk) }
  } else {
    const victim = a.r.pick(victims)
    const next = env.randomBytes(32)
    const keys: Record<string, Uint8Array> = {}
    for (const id of before.readers()) if (id !== victim) keys[id] = wrapKeyTo(env, publicKeyOf(id), next)
    const rotation: Rotation = { keys, prev: seal(env, next, rk), prevKeyId: keyId }
    record = { type: 'remove', identity: victim, rotation }
  }
  const ts = rm.timestamp - a.r.int(60_000)
  let c: Change
  let label: string
  if (huge) {
    c = await signedAcl(a.ctx.crypto, a.peer.key, a.ctx.spaceId, rm.prevIds, 2 ** 40 + a.r.int(1000), ts, a.nextSeq(), record)
    label = 'lamport 2^40'
  } else {
    const g = await groundBelow(a.ctx.crypto, a.peer.key, a.ctx.spaceId, rm.prevIds, rm.lamport, ts, record, rm.id, GRIND_TRIES)
    c = g.change
    label = `lamport ${rm.lamport}, id ${g.ground ? 'below' : 'not below'} the removal's`
  }
  a.note(c, huge ? 'hugeLamportAcl' : 'backdateAcl', 'judged', 'acl')
  return `${record.type} ${record.identity.slice(0, 6)} ${c.id} (${label}) to ${a.push([c.raw], a.targets(2 + a.r.int(3)))}`
}

/**
 * A removed member keeps writing: on parents from before its removal, citing an ACL head from
 * before it, stamped before it (backdated) or now; or it creates an object and writes in it.
 */
export async function writeAfterRemoval(a: Hostile, root: boolean): Promise<string> {
  const rm = a.removal()
  if (!rm) return 'no removal yet'
  const judge = a.holderOf(rm.id)
  if (!judge) return 'removal not held'
  const head = [...rm.prevIds].sort((a, b) => judge.acl.entries.get(b)!.lamport - judge.acl.entries.get(a)!.lamport)[0]
  const st = judge.acl.stateAt([head])
  if (!st.canWrite(a.identity)) return 'could not write before its removal either'
  const keyId = st.readKeyId ?? ''
  const rk = keyId ? a.peer.replica.keyring.get(keyId) : undefined
  if (!rk) return 'never held the key'
  const ts = a.r.chance(0.7) ? rm.timestamp - 1 - a.r.int(60_000) : a.peer.env.now()
  const marker = a.marker()
  if (root) {
    const rootChange = await signChange(a.ctx.crypto, a.peer.key, {
      spaceId: a.ctx.spaceId,
      treeId: '',
      prevIds: [],
      aclHeadId: head,
      seq: a.nextSeq(),
      lamport: 0,
      timestamp: ts,
      readKeyId: '',
      payload: encodeCanonical({ kind: 'object', nonce: a.r.bytes(16) }),
    })
    const seq = a.ctx.timeline.next()
    a.note(rootChange, 'rootAfterRemoval', 'judged', 'root', undefined, seq)
    const w = await sealedWrite(
      a.ctx.crypto,
      a.peer.env,
      a.peer.key,
      {
        spaceId: a.ctx.spaceId,
        treeId: rootChange.id,
        prevIds: [rootChange.id],
        aclHeadId: head,
        lamport: 1,
        timestamp: ts + 1,
        readKeyId: keyId,
        seq: a.nextSeq(),
      },
      rk,
      markerOps(marker),
    )
    a.note(w, 'rootAfterRemoval', 'judged', 'change', marker, seq)
    return `object ${rootChange.id} and write ${w.id} to ${a.push([rootChange.raw, w.raw])}`
  }
  const tree = a.pickTree()
  if (!tree) return 'no tree'
  const idx = await a.peer.replica.treeIndex(tree)
  // Parents that cite nothing newer than the head it cites (else: stale_acl_head).
  let parent: { id: string; lamport: number } | undefined
  for (const id of idx.ids()) {
    const n = idx.get(id)!
    const ok = n.aclHeadId === '' ? n.prevIds.length === 0 : judge.acl.precedesOrEquals(n.aclHeadId, head)
    if (ok && (!parent || n.lamport > parent.lamport)) parent = n
  }
  if (!parent) return 'no parent old enough'
  const w = await sealedWrite(
    a.ctx.crypto,
    a.peer.env,
    a.peer.key,
    {
      spaceId: a.ctx.spaceId,
      treeId: tree,
      prevIds: [parent.id],
      aclHeadId: head,
      lamport: parent.lamport + 1,
      timestamp: ts,
      readKeyId: keyId,
      seq: a.nextSeq(),
    },
    rk,
    markerOps(marker),
  )
  a.note(w, 'writeAfterRemoval', 'judged', 'change', marker)
  return `${w.id} (${ts < rm.timestamp ? 'backdated' : 'now'}) to ${a.push([w.raw])}`
}

/**
 * Writes as its replica would, whether or not it has been removed yet (it may not know): made
 * through its own replica, pushed to a few peers, and synced like any write.
 */
export async function liveWrite(a: Hostile): Promise<string> {
  const rep = a.peer.replica
  const tree = a.pickTree()
  if (!tree || !rep.known || !rep.acl.current().canWrite(a.identity)) return 'cannot write in its own view'
  const marker = a.marker()
  const seq = a.ctx.timeline.next()
  let id: string
  try {
    id = (await rep.write(tree, markerOps(marker))).changeId
  } catch (err) {
    return `refused locally: ${(err as Error).message}`
  }
  const raw = (await rep.rawChanges(tree, [id]))[0].raw
  a.note(decodeChange(raw), 'liveWrite', 'judged', 'change', marker, seq)
  return `${id} to ${a.push([raw])}`
}
