import { describe, expect, it } from 'vitest'
import fc from 'fast-check'
import { AclLog, type AclEntry, type AclState } from '../../sync/acl/state.ts'
import { decodeAclRecord, encodeAclRecord, InvalidAclRecord, type AclRecord, type GrantRole, type InvitePermission, type Rotation } from '../../sync/acl/records.ts'
import { encodeCanonical } from '../../sync/core/encoding.ts'
import { toBase58 } from '../../sync/core/ids.ts'
import { joinProofBytes } from '../../sync/acl/join-proof.ts'
import { ed25519 } from '@noble/curves/ed25519.js'

const SPACE = 'S0000root'
const key = new Uint8Array([1])

/** A rotation wrapping a (dummy) key to each reader. */
const rot = (readers: readonly string[], prevKeyId?: string): Rotation =>
  prevKeyId ? { keys: Object.fromEntries(readers.map((r) => [r, key])), prev: key, prevKeyId } : { keys: Object.fromEntries(readers.map((r) => [r, key])) }

/** Builds ACL histories by hand: ids sort in creation order unless given. */
class History {
  readonly all = new Map<string, AclEntry>()
  private n = 0
  readonly root: AclEntry
  constructor(readonly owner = 'O') {
    this.root = { id: SPACE, lamport: 0, prevIds: [], author: owner, timestamp: 0, record: { type: 'root', owner, rotation: rot([owner]) } }
    this.all.set(SPACE, this.root)
  }
  rec(author: string, prevIds: string[], record: AclRecord, o: { lamport?: number; id?: string } = {}): AclEntry {
    const lamport = o.lamport ?? Math.max(...prevIds.map((p) => this.all.get(p)!.lamport)) + 1
    const id = o.id ?? `r${String(++this.n).padStart(6, '0')}`
    const e: AclEntry = { id, lamport, prevIds: [...prevIds].sort(), author, timestamp: 0, record }
    this.all.set(id, e)
    return e
  }
  add(author: string, prev: AclEntry[], identity: string, role: GrantRole) {
    return this.rec(
      author,
      prev.map((p) => p.id),
      { type: 'add', identity, role, keyId: SPACE, key },
    )
  }
  role(author: string, prev: AclEntry[], identity: string, role: GrantRole) {
    return this.rec(
      author,
      prev.map((p) => p.id),
      { type: 'role', identity, role },
    )
  }
  remove(author: string, prev: AclEntry[], identity: string, readers: string[] = [], witness?: string[]) {
    return this.rec(
      author,
      prev.map((p) => p.id),
      { type: 'remove', identity, rotation: rot(readers, SPACE), ...(witness ? { witness } : {}) },
    )
  }
  rotate(author: string, prev: AclEntry[], readers: string[]) {
    return this.rec(
      author,
      prev.map((p) => p.id),
      { type: 'rotate', rotation: rot(readers, SPACE) },
    )
  }
  merge(author: string, prev: AclEntry[]) {
    return this.rec(
      author,
      prev.map((p) => p.id),
      { type: 'merge' },
    )
  }
  /** Every record, fed in a causal order. */
  log(order: AclEntry[] = [...this.all.values()]): AclLog {
    const log = new AclLog(SPACE)
    const pending = [...order]
    while (pending.length) {
      const i = pending.findIndex((e) => e.prevIds.every((p) => log.has(p)))
      log.add(pending.splice(i, 1)[0])
    }
    return log
  }
}

/** Owner, then admins A (senior) and B (junior), writer W and member M, in one chain. */
function team() {
  const h = new History()
  const a = h.add('O', [h.root], 'A', 'admin')
  const b = h.add('O', [a], 'B', 'admin')
  const w = h.add('O', [b], 'W', 'writer')
  const m = h.add('O', [w], 'M', 'reader')
  return { h, base: m }
}

