import { describe, expect, it } from 'vitest'
import { encodeCanonical } from '../../sync/core/encoding.ts'
import { seal } from '../../sync/crypto/box.ts'
import { identityOf } from '../../sync/crypto/keys.ts'
import { decodeChange, signChange } from '../../sync/dag/change.ts'
import { mintAdmission } from '../../sync/hub/admission.ts'
import { HubCore, type HubCoreOptions } from '../../sync/hub/hub-core.ts'
import { MemoryHubRegistry } from '../../sync/hub/memory-registry.ts'
import type { HubMessage } from '../../sync/protocol/hub-wire.ts'
import { decodeMessage, encodeMessage } from '../../sync/protocol/messages.ts'
import { SyncSession } from '../../sync/protocol/session.ts'
import { SpaceReplica } from '../../sync/replica/space-replica.ts'
import { utf8 } from '../../sync/core/encoding.ts'
import { deps, keyFor, seededEnv } from '../helpers.ts'
import { frames, headsOf, pump, type Node } from '../protocol/helpers.ts'

const HUB = 50

/** A hub node: a HubCore over keyless replicas in memory, behind a session. */
async function hubNode(opts: Partial<HubCoreOptions> = {}) {
  const key = keyFor(HUB)
  const d = await deps(HUB)
  const registry = new MemoryHubRegistry()
  const core = new HubCore({
    key,
    crypto: d.crypto,
    env: d.env,
    registry,
    openReplica: async (spaceId) => SpaceReplica.open({ ...(await deps(HUB)), keyless: true }, spaceId, key),
    ...opts,
  })
  const session = new SyncSession({ host: core, key, peerId: 'hub', crypto: d.crypto, env: seededEnv(HUB) })
  return { core, registry, node: { name: 'hub', session, key } as Omit<Node, 'replica'> as Node }
}

async function deviceOf(name: string, account: number, hub: string, space?: string): Promise<Node> {
  const key = keyFor(account)
  const d = await deps(account * 7 + name.length)
  const replica = space ? await SpaceReplica.open(d, space, key) : await SpaceReplica.create(d, key)
  const session = new SyncSession({
    host: { space: (id) => (id === replica.spaceId ? replica : undefined), custodian: (_s, id) => id === hub },
    key,
    peerId: name,
    crypto: d.crypto,
    env: seededEnv(account * 13 + 5),
  })
  return { name, replica, session, key }
}

async function link(a: Node, b: Node) {
  await pump([a, b], [...frames(a, a.session.peerUp(b.name)), ...frames(b, b.session.peerUp(a.name))])
}

/** Runs one exchange about `spaceId` opened by `a` with `b`; answers what `open` said. */
async function sync(a: Node, b: Node, spaceId: string) {
  const opened = await a.session.open(b.name, spaceId)
  await pump([a, b], frames(a, opened.out))
  return opened
}

const register = (spaceIds: string[], token = ''): HubMessage => ({ kind: 'register', reqId: 1, token: utf8(token), spaceIds })

async function writeObjects(r: SpaceReplica, n: number) {
  for (let i = 0; i < n; i++) {
    const o = await r.createObject()
    await r.write(o, [{ op: 'set', ds: '', id: '', path: 'title', value: `object ${i}` }])
  }
}

