import type { Env } from '../sync/core/env.ts'
import { identityOf, keyPairFromSeed, type KeyPair } from '../sync/crypto/keys.ts'
import type { CryptoProvider } from '../sync/crypto/provider.ts'
import { sha256 } from '../sync/crypto/hash.ts'
import { toHex, utf8 } from '../sync/core/encoding.ts'
import { CHANGE_DERIVED_ID, type JsonObject } from '../sync/crdt/ops.ts'
import { isObject } from '../sync/crdt/path.ts'
import type { SpaceReplica } from '../sync/replica/space-replica.ts'
import { countersOf, factsOf, flagsOf, type Counters, type Flags } from '../sync/modules/chat/read-state/compute.ts'
import { marksDataset, marksOf } from '../sync/modules/chat/read-state/marks.ts'
import { chatReadModule } from '../sync/modules/chat/read-state/module.ts'
import { CHAT_COLLECTION } from '../sync/modules/chat/read-state/service.ts'
import { DEFAULT_MODULES } from '../sync/modules/index.ts'
import { AccountEngine } from '../sync/space/account-engine.ts'
import { setupUsecase } from '../sync/space/catalog/setup.ts'
import { instant } from '../sync/space/rows.ts'
import type { SpaceEngine } from '../sync/space/space-engine.ts'
import { MemoryStorageAdapter } from '../sync/storage/memory.ts'
import { EPOCH_MS } from './peer.ts'
import { Prng } from './prng.ts'

/**
 * The simulator's chat workload (`npm run sim -- --chat`): accounts with one or two devices
 * each (real AccountEngines: a tech space per device, the shared space held by every device),
 * sending, editing, reacting, reading and reading-all at random, with changes delivered between
 * devices in random subsets and orders (the replica parks what arrives before its parents).
 * Marks travel only between devices of one account, through their tech spaces.
 *
 * The checker recomputes read state from scratch on a device (the messages its replica holds,
 * the marks its tech space holds) and compares it with what the engine shows: the flags on
 * message documents and the counters on the chat row. It also checks the semantics a route
 * promises right after it answers (read: nothing at or below the message is unread; read-all:
 * nothing is; reactions-read: that message's reactions are not), that read state only moves
 * forward on a device, and, after a full sync, that the devices of one account agree.
 */
export interface ChatSeedResult {
  seed: number
  accounts: number
  devices: number
  steps: number
  checks: number
  /** Engine state differing from the from-scratch recomputation. */
  mismatches: number
  /** A route's promise broken right after it answered, or a read message unread again. */
  violations: number
  /** Devices of one account disagreeing after a full sync. */
  diverged: number
  failures: string[]
  traceHash: string
}

interface Device {
  name: string
  account: number
  identity: string
  engine: AccountEngine
  /** Messages this device has seen read (never unread again here: forward-only). */
  readSeen: Set<string>
}

const keys = new Map<number, KeyPair>()
const accountKey = (n: number): KeyPair => {
  let k = keys.get(n)
  if (!k) keys.set(n, (k = keyPairFromSeed(new Uint8Array(32).fill(0x40 + n))))
  return k
}

const EMOJI = ['👍', '🎉']