describe('ACL fold: the attacks of issue 11', () => {
  it('two admins removing each other: the senior stands', () => {
    const { h, base } = team()
    const aRemovesB = h.remove('A', [base], 'B', ['O', 'A', 'W', 'M'])
    const bRemovesA = h.remove('B', [base], 'A', ['O', 'B', 'W', 'M'], undefined)
    for (const order of [
      [aRemovesB, bRemovesA],
      [bRemovesA, aRemovesB],
    ]) {
      const st = h.log([...h.all.values()].filter((e) => !order.includes(e)).concat(order)).current()
      expect(st.roleOf('A')).toBe('admin')
      expect(st.roleOf('B')).toBe('none')
      expect(st.isVoid(bRemovesA.id)).toBe(true)
      expect(st.isVoid(aRemovesB.id)).toBe(false)
    }
    // Ground ids and lamports do not change who is senior.
    const h2 = team()
    const x = h2.h.remove('B', [h2.base], 'A', [], undefined)
    const y = h2.h.rec('A', [h2.base.id], { type: 'remove', identity: 'B', rotation: rot([], SPACE) }, { lamport: 999, id: 'zzzz' })
    const st2 = h2.h.log().current()
    expect(st2.isVoid(x.id)).toBe(true)
    expect(st2.isVoid(y.id)).toBe(false)
  })

  it('a role change concurrent with a removal of the same member: the removal wins', () => {
    const { h, base } = team()
    const demote = h.role('O', [base], 'W', 'reader')
    const promote = h.role('A', [base], 'M', 'writer')
    const removeW = h.remove('B', [base], 'W', ['O', 'A', 'B', 'M'])
    const removeM = h.remove('B', [base], 'M', ['O', 'A', 'B', 'W'])
    const st = h.log().current()
    expect(st.roleOf('W')).toBe('none')
    expect(st.roleOf('M')).toBe('none')
    expect(st.isVoid(demote.id) && st.isVoid(promote.id)).toBe(true)
    expect(st.isVoid(removeW.id) || st.isVoid(removeM.id)).toBe(false)
  })

  it('a removed admin cannot undo its removal with a backdated record', () => {
    const { h, base } = team()
    const removeB = h.remove('O', [base], 'B', ['O', 'A', 'W', 'M'])
    // Same lamport as the removal, an id ground below it, on the pre-removal heads.
    const readd = h.rec('B', [base.id], { type: 'add', identity: 'B', role: 'writer', keyId: SPACE, key }, { lamport: removeB.lamport, id: '0000' })
    const removeA = h.rec('B', [base.id], { type: 'remove', identity: 'A', rotation: rot(['B'], SPACE) }, { lamport: removeB.lamport, id: '0001' })
    const st = h.log().current()
    expect(st.roleOf('B')).toBe('none')
    expect(st.roleOf('A')).toBe('admin')
    expect(st.isVoid(readd.id) && st.isVoid(removeA.id)).toBe(true)
    expect(st.readKeyId).toBe(removeB.id)
  })

  it('a huge-lamport record by a removed admin is void and never cited', () => {
    const { h, base } = team()
    const removeB = h.remove('O', [base], 'B', ['O', 'A', 'W', 'M'])
    const huge = h.rec('B', [base.id], { type: 'rotate', rotation: rot(['B', 'O'], SPACE) }, { lamport: 2 ** 50 })
    const log = h.log()
    expect(log.headIds()).toEqual([removeB.id, huge.id].sort())
    const st = log.current()
    expect(st.isVoid(huge.id)).toBe(true)
    expect(log.citation()).toEqual({ head: removeB.id })
    expect(st.readKeyId).toBe(removeB.id)
    expect(log.stateAtHead(removeB.id).readKeyId).toBe(st.readKeyId)
  })

  it('an admin cannot grant admin, by add or by role; the owner can', () => {
    const { h, base } = team()
    const byAdd = h.add('A', [base], 'X', 'admin')
    const byRole = h.role('A', [byAdd], 'W', 'admin')
    const demoteB = h.role('A', [byRole], 'B', 'writer')
    const owner = h.role('O', [demoteB], 'M', 'admin')
    const st = h.log().current()
    expect(st.isVoid(byAdd.id) && st.isVoid(byRole.id) && st.isVoid(demoteB.id)).toBe(true)
    expect(st.roleOf('X')).toBe('none')
    expect(st.roleOf('W')).toBe('writer')
    expect(st.roleOf('B')).toBe('admin')
    expect(st.isVoid(owner.id)).toBe(false)
    expect(st.roleOf('M')).toBe('admin')
  })

  it('role none is refused by the decoder: removing is a remove record, which rotates', () => {
    const bad = [
      { type: 'role', identity: 'abc', role: 'none' },
      { type: 'add', identity: 'abc', role: 'none', keyId: 'abc', key: new Uint8Array(1) },
      { type: 'role', identity: 'abc', role: 'owner' },
      { type: 'merge', x: 1 },
      { type: 'remove', identity: 'abc', rotation: { keys: {} }, witness: ['b', 'a'] },
    ]
    for (const r of bad) expect(() => decodeAclRecord(encodeCanonical(r))).toThrow(InvalidAclRecord)
    expect(decodeAclRecord(encodeAclRecord({ type: 'merge' }))).toEqual({ type: 'merge' })
    expect(decodeAclRecord(encodeAclRecord({ type: 'remove', identity: 'abc', rotation: { keys: {} }, witness: ['a', 'b'] })).type).toBe('remove')
  })
})

