import { beforeAll, describe, expect, it } from 'vitest'
import { nodeCryptoProvider } from '../../node/crypto/node-provider.ts'
import type { Env } from '../../sync/core/env.ts'
import type { CryptoProvider } from '../../sync/crypto/provider.ts'
import { assembleChange, decodeChange, derivedRoot, detached } from '../../sync/dag/change.ts'
import { encodeCanonical } from '../../sync/core/encoding.ts'
import { publicKeyOf } from '../../sync/crypto/keys.ts'
import { ParkedChanges } from '../../sync/replica/parked-changes.ts'
import { DerivedRoots } from '../../sync/replica/derived-roots.ts'
import { decodeMessage, encodeMessage, type StepMsg } from '../../sync/protocol/messages.ts'
import { SyncSession } from '../../sync/protocol/session.ts'
import { SpaceReplica, type ReplicaDeps } from '../../sync/replica/space-replica.ts'
import type { IngestItem } from '../../sync/replica/types.ts'
import { MemoryStorageAdapter } from '../../sync/storage/memory.ts'
import { modifyRecords } from '../../sync/space/modify.ts'
import { idFor, keyFor, seededEnv } from '../helpers.ts'
import { frames, headsOf, link, pump, type Node } from '../protocol/helpers.ts'

/**
 * The ingest pipeline keeps the thread pool busy: an ingest applies its checked changes chunk by
 * chunk as their signatures pass (not once every signature of the batch has), and head sync
 * starts the check stage of a reader's next answer step while the one before it is handled.
 */

const base = nodeCryptoProvider({ verify: 'sync' })
const macrotask = () => new Promise<void>((r) => setImmediate(r))

/** A provider whose verifies past the first `open` wait for `release()`; counts every verify. */
function gatedCrypto(open: number) {
  let calls = 0
  let release!: () => void
  const gate = new Promise<void>((r) => (release = r))
  const crypto: CryptoProvider = {
    ...base,
    verify(pub, msg, sig) {
      const n = ++calls
      const ok = base.verify(pub, msg, sig)
      return n <= open ? ok : gate.then(() => ok)
    },
  }
  return { crypto, release, calls: () => calls }
}

function countingCrypto() {
  let calls = 0
  const crypto: CryptoProvider = { ...base, verify: (p, m, s) => (calls++, base.verify(p, m, s)) }
  return { crypto, calls: () => calls }
}

const yieldingEnv = (seed: number): Env => ({ ...seededEnv(seed), yield: macrotask })