export async function runChatSeed(seed: number, crypto: CryptoProvider): Promise<ChatSeedResult> {
  const r = new Prng(seed, 31)
  let clock = 0
  const trace: string[] = []
  const failures: string[] = []
  const result: ChatSeedResult = { seed, accounts: 2 + r.int(3), devices: 0, steps: 40 + r.int(60), checks: 0, mismatches: 0, violations: 0, diverged: 0, failures, traceHash: '' }
  const env = (stream: number): Env => {
    const pr = new Prng(seed, 100 + stream)
    return { now: () => EPOCH_MS + clock, randomBytes: (n) => pr.bytes(n), setTimer: () => () => undefined }
  }
  const devices: Device[] = []
  for (let a = 0; a < result.accounts; a++) {
    const count = a === 0 || r.chance(0.5) ? 2 : 1
    for (let d = 0; d < count; d++) {
      const engine = await AccountEngine.open({ storage: new MemoryStorageAdapter(), crypto, env: env(devices.length), accountKey: accountKey(a), modules: DEFAULT_MODULES })
      devices.push({ name: `a${a}d${d}`, account: a, identity: engine.accountId, engine, readSeen: new Set() })
    }
  }
  result.devices = devices.length
  // Account 0's first device creates the space and its general chat and adds every other account.
  const owner = devices[0]
  const info = await owner.engine.createSpace({ name: 'chat sim' })
  const ownerSpace = owner.engine.space(info.id)
  const chatId = (await setupUsecase(ownerSpace.services.bundles, 'general-chat')).bundles[0].bundle.rootId
  for (let a = 1; a < result.accounts; a++) await ownerSpace.replica.addMember(identityOf(accountKey(a).publicKey), 'writer')
  for (const d of devices.slice(1)) await d.engine.adopt(info.id)
  const space = (d: Device): SpaceEngine => d.engine.held(info.id)!
  const fail = (kind: 'mismatches' | 'violations' | 'diverged', msg: string) => {
    result[kind]++
    if (failures.length < 20) failures.push(`${kind}: ${msg}`)
  }

  /** Delivers a random subset of `from`'s changes to `to`, in random order. */
  const deliver = async (from: SpaceReplica, to: SpaceReplica, all = false) => {
    const changes = (await from.allChanges()).filter(() => all || r.chance(0.7))
    await to.ingest(r.shuffle(changes).map(({ id, raw }) => ({ id, raw })))
  }
  /** What a reader after an ingest waits for (as the daemon's sync does): every commit readable, every announcement made. */
  const settleDevice = async (d: Device) => {
    for (let i = 0; i < 2; i++) {
      await d.engine.tech.settled()
      await space(d).settled()
      await space(d).services.of(chatReadModule).settled()
    }
  }
  const settle = async () => {
    for (const d of devices) await settleDevice(d)
  }
  await deliverAll()

  async function deliverAll() {
    for (let round = 0; round < 2; round++) {
      for (const x of devices) for (const y of devices) if (x !== y) await deliver(space(x).replica, space(y).replica, true)
      for (const x of devices) for (const y of devices) if (x !== y && x.account === y.account) await deliver(x.engine.tech.replica, y.engine.tech.replica, true)
    }
    await settle()
  }

  /** Engine flags and counters against a from-scratch recomputation on one device. */
  async function check(d: Device, when: string) {
    result.checks++
    await settleDevice(d)
    const sp = space(d)
    const held = (await sp.replica.listRecords(chatId, CHAT_COLLECTION)).filter((x) => !x.deleted && x.value !== undefined)
    const marks = marksOf(await d.engine.accountData.list(marksDataset(info.id, chatId)))
    const facts = held.map((x) => factsOf(x.id, x.verId, x.value, x.created.a, d.identity))
    const expected = new Map(facts.map((f) => [f.id, flagsOf(f, d.identity, marks)]))
    const shown = new Map((await sp.datasetDocs(chatId, CHAT_COLLECTION)).map((doc) => [doc.id, flagsOfDoc(doc)]))
    for (const [id, want] of expected) {
      const got = shown.get(id)
      if (!got || !sameFlags(got, want)) fail('mismatches', `${when}: ${d.name} message ${id} shows ${JSON.stringify(got)}, recomputed ${JSON.stringify(want)}`)
      if (!want.unread && facts.find((f) => f.id === id)!.creator !== d.identity) d.readSeen.add(id)
      else if (want.unread && d.readSeen.has(id)) fail('violations', `${when}: ${d.name} message ${id} is unread again`)
    }
    const row = sp.objectDoc(chatId)?.chat
    const want: Counters | undefined = facts.length ? countersOf(facts, d.identity, marks) : undefined
    const got = isObject(row) ? { unreadCount: row.unreadCount, unreadMentions: row.unreadMentions, unreadReactionsCount: row.unreadReactionsCount } : undefined
    if (JSON.stringify(got) !== JSON.stringify(want)) fail('mismatches', `${when}: ${d.name} row counters ${JSON.stringify(got)}, recomputed ${JSON.stringify(want)}`)
    return { expected, counters: want }
  }

  const heldIds = async (d: Device, own?: boolean) =>
    (await space(d).replica.listRecords(chatId, CHAT_COLLECTION)).filter((x) => !x.deleted && x.value !== undefined && (own === undefined || (isObject(x.value) && x.value.creator === d.identity) === own))

  for (let step = 0; step < result.steps; step++) {
    clock += 1 + r.int(1000)
    const d = r.pick(devices)
    const sp = space(d)
    const svc = sp.services.of(chatReadModule)
    const kind = pickKind(r)
    let label = `${step} ${d.name} ${kind}`
    // A route acts on what is readable (messages still in the commit feed count as arriving after it).
    if (kind === 'read' || kind === 'readAll' || kind === 'reactionsRead') await settleDevice(d)
    switch (kind) {
      case 'send': {
        const extra: JsonObject = {}
        if (r.chance(0.3)) extra.mentions = [identityOf(accountKey(r.int(result.accounts)).publicKey)]
        const now = instant(sp.env.now())
        const res = await sp.write(chatId, [{ op: 'set', ds: CHAT_COLLECTION, id: CHANGE_DERIVED_ID, path: '', value: { creator: d.identity, createdAt: now, modifiedAt: now, text: `t${step}`, ...extra } }])
        label += ` ${res.recordIds[0]}`
        break
      }
      case 'edit': {
        const own = await heldIds(d, true)
        if (!own.length) break
        const m = r.pick(own)
        const mention = r.chance(0.5) ? [identityOf(accountKey(r.int(result.accounts)).publicKey)] : undefined
        await sp.write(chatId, [
          { op: 'set', ds: CHAT_COLLECTION, id: m.id, path: 'text', value: `edit ${step}` },
          mention ? { op: 'set', ds: CHAT_COLLECTION, id: m.id, path: 'mentions', value: mention } : { op: 'unset', ds: CHAT_COLLECTION, id: m.id, path: 'mentions' },
          { op: 'set', ds: CHAT_COLLECTION, id: m.id, path: 'modifiedAt', value: instant(sp.env.now()) },
        ])
        label += ` ${m.id}`
        break
      }
      case 'react': {
        const all = await heldIds(d)
        if (!all.length) break
        const m = r.pick(all)
        const emoji = r.pick(EMOJI)
        const path = `reactions.${emoji}.${d.identity}`
        const on = !(isObject(m.value) && isObject(m.value.reactions) && isObject(m.value.reactions[emoji]) && d.identity in m.value.reactions[emoji])
        await sp.write(chatId, [on ? { op: 'set', ds: CHAT_COLLECTION, id: m.id, path, value: instant(sp.env.now()) } : { op: 'unset', ds: CHAT_COLLECTION, id: m.id, path }])
        label += ` ${m.id} ${on ? 'on' : 'off'}`
        break
      }
      case 'read': {
        const all = await heldIds(d)
        if (!all.length) break
        const m = r.pick(all)
        await svc.read(chatId, m.id)
        label += ` ${m.id}`
        const { expected } = await check(d, label)
        for (const x of all) if (x.verId <= m.verId && expected.get(x.id)?.unread) fail('violations', `${label}: ${x.id} at or below the read message is still unread`)
        break
      }
      case 'readAll': {
        await svc.readAll(chatId)
        const { counters } = await check(d, label)
        if (counters && counters.unreadCount !== 0) fail('violations', `${label}: ${counters.unreadCount} unread after read-all`)
        break
      }
      case 'reactionsRead': {
        const own = await heldIds(d, true)
        if (!own.length) break
        const m = r.pick(own)
        await svc.reactionsRead(chatId, m.id)
        label += ` ${m.id}`
        const { expected } = await check(d, label)
        if (expected.get(m.id)?.unreadReactions) fail('violations', `${label}: reactions still unread`)
        break
      }
      case 'syncSpace': {
        const to = r.pick(devices.filter((x) => x !== d))
        await deliver(sp.replica, space(to).replica)
        label += ` -> ${to.name}`
        break
      }
      case 'syncTech': {
        const twins = devices.filter((x) => x !== d && x.account === d.account)
        if (!twins.length) break
        const to = r.pick(twins)
        await deliver(d.engine.tech.replica, to.engine.tech.replica)
        label += ` -> ${to.name}`
        break
      }
      case 'check': {
        await settle()
        await check(d, label)
        break
      }
    }
    trace.push(label)
  }

  await deliverAll()
  const final = new Map<Device, { flags: Map<string, Flags>; counters?: Counters }>()
  for (const d of devices) {
    const { expected, counters } = await check(d, 'final')
    final.set(d, { flags: expected, counters })
  }
  for (const d of devices) {
    for (const e of devices) {
      if (d === e || d.account !== e.account || d.name > e.name) continue
      const a = final.get(d)!
      const b = final.get(e)!
      if (JSON.stringify([...a.flags].sort()) !== JSON.stringify([...b.flags].sort()) || JSON.stringify(a.counters) !== JSON.stringify(b.counters)) {
        fail('diverged', `${d.name} and ${e.name} disagree after a full sync`)
      }
    }
  }
  trace.push(...devices.map((d) => `${d.name} ${JSON.stringify(final.get(d)!.counters)}`))
  result.traceHash = toHex(sha256(utf8(trace.join('\n'))))
  for (const d of devices) await d.engine.close()
  return result
}

const KINDS: Array<[string, number]> = [
  ['send', 30], ['edit', 8], ['react', 12], ['read', 10], ['readAll', 4], ['reactionsRead', 5], ['syncSpace', 20], ['syncTech', 8], ['check', 5],
]

function pickKind(r: Prng): string {
  let x = r.int(KINDS.reduce((n, [, w]) => n + w, 0))
  for (const [k, w] of KINDS) {
    if (x < w) return k
    x -= w
  }
  return 'send'
}

function flagsOfDoc(doc: JsonObject): Flags {
  return { unread: doc.unread === true, unreadMention: doc.unreadMention === true, unreadReactions: doc.unreadReactions === true }
}

const sameFlags = (a: Flags, b: Flags) => a.unread === b.unread && a.unreadMention === b.unreadMention && a.unreadReactions === b.unreadReactions