describe('ACL fold: removal wins', () => {
  it('records by an admin concurrent with its removal are void; after a re-add they count', () => {
    const { h, base } = team()
    const removeB = h.remove('O', [base], 'B', ['O', 'A', 'W', 'M'])
    const concurrent = h.add('B', [base], 'Y', 'writer')
    const byY = h.merge('Y', [concurrent, removeB])
    const readdConcurrent = h.add('A', [base], 'B', 'writer')
    let st = h.log().current()
    expect(st.isVoid(concurrent.id)).toBe(true)
    expect(st.roleOf('Y')).toBe('none')
    expect(st.isVoid(byY.id)).toBe(true)
    expect(st.isVoid(readdConcurrent.id)).toBe(true)
    const readd = h.add('A', [removeB, concurrent, readdConcurrent], 'B', 'writer')
    st = h.log().current()
    expect(st.isVoid(readd.id)).toBe(false)
    expect(st.roleOf('B')).toBe('writer')
  })

  it('an owner demotion of an admin voids its concurrent ACL records, removals included', () => {
    const { h, base } = team()
    const demote = h.role('O', [base], 'A', 'writer')
    const aRemovesB = h.remove('A', [base], 'B', ['O', 'A', 'W', 'M'])
    const aAdds = h.add('A', [base], 'Z', 'reader')
    const aMerges = h.merge('A', [base, aAdds])
    const st = h.log().current()
    expect(st.roleOf('A')).toBe('writer')
    expect(st.roleOf('B')).toBe('admin')
    expect(st.isVoid(aRemovesB.id) && st.isVoid(aAdds.id)).toBe(true)
    expect(st.isVoid(aMerges.id)).toBe(false)
    expect(st.isVoid(demote.id)).toBe(false)
  })

  it('a junior removing a senior who concurrently removes someone else: both removals stand', () => {
    const { h, base } = team()
    const bRemovesA = h.remove('B', [base], 'A', ['O', 'B', 'W', 'M'])
    const aRemovesW = h.remove('A', [base], 'W', ['O', 'A', 'B', 'M'])
    const aRotates = h.rotate('A', [aRemovesW], ['O', 'A', 'B', 'M'])
    const st = h.log().current()
    expect(st.roleOf('A')).toBe('none')
    expect(st.roleOf('W')).toBe('none')
    expect(st.isVoid(bRemovesA.id) || st.isVoid(aRemovesW.id)).toBe(false)
    expect(st.isVoid(aRotates.id)).toBe(true)
  })

  it('a removal by an admin who learned of its own removal does not count', () => {
    const { h, base } = team()
    const removeB = h.remove('O', [base], 'B', ['O', 'A', 'W', 'M'])
    const late = h.remove('B', [removeB], 'A', ['B'])
    const st = h.log().current()
    expect(st.isVoid(late.id)).toBe(true)
    expect(st.roleOf('A')).toBe('admin')
  })

  it('object changes: void unless the removal is in the cited head or witnessed them', () => {
    const { h, base } = team()
    const removeW = h.remove('A', [base], 'W', ['O', 'A', 'B', 'M'], ['w2'])
    const log = h.log()
    const coveredBy = (seen: string[]) => (witness: readonly string[]) => witness.some((x) => seen.includes(x))
    // Cites the pre-removal head, not witnessed: void whatever the timestamp.
    expect(log.voids('W', base.id, coveredBy(['w1']))).toBe(true)
    // Witnessed: an ancestor of w2 in its tree, as the caller reports.
    expect(log.voids('W', base.id, coveredBy(['w2']))).toBe(false)
    // Others are not affected; a reader writes nothing anyway.
    expect(log.voids('A', base.id, coveredBy([]))).toBe(false)
    expect(log.voids('M', base.id, coveredBy([]))).toBe(true)
    // A void removal voids nothing.
    const h2 = team()
    const bRemovesA = h2.h.remove('B', [h2.base], 'A', [])
    h2.h.remove('A', [h2.base], 'B', [])
    const log2 = h2.h.log()
    expect(log2.current().isVoid(bRemovesA.id)).toBe(true)
    expect(log2.voids('A', h2.base.id, coveredBy([]))).toBe(false)
    expect(log2.voids('B', h2.base.id, coveredBy([]))).toBe(true)
    // Citing the removal: W writes nothing there; re-added, it writes again.
    expect(log.voids('W', removeW.id, coveredBy([]))).toBe(true)
    const readd = h.add('A', [removeW], 'W', 'writer')
    expect(h.log().voids('W', readd.id, coveredBy([]))).toBe(false)
  })
})