describe('an ingest applies checked changes in chunks', () => {
  let source: SpaceReplica
  let items: IngestItem[]
  beforeAll(async () => {
    source = await SpaceReplica.create({ storage: new MemoryStorageAdapter(), crypto: base, env: seededEnv(1) }, keyFor(1))
    for (let o = 0; o < 4; o++) {
      const obj = await source.createObject()
      for (let i = 0; i < 60; i++) await source.write(obj, [{ op: 'set', ds: 'd', id: `r${i % 5}`, path: 'v', value: i }])
    }
    items = (await source.allChanges()).map(({ id, raw }) => ({ id, raw }))
  }, 60_000)

  it('the first chunk commits while later chunks still wait for their signature checks', async () => {
    const g = gatedCrypto(64)
    const deps: ReplicaDeps = { storage: new MemoryStorageAdapter(), crypto: g.crypto, env: yieldingEnv(2), limits: { ingestChunkItems: 64 } }
    const r = await SpaceReplica.open(deps, source.spaceId, keyFor(1))
    let committed = 0
    r.addCommitListener((info) => (committed += info.changeIds.length))
    const ingest = r.ingest(items)
    // Whole-batch checking commits nothing until every signature is in: the gate would then
    // never open by itself, so it opens after a while either way.
    const t0 = Date.now()
    while (committed === 0 && Date.now() - t0 < 2_000) await macrotask()
    const committedBeforeRelease = committed
    g.release()
    const rep = await ingest
    expect(committedBeforeRelease).toBeGreaterThan(0)
    expect(committedBeforeRelease).toBeLessThanOrEqual(64)
    expect(rep.accepted.length).toBe(items.length)
    expect(rep.missing).toEqual([])
    expect(g.calls()).toBe(items.length)
    expect(await r.stateDigest()).toBe(await source.stateDigest())
  })

  it('gives the event loop a turn between chunks, even when no chunk is long enough to be cut into slices', async () => {
    const deps: ReplicaDeps = {
      storage: new MemoryStorageAdapter(),
      crypto: base,
      env: yieldingEnv(5),
      limits: { ingestChunkItems: 32, checkSliceItems: 1_000_000, applySliceChanges: 1_000_000, applySliceMs: 1e9 },
    }
    const r = await SpaceReplica.open(deps, source.spaceId, keyFor(1))
    let turns = 0
    let running = true
    const tick = () => {
      if (!running) return
      turns++
      setImmediate(tick)
    }
    setImmediate(tick)
    const rep = await r.ingest(items)
    running = false
    expect(rep.accepted.length).toBe(items.length)
    // One turn at least between each two of the ~8 chunks.
    expect(turns).toBeGreaterThanOrEqual(Math.floor(items.length / 32) - 1)
  })

  it('ends in the same state as one whole batch, with children ahead of parents across chunks and a forged change in a later chunk', async () => {
    // Every object's changes reversed: most children arrive a chunk or more before their parents.
    const acl = items.filter((it) => decodeChange(it.raw).treeId === source.spaceId || it.id === source.spaceId)
    const rest = items.filter((it) => !acl.includes(it)).reverse()
    const victim = decodeChange(rest[5].raw)
    const forged = assembleChange({ ...victim, timestamp: victim.timestamp + 1 }, victim.signature)
    const shuffled = [...acl, ...rest, { raw: forged.raw }]
    const chunked = await SpaceReplica.open({ storage: new MemoryStorageAdapter(), crypto: base, env: yieldingEnv(3), limits: { ingestChunkItems: 32 } }, source.spaceId, keyFor(1))
    const whole = await SpaceReplica.open({ storage: new MemoryStorageAdapter(), crypto: base, env: seededEnv(4) }, source.spaceId, keyFor(1))
    const a = await chunked.ingest(shuffled.map((x) => ({ ...x })))
    const b = await whole.ingest(shuffled.map((x) => ({ ...x })))
    expect(a.rejected).toEqual([{ id: forged.id, reason: 'bad_signature' }])
    expect(b.rejected).toEqual([{ id: forged.id, reason: 'bad_signature' }])
    expect(new Set(a.accepted)).toEqual(new Set(items.map((x) => x.id)))
    expect(a.missing).toEqual([])
    expect(b.missing).toEqual([])
    expect(headsOf(chunked)).toBe(headsOf(whole))
    expect(await chunked.stateDigest()).toBe(await whole.stateDigest())
    expect(await chunked.stateDigest()).toBe(await source.stateDigest())
    expect(chunked.memory().parkedChanges).toBe(0)
  })
})

