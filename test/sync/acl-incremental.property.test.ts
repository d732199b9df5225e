import { describe, expect, it } from 'vitest'
import fc from 'fast-check'
import { AclLog, type AclEntry, type AclState } from '../../sync/acl/state.ts'
import type { AclRecord, GrantRole, Rotation } from '../../sync/acl/records.ts'

/**
 * The merged ACL state built record by record (AclLog extends the previous fold when a record
 * comes after everything: sync/acl/fold-extend.ts) equals a full fold of the same records, at
 * every step, over random histories: grants, role changes, removals and rotations by the owner
 * and by admins, concurrent branches (two admins removing each other, a role change concurrent
 * with a removal), merges, backdated records, join requests left uncited, invites.
 */
const SPACE = 'S0000root'
const PEOPLE = ['O', 'A', 'B', 'C', 'D', 'E']
const ROLES: GrantRole[] = ['admin', 'writer', 'reader', 'guest']
const key = (n: number) => new Uint8Array([n & 255])

/** xorshift32: the history is a function of the seed, so fast-check shrinks by seed and size. */
function rng(seed: number) {
  let s = seed >>> 0 || 1
  return (n: number) => {
    s ^= s << 13
    s ^= s >>> 17
    s ^= s << 5
    return (s >>> 0) % n
  }
}

function history(seed: number, size: number): AclEntry[] {
  const rand = rng(seed)
  const pick = <T>(xs: readonly T[]): T => xs[rand(xs.length)]
  const root: AclEntry = { id: SPACE, lamport: 0, prevIds: [], author: 'O', timestamp: 0, record: { type: 'root', owner: 'O', rotation: { keys: { O: key(0) } } } }
  const all: AclEntry[] = [root]
  const byId = new Map([[SPACE, root]])
  const heads = new Set([SPACE])
  const keyIds = [SPACE]
  const invites: string[] = []
  const joins: AclEntry[] = []
  const believed = new Set<string>()
  for (let n = 1; n <= size; n++) {
    const id = `r${String(n).padStart(4, '0')}${pick(['a', 'm', 'z'])}`
    // Mostly after everything (what the incremental path takes), else a concurrent branch.
    const concurrent = rand(10) < 3
    let prevIds: string[]
    if (!concurrent) prevIds = [...heads].filter((h) => !['join', 'cancel'].includes(byId.get(h)!.record.type))
    else {
      const pool = all.filter((e) => !['join', 'cancel'].includes(e.record.type))
      prevIds = [...new Set([pick(pool).id, ...(rand(2) ? [pick(pool).id] : [])])]
    }
    if (prevIds.length === 0) prevIds = [SPACE]
    const author = rand(4) === 0 ? pick(PEOPLE) : pick(['O', 'A', 'B', 'O'])
    const rotation = (): Rotation => {
      // Mostly to the members as the owner last saw them (so keys stay untainted and the current
      // key moves), sometimes to anyone (a removed member: tainted).
      const readers = rand(5) > 0 ? ['O', ...believed] : PEOPLE.filter(() => rand(3) > 0)
      return { keys: Object.fromEntries(readers.map((p) => [p, key(n)])), prev: key(n), prevKeyId: pick(keyIds) }
    }
    let record: AclRecord
    let lamport = Math.max(...prevIds.map((p) => byId.get(p)!.lamport)) + 1
    const kind = rand(100)
    if (kind < 25) record = { type: 'add', identity: pick(PEOPLE), role: pick(ROLES), keyId: pick(keyIds), key: key(n) }
    else if (kind < 28 && joins.length) {
      // An accept: an add naming a join request (its joiner's, or a forged one's).
      const j = pick(joins)
      record = { type: 'add', identity: rand(4) ? j.author : pick(PEOPLE), role: pick(ROLES), keyId: pick(keyIds), key: key(n), request: j.id }
    } else if (kind < 28) record = { type: 'uninvite', invites: invites.length ? [pick(invites)] : [] }
    else if (kind < 50) record = { type: 'role', identity: pick(PEOPLE), role: pick(ROLES) }
    else if (kind < 66) record = { type: 'remove', identity: pick(PEOPLE), rotation: rotation(), ...(rand(2) ? { witness: [`w${n}`] } : {}) }
    else if (kind < 76) record = { type: 'rotate', rotation: rotation() }
    else if (kind < 84) {
      record = { type: 'merge' }
      if (prevIds.length < 2) prevIds = [...new Set([...prevIds, pick(all.filter((e) => !['join', 'cancel'].includes(e.record.type))).id])]
      lamport = Math.max(...prevIds.map((p) => byId.get(p)!.lamport)) + 1
    } else if (kind < 88) {
      record = { type: 'invite', key: `K${n}`, permission: pick(['reader', 'writer', 'guest'] as const), ...(rand(3) === 0 ? { replaces: true as const } : {}) }
      invites.push(id)
    } else if (kind < 93 && invites.length) {
      record = { type: 'join', invite: pick(invites), proof: key(n) }
      prevIds = [SPACE]
      lamport = 1
    } else if (kind < 95 && joins.length) {
      const j = pick(joins)
      record = { type: 'cancel', request: j.id }
      prevIds = [j.id]
      lamport = j.lamport + 1
    } else if (kind < 97) {
      // Backdated: a lamport at or below a parent's, as a removed admin would forge.
      record = { type: 'remove', identity: pick(PEOPLE), rotation: rotation() }
      lamport = Math.max(1, lamport - 1 - rand(3))
    } else record = { type: 'rotate', rotation: rotation() }
    const e: AclEntry = { id, lamport, prevIds: [...prevIds].sort(), author: record.type === 'join' ? pick(['X', 'Y']) : author, timestamp: n, record }
    if (record.type === 'cancel') e.author = byId.get(record.request)!.author
    all.push(e)
    byId.set(id, e)
    if (record.type === 'join') joins.push(e)
    if (record.type === 'add' && record.identity !== 'O') believed.add(record.identity)
    if (record.type === 'remove') believed.delete(record.identity)
    for (const p of e.prevIds) heads.delete(p)
    heads.add(id)
    if (record.type === 'rotate' || record.type === 'remove') keyIds.push(id)
  }
  return all
}