describe('ACL fold: keys after concurrent rotations', () => {
  it('a key wrapped to a member removed on another branch is tainted; the untainted one is current', () => {
    const { h, base } = team()
    const removeM = h.remove('A', [base], 'M', ['O', 'A', 'B', 'W'])
    const rotB = h.rec('B', [base.id], { type: 'rotate', rotation: rot(['O', 'A', 'B', 'W', 'M'], SPACE) }, { lamport: 50 })
    const st = h.log().current()
    expect(st.latestKeyId).toBe(rotB.id)
    expect(st.readKeyId).toBe(removeM.id)
    expect(st.needsRotation()).toBe(false)
    expect(st.keyHeads()).toEqual([removeM.id, rotB.id].sort())
  })

  it('two removals each wrapping to the other removed member: no current key until a rotation', () => {
    const { h, base } = team()
    const x = h.remove('A', [base], 'M', ['O', 'A', 'B', 'W'])
    const y = h.remove('B', [base], 'W', ['O', 'A', 'B', 'M'])
    let st = h.log().current()
    expect(st.readKeyId).toBeUndefined()
    expect(st.needsRotation()).toBe(true)
    const heal = h.rec('A', [x.id, y.id], { type: 'rotate', rotation: { keys: { O: key, A: key, B: key }, prev: key, prevKeyId: y.id, others: { [x.id]: key } } })
    st = h.log().current()
    expect(st.readKeyId).toBe(heal.id)
    expect(st.needsRotation()).toBe(false)
  })

  it('a member added with an older key concurrently with a rotation needs a new rotation', () => {
    const { h, base } = team()
    h.rotate('A', [base], ['O', 'A', 'B', 'W', 'M'])
    h.add('B', [base], 'N', 'reader')
    expect(h.log().current().needsRotation()).toBe(true)
  })
})

describe('ACL fold: admissibility', () => {
  it('judges a record by its causal past only', () => {
    const { h, base } = team()
    const log = h.log()
    const e = (author: string, record: AclRecord, prevIds = [base.id], lamport = base.lamport + 1): AclEntry => ({ id: 'x', lamport, prevIds, author, timestamp: 0, record })
    expect(log.admissible(e('W', { type: 'rotate', rotation: rot(['O']) }))).toBe('read_only')
    expect(log.admissible(e('Q', { type: 'merge' }, [base.id, SPACE]))).toBe('not_member')
    expect(log.admissible(e('W', { type: 'merge' }))).toBe('malformed')
    expect(log.admissible(e('W', { type: 'merge' }, [base.id, SPACE]))).toBeUndefined()
    expect(log.admissible(e('A', { type: 'rotate', rotation: rot(['O'], 'nokey') }))).toBe('malformed')
    expect(log.admissible(e('A', { type: 'rotate', rotation: rot(['O'], SPACE) }, [base.id], base.lamport))).toBe('bad_lamport')
    expect(log.admissible(e('A', { type: 'rotate', rotation: rot(['O'], SPACE) }))).toBeUndefined()
  })
})