describe("head sync checks a reader's next answer step ahead of its turn", () => {
  async function peers() {
    const setEnv = seededEnv(5)
    const a = await SpaceReplica.create({ storage: new MemoryStorageAdapter(), crypto: base, env: setEnv }, keyFor(1))
    await a.addMember(idFor(2), 'writer')
    const obj = await a.createObject()
    // Large values: the whole space goes in several answer steps.
    for (let i = 0; i < 5; i++) await modifyRecords(a, obj, 'd', [{ id: `big${i}`, ops: [{ type: '$set', path: 'v', value: 'x'.repeat(500_000) }] }])
    const count = countingCrypto()
    const bReplica = await SpaceReplica.open({ storage: new MemoryStorageAdapter(), crypto: count.crypto, env: seededEnv(6) }, a.spaceId, keyFor(2))
    const mk = (name: string, r: SpaceReplica, key: number, crypto: CryptoProvider): Node => ({
      name,
      replica: r,
      key: keyFor(key),
      session: new SyncSession({ host: { space: (id) => (id === r.spaceId ? r : undefined) }, key: keyFor(key), peerId: name, crypto, env: seededEnv(key * 13) }),
    })
    return { na: mk('a', a, 1, base), nb: mk('b', bReplica, 2, count.crypto), count }
  }

  it('its signatures are checked before its turn, and its turn checks none again', async () => {
    const { na, nb, count } = await peers()
    await link(na, nb)
    const opened = await nb.session.open('a', na.replica.spaceId)
    // a's answer to b's sync: the whole space, in several steps.
    const answer = (await pump([na, nb], frames(nb, opened.out), { tap: (f) => (f.to === 'b' ? undefined : f) })).filter((f) => f.to === 'a')
    expect(answer.length).toBe(1)
    const steps = await na.session.handle('b', answer[0].bytes)
    expect(steps.length).toBeGreaterThanOrEqual(3)
    const changesIn = (i: number) => (decodeMessage(steps[i].bytes) as { changes: Uint8Array[] }).changes.length
    const atStart = count.calls()
    let total = 0
    for (let i = 0; i < steps.length; i++) {
      // The transport tells of the next frame as this one's turn comes. Before the first step
      // b holds no ACL, so a is no reader there yet and nothing is checked ahead.
      const before = count.calls()
      if (i + 1 < steps.length) {
        nb.session.upcoming('a', steps[i + 1].bytes)
        await new Promise((r) => setImmediate(r))
        if (i === 0) expect(count.calls()).toBe(before)
        else expect(count.calls() - before).toBe(changesIn(i + 1))
      }
      await nb.session.handle('a', steps[i].bytes)
      total += changesIn(i)
    }
    // One verify per change: none was checked twice.
    expect(count.calls() - atStart).toBe(total)
    expect(headsOf(nb.replica)).toBe(headsOf(na.replica))
    expect(await nb.replica.stateDigest()).toBe(await na.replica.stateDigest())
  })

  it('where the env yields, the work ahead waits for a turn, and is not done at all once the step was handled first', async () => {
    const { na, nb, count } = await peers()
    let turns: Array<() => void> = []
    const yielding = new SyncSession({
      host: { space: (id) => (id === nb.replica.spaceId ? nb.replica : undefined) },
      key: keyFor(2),
      peerId: 'b',
      crypto: count.crypto,
      env: { ...seededEnv(26), yield: () => new Promise<void>((r) => turns.push(r)) },
    })
    const b = { ...nb, session: yielding }
    await link(na, b)
    const opened = await b.session.open('a', na.replica.spaceId)
    const answer = (await pump([na, b], frames(b, opened.out), { tap: (f) => (f.to === 'b' ? undefined : f) })).filter((f) => f.to === 'a')
    const steps = await na.session.handle('b', answer[0].bytes)
    expect(steps.length).toBeGreaterThanOrEqual(3)
    await b.session.handle('a', steps[0].bytes)
    const before = count.calls()
    b.session.upcoming('a', steps[1].bytes)
    await new Promise((r) => setImmediate(r))
    // Nothing decoded or checked until the turn comes.
    expect(count.calls()).toBe(before)
    const pending = turns
    turns = []
    pending.forEach((r) => r())
    await new Promise((r) => setImmediate(r))
    expect(count.calls()).toBeGreaterThan(before)
    await b.session.handle('a', steps[1].bytes)
    const checked = count.calls()
    expect(checked - before).toBe((decodeMessage(steps[1].bytes) as StepMsg).changes.length)
    // Told of, but handled before its turn for work ahead came: checked once, by its own turn.
    b.session.upcoming('a', steps[2].bytes)
    await b.session.handle('a', steps[2].bytes)
    const afterTurn = count.calls()
    turns.forEach((r) => r())
    await new Promise((r) => setImmediate(r))
    expect(count.calls()).toBe(afterTurn)
    expect(afterTurn - checked).toBe((decodeMessage(steps[2].bytes) as StepMsg).changes.length)
  })

  it('nothing is done ahead for a peer that has not authenticated, nor for one that may not read the space', async () => {
    const { na, nb, count } = await peers()
    await link(na, nb)
    const opened = await nb.session.open('a', na.replica.spaceId)
    const answer = (await pump([na, nb], frames(nb, opened.out), { tap: (f) => (f.to === 'b' ? undefined : f) })).filter((f) => f.to === 'a')
    const steps = await na.session.handle('b', answer[0].bytes)
    // b holds the ACL now: a is a reader there, and the rest are not.
    await nb.session.handle('a', steps[0].bytes)
    const before = count.calls()
    // The same bytes from a link that never authenticated.
    nb.session.upcoming('stranger', steps[1].bytes)
    await new Promise((r) => setImmediate(r))
    expect(count.calls()).toBe(before)
    // An authenticated account that may not read the space (a third account, not a member).
    const c = { ...na, name: 'c', key: keyFor(3), session: new SyncSession({ host: { space: () => undefined }, key: keyFor(3), peerId: 'c', crypto: base, env: seededEnv(40) }) }
    await link(c, nb)
    expect(nb.session.identityOf('c')).toBe(idFor(3))
    const linked = count.calls()
    nb.session.upcoming('c', steps[1].bytes)
    await new Promise((r) => setImmediate(r))
    expect(count.calls()).toBe(linked)
    // a's own, the control: checked ahead.
    nb.session.upcoming('a', steps[1].bytes)
    await new Promise((r) => setImmediate(r))
    expect(count.calls()).toBeGreaterThan(linked)
  })
})