/** Everything a state answers, as one string: equal strings, equal states. */
function snapshot(st: AclState, ids: readonly string[]): string {
  const bytes = (b: Uint8Array | undefined) => (b ? [...b] : null)
  const map = <V>(m: ReadonlyMap<string, V> | undefined, f: (v: V) => unknown) => (m ? [...m].map(([k, v]) => [k, f(v)]) : null)
  return JSON.stringify({
    owner: st.owner,
    roles: [...st.roles],
    skipped: st.skipped,
    removals: map(st.removals, (l) => l.map((e) => e.id)),
    frontier: st.frontier,
    witnessed: [...st.witnessed].sort(),
    keys: map(st.keys, (k) => ({ wrapped: map(k.wrapped, bytes), prev: bytes(k.prev), prevKeyId: k.prevKeyId ?? null, others: map(k.others, bytes), pair: k.pair ?? null })),
    readKeyId: st.readKeyId ?? null,
    latestKeyId: st.latestKeyId ?? null,
    readers: st.readers(),
    needsRotation: st.needsRotation(),
    keyHeads: st.keyHeads(),
    invites: st.invites(),
    requests: st.requests(),
    profiles: map(st.profiles(), (p) => p.recordId),
    void: ids.map((id) => st.isVoid(id)),
    writeAt: ids.flatMap((id) => PEOPLE.map((p) => st.canWriteAt(p, id))),
    precedes: ids.flatMap((a) => ids.slice(-6).map((b) => st.precedes(a, b))),
  })
}

/** Feeds the records in a random causal order (as sync delivers them). */
function causalOrder(all: AclEntry[], seed: number): AclEntry[] {
  const rand = rng(seed ^ 0x5bd1e995)
  const have = new Set<string>()
  const pending = [...all]
  const out: AclEntry[] = []
  while (pending.length) {
    const ready = pending.filter((e) => e.prevIds.every((p) => have.has(p)))
    // Usually the oldest ready record (creation order), sometimes another.
    const e = rand(4) === 0 ? ready[rand(ready.length)] : ready[0]
    pending.splice(pending.indexOf(e), 1)
    have.add(e.id)
    out.push(e)
  }
  return out
}