// ---------------------------------------------------------------- property

const ADMINS = ['A1', 'A2', 'A3']
const OTHERS = ['W1', 'W2', 'R1', 'M1']
const ACTORS = ['O', ...ADMINS, ...OTHERS]
/** Accounts outside the space that join through invites (real keys: admission checks proofs). */
const JOINERS = ['J1', 'J2', 'J3']

type Act =
  | { kind: 'sync'; from: number; to: number }
  | { kind: 'add'; by: number; who: number; role: GrantRole }
  | { kind: 'role'; by: number; who: number; role: GrantRole }
  | { kind: 'remove'; by: number; who: number }
  | { kind: 'rotate'; by: number }
  | { kind: 'merge'; by: number }
  | { kind: 'backdate'; by: number }
  | { kind: 'huge'; by: number }
  | { kind: 'invite'; by: number; permission: InvitePermission; replaces: boolean }
  | { kind: 'uninvite'; by: number; pick: number }
  | { kind: 'join'; joiner: number; by: number; pick: number }
  | { kind: 'cancel'; pick: number; by: number }
  | { kind: 'accept'; by: number; pick: number }
  | { kind: 'decline'; by: number; pick: number }
  | { kind: 'profile'; by: number }

const actor = fc.integer({ min: 0, max: ACTORS.length - 1 })
const grant = fc.constantFrom<GrantRole>('admin', 'writer', 'reader', 'guest')
/** The act mix; `s` weighs the sharing acts (invites, joins, decisions, profiles). */
const actMix = (s: number): fc.Arbitrary<Act> =>
  fc.oneof(
    { weight: 5, arbitrary: fc.record({ kind: fc.constant('sync' as const), from: actor, to: actor }) },
    { weight: 2, arbitrary: fc.record({ kind: fc.constant('add' as const), by: actor, who: actor, role: grant }) },
    { weight: 2, arbitrary: fc.record({ kind: fc.constant('role' as const), by: actor, who: actor, role: grant }) },
    { weight: 3, arbitrary: fc.record({ kind: fc.constant('remove' as const), by: actor, who: actor }) },
    { weight: 1, arbitrary: fc.record({ kind: fc.constant('rotate' as const), by: actor }) },
    { weight: 1, arbitrary: fc.record({ kind: fc.constant('merge' as const), by: actor }) },
    { weight: 1, arbitrary: fc.record({ kind: fc.constant('backdate' as const), by: actor }) },
    { weight: 1, arbitrary: fc.record({ kind: fc.constant('huge' as const), by: actor }) },
    {
      weight: 2 * s,
      arbitrary: fc.record({ kind: fc.constant('invite' as const), by: actor, permission: fc.constantFrom<InvitePermission>('reader', 'writer', 'guest'), replaces: fc.boolean() }),
    },
    { weight: 1 * s, arbitrary: fc.record({ kind: fc.constant('uninvite' as const), by: actor, pick: fc.nat(8) }) },
    { weight: 2 * s, arbitrary: fc.record({ kind: fc.constant('join' as const), joiner: fc.nat(JOINERS.length - 1), by: actor, pick: fc.nat(8) }) },
    { weight: 1 * s, arbitrary: fc.record({ kind: fc.constant('cancel' as const), pick: fc.nat(8), by: actor }) },
    { weight: 2 * s, arbitrary: fc.record({ kind: fc.constant('accept' as const), by: actor, pick: fc.nat(8) }) },
    { weight: 1 * s, arbitrary: fc.record({ kind: fc.constant('decline' as const), by: actor, pick: fc.nat(8) }) },
    { weight: 1 * s, arbitrary: fc.record({ kind: fc.constant('profile' as const), by: actor }) },
  )
const act = actMix(1)

/**
 * Every actor's own view of one growing history, and how each writes on it: a record its view
 * does not admit is dropped at once, as a peer would refuse to write it.
 */