describe('the hub core: a keyless peer that keeps a space for its readers', () => {
  it('keeps what the owner brings, serves it to a member, and never holds a key or a record', async () => {
    const { core, node: hub } = await hubNode({ allowlist: [identityOf(keyFor(1).publicKey)] })
    const a = await deviceOf('a', 1, core.identity)
    const spaceId = a.replica.spaceId
    await a.replica.addMember(identityOf(keyFor(2).publicKey), 'writer')
    await writeObjects(a.replica, 5)
    expect((await core.handle(identityOf(keyFor(1).publicKey), register([spaceId]))).kind).toBe('status')
    await link(a, hub)
    await sync(a, hub, spaceId)
    const kept = core.openReplica(spaceId)!
    expect(headsOf(kept)).toBe(headsOf(a.replica))
    expect(kept.keyring.get(kept.acl.current().readKeyId!)).toBeUndefined()
    for (const t of kept.treeIds()) expect(await kept.listRecords(t, '')).toEqual([])

    // B never meets A: it gets the space from the hub alone.
    const b = await deviceOf('b', 2, core.identity, spaceId)
    await link(b, hub)
    await sync(b, hub, spaceId)
    expect(headsOf(b.replica)).toBe(headsOf(a.replica))
    expect(await b.replica.stateDigest()).toBe(await a.replica.stateDigest())
  })

  it('answers a stranger and an unregistered space as unknown, and takes nothing from them', async () => {
    const { core, node: hub } = await hubNode({ allowlist: [identityOf(keyFor(1).publicKey)] })
    const a = await deviceOf('a', 1, core.identity)
    await writeObjects(a.replica, 2)
    await link(a, hub)
    // Not registered: the hub refuses as for a space it never saw.
    const before = await sync(a, hub, a.replica.spaceId)
    expect('req' in before).toBe(true)
    expect(core.openReplica(a.replica.spaceId)).toBeUndefined()
    await core.handle(identityOf(keyFor(1).publicKey), register([a.replica.spaceId]))
    await sync(a, hub, a.replica.spaceId)
    const c = await deviceOf('c', 3, core.identity, a.replica.spaceId)
    await link(c, hub)
    await sync(c, hub, a.replica.spaceId)
    expect(c.replica.known).toBe(false)
    expect(c.replica.treeIds()).toEqual([])
    // A stranger's registration is refused: it is not admitted.
    const st = await core.handle(identityOf(keyFor(3).publicKey), register([a.replica.spaceId]))
    expect(st.kind === 'status' && st.code).toBe('not_admitted')
  })

  it('refuses a reader’s signed write and a removed member’s later writes, as every peer does', async () => {
    const { core, node: hub } = await hubNode({ allowlist: [identityOf(keyFor(1).publicKey)] })
    const a = await deviceOf('a', 1, core.identity)
    const spaceId = a.replica.spaceId
    const bId = identityOf(keyFor(2).publicKey)
    await a.replica.addMember(bId, 'reader')
    await writeObjects(a.replica, 1)
    await core.handle(identityOf(keyFor(1).publicKey), register([spaceId]))
    await link(a, hub)
    await sync(a, hub, spaceId)
    const b = await deviceOf('b', 2, core.identity, spaceId)
    await link(b, hub)
    await sync(b, hub, spaceId)
    // B is a reader: a change it signs anyway is refused at the hub (its key is B's to use).
    const tree = b.replica.treeIds()[0]
    const cite = b.replica.acl.current()
    const forged = await signChange((await deps(2)).crypto, keyFor(2), {
      spaceId,
      treeId: tree,
      prevIds: b.replica.heads(tree),
      aclHeadId: b.replica.acl.headIds()[0],
      seq: 1,
      lamport: 100,
      timestamp: 1,
      readKeyId: cite.readKeyId!,
      payload: seal(seededEnv(9), new Uint8Array(32), encodeCanonical({ ops: [] })),
    })
    const kept = core.openReplica(spaceId)!
    const rep = await kept.ingest([{ id: forged.id, raw: forged.raw }], { origin: 'b' })
    expect(rep.rejected.map((x) => x.reason)).toEqual(['read_only'])

    // A removes B and writes on: B asks the hub and gets nothing written after its removal.
    await a.replica.removeMember(bId)
    await writeObjects(a.replica, 2)
    await sync(a, hub, spaceId)
    expect(headsOf(kept)).toBe(headsOf(a.replica))
    const after = new Set<string>()
    for (const t of a.replica.treeIds()) for (const h of a.replica.heads(t)) after.add(h)
    const received: string[] = []
    const ingest = b.replica.ingest.bind(b.replica)
    b.replica.ingest = (items, o) => {
      for (const it of items) {
        const c = decodeChange(it.raw)
        received.push(c.treeId === '' ? c.id : c.treeId)
      }
      return ingest(items, o)
    }
    await sync(b, hub, spaceId)
    // At most the removal notice (ACL records) reaches B, never an object change.
    expect(received.filter((t) => t !== spaceId)).toEqual([])
    expect(hub.session.allCounters().get('b')!.denied).toBeGreaterThan(0)
  })

  it('takes a member’s push after refusing it for an ACL record only that member’s side holds', async () => {
    // A registers and syncs the space to the hub, then adds M and writes nothing more there.
    // M got the space from A directly and writes; the hub, lacking M's `add`, refuses M. A
    // device pushes its ACL chain and its own changes to a custodian that refused it as it
    // does to a reader (Responder.pushOwnChanges): the hub learns M's add from M and keeps M's
    // writes. (Before, the push went to readers only and M stayed refused at its hub until A
    // came back: the simulator lost a write of an admin that reached only its hub, hub seed 26.)
    const { core, node: hub } = await hubNode({ allowlist: [identityOf(keyFor(1).publicKey)] })
    const a = await deviceOf('a', 1, core.identity)
    const spaceId = a.replica.spaceId
    await writeObjects(a.replica, 1)
    await core.handle(identityOf(keyFor(1).publicKey), register([spaceId]))
    await link(a, hub)
    await sync(a, hub, spaceId)
    await a.replica.addMember(identityOf(keyFor(2).publicKey), 'writer')
    const m = await deviceOf('m', 2, core.identity, spaceId)
    await link(a, m)
    await sync(m, a, spaceId)
    await writeObjects(m.replica, 1)
    await link(m, hub)
    await sync(m, hub, spaceId)
    expect(hub.session.allCounters().get('m')!.denied).toBeGreaterThan(0)
    expect(headsOf(core.openReplica(spaceId)!)).toBe(headsOf(m.replica))
  })

  it('sends nothing back to a member whose step brought its own removal', async () => {
    // A keeps the space at the hub, writes more there, then removes B. B holds its removal (A
    // wrote it; a notice would bring it) and opens an exchange with the hub, which lacks it: B's
    // question step carries the record and asks for a tree of A's it lacks. The hub judges B
    // again once the step is in (Responder.onStep judges rights again after ingest) and answers as to a non-reader;
    // before, it answered the question with the tree's changes (hub seed 274 of the simulator).
    const { core, node: hub } = await hubNode({ allowlist: [identityOf(keyFor(1).publicKey)] })
    const a = await deviceOf('a', 1, core.identity)
    const spaceId = a.replica.spaceId
    const bId = identityOf(keyFor(2).publicKey)
    await a.replica.addMember(bId, 'writer')
    await core.handle(identityOf(keyFor(1).publicKey), register([spaceId]))
    await link(a, hub)
    await sync(a, hub, spaceId)
    const b = await deviceOf('b', 2, core.identity, spaceId)
    await link(a, b)
    await sync(b, a, spaceId)
    await writeObjects(a.replica, 1)
    await sync(a, hub, spaceId)
    const tree = a.replica.treeIds()[0]
    const removal = await a.replica.removeMember(bId)
    const raw = (await a.replica.rawChanges(spaceId, [removal]))[0].raw
    await link(b, hub)
    const opened = await b.session.open('hub', spaceId)
    if (!('req' in opened)) throw new Error(`b could not open: ${opened.error}`)
    for (const f of opened.out) await hub.session.handle('b', f.bytes)
    const step = encodeMessage({ type: 'step', spaceId, req: opened.req, hop: 2, ranges: [], heads: [{ treeId: tree, heads: [], have: [] }], wants: [], changes: [raw] })
    const out = await hub.session.handle('b', step)
    expect(core.openReplica(spaceId)!.acl.has(removal)).toBe(true)
    const sent = out.map((o) => decodeMessage(o.bytes)).flatMap((m) => (m.type === 'step' ? m.changes.map((c) => decodeChange(c).treeId) : []))
    expect(sent).not.toContain(tree)
    expect(out.map((o) => decodeMessage(o.bytes).type)).toEqual(['error'])
  })

  it('closes the least recently used spaces past its memory budget, and reopens them on demand', async () => {
    const account = identityOf(keyFor(1).publicKey)
    const closed: string[] = []
    const sizes = new Map<string, number>()
    const { core, node: hub } = await hubNode({
      allowlist: [account],
      openBudget: { maxBytes: 1, sizeOf: (id) => sizes.get(id) ?? 0, closed: (id) => closed.push(id) },
    })
    const [a1, a2] = [await deviceOf('a', 1, core.identity), await deviceOf('aa', 1, core.identity)]
    for (const a of [a1, a2]) await writeObjects(a.replica, 2)
    sizes.set(a1.replica.spaceId, 10)
    sizes.set(a2.replica.spaceId, 10)
    await core.handle(account, register([a1.replica.spaceId]))
    await link(a1, hub)
    await sync(a1, hub, a1.replica.spaceId)
    const first = core.openReplica(a1.replica.spaceId)!
    expect(headsOf(first)).toBe(headsOf(a1.replica))
    expect(closed).toEqual([])
    // Opening the second space goes past the budget: the first, least recently used, closes.
    await core.handle(account, register([a2.replica.spaceId]))
    await link(a2, hub)
    await sync(a2, hub, a2.replica.spaceId)
    expect(closed).toEqual([a1.replica.spaceId])
    expect(core.openSpaceIds()).toEqual([a2.replica.spaceId])
    // Asked again, it reopens: a new replica (this test's opener starts empty; the node's reopens from its store).
    const again = await core.space(a1.replica.spaceId)
    expect(again).toBeDefined()
    expect(again).not.toBe(first)
    expect(closed).toEqual([a1.replica.spaceId, a2.replica.spaceId])
  })

  it('admits an account by a token the hub signed, for that account only', async () => {
    const { core } = await hubNode()
    const d = await deps(1)
    const account = identityOf(keyFor(1).publicKey)
    const token = await mintAdmission(d.crypto, keyFor(HUB), account, 0)
    const other = await core.handle(identityOf(keyFor(2).publicKey), register(['11111111111111111111111111111111'], token))
    expect(other.kind === 'status' && other.code).toBe('bad_token')
    const foreign = await mintAdmission(d.crypto, keyFor(51), account, 0)
    const wrongHub = await core.handle(account, register(['11111111111111111111111111111111'], foreign))
    expect(wrongHub.kind === 'status' && wrongHub.code).toBe('bad_token')
    const ok = await core.handle(account, register(['11111111111111111111111111111111'], token))
    expect(ok.kind === 'status' && ok.code).toBe('ok')
    // Admitted once: later registrations need no token.
    const again = await core.handle(account, register(['11111111111111111111111111111112']))
    expect(again.kind === 'status' && again.spaces.map((s) => s[1])).toEqual(['pending'])
  })

  it('holds each account to its quotas and says which', async () => {
    const account = identityOf(keyFor(1).publicKey)
    const { core, node: hub } = await hubNode({ allowlist: [account], quotas: { maxSpaces: 1, changesPerMinute: 4 } })
    const a = await deviceOf('a', 1, core.identity)
    await writeObjects(a.replica, 5)
    const st = await core.handle(account, register([a.replica.spaceId, '11111111111111111111111111111112']))
    expect(st.kind === 'status' && st.spaces.map((s) => s[1])).toEqual(['pending', 'over_spaces'])
    await link(a, hub)
    await sync(a, hub, a.replica.spaceId)
    // 11 changes in one step, a budget of 4 a minute: the first step goes (a full bucket), then
    // the rest waits for the bucket to refill, and the device hears it.
    const counters = hub.session.allCounters()
    expect(headsOf(core.openReplica(a.replica.spaceId)!)).toBe(headsOf(a.replica))
    await writeObjects(a.replica, 2)
    await sync(a, hub, a.replica.spaceId)
    expect([...counters.values()].some((c) => (c.dropped.over_quota ?? 0) > 0)).toBe(true)
    expect(headsOf(core.openReplica(a.replica.spaceId)!)).not.toBe(headsOf(a.replica))
    const told = await core.handle(account, register([]))
    expect(told.kind === 'status' && told.spaces).toContainEqual([a.replica.spaceId, 'rate_limited'])
  })
})