describe('incremental ACL fold', () => {
  it('equals the full fold after every record, over random histories with concurrent removals', () => {
    let extended = 0
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 2 ** 31 - 1 }), fc.integer({ min: 1, max: 60 }), (seed, size) => {
        const order = causalOrder(history(seed, size), seed)
        const inc = new AclLog(SPACE)
        const full = new AclLog(SPACE, false)
        const seen: string[] = []
        for (const e of order) {
          inc.current()
          inc.add(e)
          full.add(e)
          seen.push(e.id)
          expect(snapshot(inc.current(), seen)).toBe(snapshot(full.current(), seen))
          // What a record citing every head but the uncited requests sees (a join is never cited).
          const cited = inc.headIds().filter((h) => !['join', 'cancel'].includes(inc.entries.get(h)!.record.type))
          if (cited.length) expect(snapshot(inc.stateAt(cited), seen)).toBe(snapshot(full.stateAt(cited), seen))
        }
        extended += inc.foldStats.extended
      }),
      { numRuns: 300 },
    )
    // The property is about the incremental path: most records must have taken it.
    expect(extended).toBeGreaterThan(1000)
  })

  it('adding the member a newer key was wrapped to untaints it: the current key moves to it', () => {
    const all = history(1, 0)
    const k1: AclEntry = {
      id: 'r1',
      lamport: 1,
      prevIds: [SPACE],
      author: 'O',
      timestamp: 1,
      record: { type: 'rotate', rotation: { keys: { O: key(1), X: key(1) }, prev: key(1), prevKeyId: SPACE } },
    }
    const addX: AclEntry = { id: 'r2', lamport: 2, prevIds: ['r1'], author: 'O', timestamp: 2, record: { type: 'add', identity: 'X', role: 'reader', keyId: 'r1', key: key(2) } }
    const inc = new AclLog(SPACE)
    const full = new AclLog(SPACE, false)
    for (const e of [all[0], k1, addX]) {
      inc.current()
      inc.add(e)
      full.add(e)
      expect(snapshot(inc.current(), [e.id])).toBe(snapshot(full.current(), [e.id]))
    }
    expect(inc.current().readKeyId).toBe('r1')
    expect(inc.foldStats.extended).toBe(2)
  })

  it('an accept of a guest join after the owner revoked the guest key stays void (fold rule 6)', () => {
    const root = history(1, 0)[0]
    const invite: AclEntry = { id: 'r1', lamport: 1, prevIds: [SPACE], author: 'O', timestamp: 1, record: { type: 'invite', key: 'KG', permission: 'guest' } }
    const join: AclEntry = { id: 'r2', lamport: 2, prevIds: [SPACE], author: 'G', timestamp: 2, record: { type: 'join', invite: 'r1', proof: key(2) } }
    const revoke: AclEntry = { id: 'r3', lamport: 2, prevIds: ['r1'], author: 'O', timestamp: 3, record: { type: 'uninvite', invites: ['r1'] } }
    const accept: AclEntry = {
      id: 'r4',
      lamport: 3,
      prevIds: ['r3'],
      author: 'O',
      timestamp: 4,
      record: { type: 'add', identity: 'G', role: 'guest', keyId: SPACE, key: key(4), request: 'r2' },
    }
    const inc = new AclLog(SPACE)
    const full = new AclLog(SPACE, false)
    const seen: string[] = []
    for (const e of [root, invite, join, revoke, accept]) {
      inc.current()
      inc.add(e)
      full.add(e)
      seen.push(e.id)
      expect(snapshot(inc.current(), seen)).toBe(snapshot(full.current(), seen))
    }
    expect(inc.current().isVoid('r4')).toBe(true)
  })

  it('a log fed in causal order by one writer never refolds', () => {
    const log = new AclLog(SPACE)
    const all = history(7, 0)
    log.add(all[0])
    log.current()
    let prev = all[0]
    let keyId = SPACE
    for (let n = 1; n <= 500; n++) {
      const record: AclRecord =
        n % 3 === 0
          ? { type: 'rotate', rotation: { keys: { O: key(n), [`M${n % 40}`]: key(n) }, prev: key(n), prevKeyId: keyId } }
          : n % 3 === 1
            ? { type: 'add', identity: `M${n % 40}`, role: 'writer', keyId, key: key(n) }
            : { type: 'role', identity: `M${(n - 1) % 40}`, role: 'reader' }
      const e: AclEntry = { id: `r${String(n).padStart(5, '0')}`, lamport: n, prevIds: [prev.id], author: 'O', timestamp: n, record }
      log.add(e)
      expect(log.current().isVoid(e.id)).toBe(false)
      prev = e
      if (record.type === 'rotate') keyId = e.id
    }
    expect(log.foldStats.full).toBe(1)
  })
})