class Views {
  readonly views: Array<Set<string>>
  readonly inviteSeeds = new Map<string, Uint8Array>()
  /** Heads each actor saw last while it could still manage: what it backdates onto. */
  readonly before: string[][]

  constructor(
    readonly h: History,
    lastGrant: AclEntry,
  ) {
    this.views = ACTORS.map(() => new Set(h.all.keys()))
    this.before = ACTORS.map(() => [lastGrant.id])
  }

  logOf(by: number): AclLog {
    return this.h.log([...this.views[by]].map((id) => this.h.all.get(id)!))
  }

  write(by: number, record: AclRecord, o: { lamport?: number; id?: string; prevIds?: string[]; author?: string } = {}): void {
    const log = this.logOf(by)
    const c = log.citation()
    const prevIds = o.prevIds ?? ('head' in c ? [c.head] : c.merge)
    const e = this.h.rec(o.author ?? ACTORS[by], prevIds, record, o)
    if (log.admissible(e) !== undefined) {
      this.h.all.delete(e.id)
      return
    }
    this.views[by].add(e.id)
  }
}

/**
 * Actors write on their own view of the log (honest records where their view allows them;
 * attackers write backdated and huge-lamport records on the view they had before learning of
 * their removal), exchanging records now and then. Returns every record written.
 */
function generate(acts: Act[]): History {
  const h = new History()
  // Everyone starts from the same grants: admins by seniority, then the rest.
  let prev: AclEntry = h.root
  for (const a of ADMINS) prev = h.add('O', [prev], a, 'admin')
  prev = h.add('O', [prev], 'W1', 'writer')
  prev = h.add('O', [prev], 'W2', 'writer')
  prev = h.add('O', [prev], 'R1', 'reader')
  prev = h.add('O', [prev], 'M1', 'reader')
  const v = new Views(h, prev)
  for (const a of acts) {
    if (a.kind === 'sync') syncAct(v, a)
    else actorAct(v, a)
  }
  return h
}

function syncAct(v: Views, a: Extract<Act, { kind: 'sync' }>): void {
  for (const id of v.views[a.from]) v.views[a.to].add(id)
  // The receiver writes to an object now and then: a merge first, when its view needs one.
  const c = v.logOf(a.to).citation()
  if ('merge' in c && (a.from + a.to) % 2 === 0) v.write(a.to, { type: 'merge' }, { prevIds: c.merge })
}

/** An act by one actor, on the state its own view folds to. */
function actorAct(v: Views, a: Exclude<Act, { kind: 'sync' }>): void {
  const by = a.by
  const st = v.logOf(by).current()
  if (st.canManage(ACTORS[by])) v.before[by] = v.logOf(by).headIds()
  const readers = st.readers()
  const keyId = st.latestKeyId ?? SPACE
  switch (a.kind) {
    case 'add':
      return v.write(by, { type: 'add', identity: ACTORS[a.who], role: a.role, keyId, key })
    case 'role':
      return v.write(by, { type: 'role', identity: ACTORS[a.who], role: a.role })
    case 'remove':
      return v.write(by, {
        type: 'remove',
        identity: ACTORS[a.who],
        rotation: rot(
          readers.filter((r) => r !== ACTORS[a.who]),
          keyId,
        ),
      })
    case 'rotate':
      return v.write(by, { type: 'rotate', rotation: rot(readers, keyId) })
    case 'merge': {
      const c = v.logOf(by).citation()
      if ('merge' in c) v.write(by, { type: 'merge' }, { prevIds: c.merge })
      return
    }
    case 'backdate': {
      // Ground below everything at the lamport of the newest record it knows.
      const maxLamport = Math.max(...[...v.views[by]].map((id) => v.h.all.get(id)!.lamport))
      return v.write(by, { type: 'add', identity: ACTORS[by], role: 'admin', keyId: SPACE, key }, { prevIds: v.before[by], lamport: maxLamport, id: `0${v.h.all.size}` })
    }
    case 'huge':
      return v.write(by, { type: 'rotate', rotation: rot([ACTORS[by], 'O'], SPACE) }, { prevIds: v.before[by], lamport: 2 ** 40 + v.h.all.size })
    case 'profile':
      return v.write(by, { type: 'profile', sealed: key, keyId: st.latestKeyId ?? SPACE })
    default:
      return sharingAct(v, a, st)
  }
}