describe("a step's changes are views into its frame; what outlives the step holds its own bytes", () => {
  it('decodes a step without copying its changes, and a parked or held change keeps a copy of its own, equal to it', async () => {
    const r = await SpaceReplica.create({ storage: new MemoryStorageAdapter(), crypto: base, env: seededEnv(9) }, keyFor(1))
    const obj = await r.createObject()
    await r.write(obj, [{ op: 'set', ds: 'd', id: 'a', path: 'v', value: 1 }])
    await r.write(obj, [{ op: 'set', ds: 'd', id: 'a', path: 'v', value: 2 }])
    const all = await r.allChanges()
    const step = encodeMessage({ type: 'step', spaceId: r.spaceId, req: 1, hop: 1, ranges: [], heads: [], wants: [], changes: all.map((c) => c.raw) })
    const m = decodeMessage(step) as StepMsg
    for (const c of m.changes) expect(c.buffer).toBe(step.buffer)
    // The last write, without its parent: it parks.
    const child = decodeChange(m.changes[m.changes.length - 1])
    const parked = new ParkedChanges()
    parked.park(child, 'peer', child.prevIds)
    const [back] = parked.wake(child.prevIds, 0, new Map())
    expect(back.raw.buffer).not.toBe(step.buffer)
    expect(back.raw.byteLength).toBe(back.raw.buffer.byteLength)
    expect(back.raw).toEqual(child.raw)
    for (const k of ['signed', 'payload', 'signature'] as const) {
      expect(back[k].buffer).toBe(back.raw.buffer)
      expect(back[k]).toEqual(child[k])
    }
    expect(await base.verify(publicKeyOf(back.author), back.signed, back.signature)).toBe(true)
    // A change with bytes of its own is kept as it is.
    const own = decodeChange(all[0].raw.slice())
    expect(detached(own)).toBe(own)
    // Held derived roots too.
    const roots = new DerivedRoots(1 << 20)
    const root = derivedRoot(r.spaceId, encodeCanonical({ kind: 'object', seed: 's' }))
    const frame = new Uint8Array(root.raw.length + 100)
    frame.set(root.raw, 50)
    roots.hold(decodeChange(frame.subarray(50, 50 + root.raw.length)))
    const held = roots.take(root.id)!
    expect(held.raw.byteLength).toBe(held.raw.buffer.byteLength)
    expect(held.raw).toEqual(root.raw)
  })
})