/** The sharing acts: invites, joins and what answers them. */
function sharingAct(v: Views, a: Extract<Act, { kind: 'invite' | 'uninvite' | 'join' | 'cancel' | 'accept' | 'decline' }>, st: AclState): void {
  const by = a.by
  switch (a.kind) {
    case 'invite': {
      const seed = new Uint8Array(32).fill(v.h.all.size % 251)
      const record: AclRecord = { type: 'invite', key: toBase58(ed25519.getPublicKey(seed)), permission: a.permission, ...(a.replaces ? { replaces: true as const } : {}) }
      v.write(by, record)
      const last = [...v.views[by]].pop()!
      if (v.h.all.get(last)?.record === record) v.inviteSeeds.set(last, seed)
      return
    }
    case 'uninvite': {
      const live = st.invites()
      if (live.length) v.write(by, { type: 'uninvite', invites: [live[a.pick % live.length].recordId] })
      return
    }
    case 'join':
      return joinAct(v, a)
    case 'cancel': {
      const joins = [...v.views[by]].filter((id) => v.h.all.get(id)!.record.type === 'join')
      if (!joins.length) return
      const j = v.h.all.get(joins[a.pick % joins.length])!
      return v.write(by, { type: 'cancel', request: j.id }, { author: j.author, prevIds: [j.id], lamport: 2 })
    }
    case 'accept':
    case 'decline':
      return decideAct(v, a)
  }
}

/** The joiner sends its join to the first actor from `by` on that knows an invite. */
function joinAct(v: Views, a: Extract<Act, { kind: 'join' }>): void {
  let to = a.by
  let known: string[] = []
  for (let k = 0; k < ACTORS.length && !known.length; k++) {
    to = (a.by + k) % ACTORS.length
    known = [...v.views[to]].filter((id) => v.inviteSeeds.has(id))
  }
  if (!known.length) return
  const invite = known[a.pick % known.length]
  const joiner = JOINERS[a.joiner]
  const proof = ed25519.sign(joinProofBytes(SPACE, joiner, invite), v.inviteSeeds.get(invite)!)
  v.write(to, { type: 'join', invite, proof }, { author: joiner, prevIds: [SPACE], lamport: 1 })
}

/** The first manager from `by` on that sees a pending request decides one. */
function decideAct(v: Views, a: Extract<Act, { kind: 'accept' | 'decline' }>): void {
  for (let k = 0; k < ACTORS.length; k++) {
    const who = (a.by + k) % ACTORS.length
    const sw = v.logOf(who).current()
    const pending = sw.requests().filter((q) => q.status === 'pending')
    if (!sw.canManage(ACTORS[who]) || !pending.length) continue
    const q = pending[a.pick % pending.length]
    if (a.kind === 'decline') v.write(who, { type: 'decline', request: q.recordId })
    else v.write(who, { type: 'add', identity: q.joiner, role: q.role!, keyId: sw.readKeyId ?? SPACE, key, request: q.recordId })
    return
  }
}

function shuffle<T>(xs: T[], seed: number): T[] {
  const out = [...xs]
  let s = seed >>> 0 || 1
  for (let i = out.length - 1; i > 0; i--) {
    s ^= s << 13
    s ^= s >>> 17
    s ^= s << 5
    const j = (s >>> 0) % (i + 1)
    ;[out[i], out[j]] = [out[j], out[i]]
  }
  return out
}

const summary = (st: AclState) => ({
  roles: [...st.roles].sort(),
  readKeyId: st.readKeyId,
  skipped: st.skipped,
  frontier: st.frontier,
  removals: [...st.removals].map(([k, v]) => [k, v.map((e) => e.id)]).sort(),
  invites: st.invites(),
  requests: st.requests(),
  profiles: [...st.profiles()].sort(),
})

describe('ACL fold: property', () => {
  it('every peer folds any arrival order of the same records to the same state', () => {
    fc.assert(fc.property(fc.array(act, { minLength: 5, maxLength: 40 }), fc.integer(), foldsAlike), { numRuns: 150 })
  })

  it('the same, with invites, joins, accepts, declines, cancels and profiles in most acts', () => {
    fc.assert(fc.property(fc.array(actMix(6), { minLength: 10, maxLength: 40 }), fc.integer(), foldsAlike), { numRuns: 80 })
  })
})

/** Every arrival order of the records `acts` produce folds to one state, and the fold's invariants hold. */
function foldsAlike(acts: Act[], seed: number) {
  const h = generate(acts)
  const entries = [...h.all.values()]
  const reference = h.log(entries)
  const want = summary(reference.current())
  for (let p = 0; p < 3; p++) {
    // A random causal arrival order, in two partitions merged at the end.
    const order = shuffle(entries, seed + p)
    const cut = Math.floor(order.length / 2)
    const log = new AclLog(SPACE)
    const feed = (xs: AclEntry[]) => {
      const pending = [...xs]
      while (pending.length) {
        const i = pending.findIndex((e) => e.prevIds.every((id) => log.has(id)))
        if (i < 0) return pending
        log.add(pending.splice(i, 1)[0])
      }
      return []
    }
    const rest = feed(order.slice(0, cut))
    log.current()
    expect(feed([...rest, ...order.slice(cut)])).toEqual([])
    expect(summary(log.current())).toEqual(want)
  }
  const st = reference.current()
  // The owner is never removed, and no one but the owner grants admin.
  expect(st.roleOf('O')).toBe('owner')
  // A joiner is a member only through a valid add; a join or cancel is never valid or void.
  for (const j of JOINERS) {
    const added = entries.some((e) => e.record.type === 'add' && e.record.identity === j && !st.isVoid(e.id) && st.roleOf(j) !== 'none')
    if (!added) expect(st.roleOf(j)).toBe('none')
  }
  for (const e of entries) {
    if (e.record.type === 'join' || e.record.type === 'cancel') {
      expect(st.isVoid(e.id)).toBe(false)
      expect(st.frontier).not.toContain(e.id)
    }
    // Guest invites only by the owner; live invites are valid ones.
    if (e.record.type === 'invite' && e.record.permission === 'guest' && e.author !== 'O') expect(st.invites().some((i) => i.recordId === e.id)).toBe(false)
  }
  for (const i of st.invites()) expect(st.isVoid(i.recordId)).toBe(false)
  for (const q of st.requests()) if (q.status === 'accepted') expect(st.roleOf(q.joiner) === 'none' && !st.removals.has(q.joiner)).toBe(false)
  for (const e of entries) {
    const r = e.record
    if ((r.type === 'add' || r.type === 'role') && r.role === 'admin' && e.author !== 'O') expect(st.isVoid(e.id)).toBe(true)
    // Backdated and huge-lamport records by their own author: never a valid admin grant.
    if (e.id.startsWith('0')) expect(st.isVoid(e.id)).toBe(true)
  }
  // A writer's citation is valid and its state is the merged state.
  const c = reference.citation()
  let head: string
  if ('head' in c) head = c.head
  else {
    // The owner joins the frontier with a merge record, as a writer's replica would.
    const m = h.merge(
      'O',
      c.merge.map((id) => h.all.get(id)!),
    )
    expect(reference.admissible(m)).toBeUndefined()
    reference.add(m)
    head = m.id
  }
  const merged = reference.current()
  expect(merged.isVoid(head)).toBe(false)
  const cited = reference.stateAtHead(head)
  expect(cited.readKeyId).toBe(merged.readKeyId)
  expect([...cited.roles].sort()).toEqual([...merged.roles].sort())
  expect(reference.citation()).toEqual({ head })
  // The current key is wrapped to no one removed.
  if (st.readKeyId) for (const id of st.keys.get(st.readKeyId)!.wrapped.keys()) expect(st.canRead(id)).toBe(true)
  // Records by a member concurrent with its effective removal are void (removals by
  // power order aside).
  for (const [who, removals] of st.removals) {
    for (const e of entries) {
      if (e.author !== who || e.record.type === 'remove' || st.isVoid(e.id)) continue
      for (const r of removals) expect(reference.precedesOrEquals(e.id, r.id) || reference.precedesOrEquals(r.id, e.id)).toBe(true)
    }
  }
}
