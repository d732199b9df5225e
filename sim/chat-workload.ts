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
const memberOf = (n: number) => identityOf(accountKey(n).publicKey)

const EMOJI = ['👍', '🎉']

type FailureKind = 'mismatches' | 'violations' | 'diverged'
type Held = Awaited<ReturnType<SpaceReplica['listRecords']>>[number]
interface CheckResult {
  expected: Map<string, Flags>
  counters?: Counters
}

export async function runChatSeed(seed: number, crypto: CryptoProvider): Promise<ChatSeedResult> {
  const run = new ChatRun(seed)
  await run.openDevices(crypto)
  await run.shareSpace()
  await run.deliverAll()
  for (let step = 0; step < run.result.steps; step++) await run.step(step)
  await run.finish()
  return run.result
}

/**
 * One seed's run. Every draw comes from the one stream `r`, in the order the steps make them,
 * so the methods below must keep their draws where they are: moving one shifts every later
 * draw and changes the trace hash of every seed.
 */
class ChatRun {
  readonly r: Prng
  readonly result: ChatSeedResult
  readonly devices: Device[] = []
  private readonly trace: string[] = []
  /** Simulated milliseconds since EPOCH_MS; every device's env reads it. */
  private clock = 0
  private spaceId = ''
  private chatId = ''

  constructor(readonly seed: number) {
    this.r = new Prng(seed, 31)
    // Accounts are drawn before steps: the object literal's order is the draw order.
    this.result = { seed, accounts: 2 + this.r.int(3), devices: 0, steps: 40 + this.r.int(60), checks: 0, mismatches: 0, violations: 0, diverged: 0, failures: [], traceHash: '' }
  }

  /** Each device draws its random bytes from a stream of its own, so its keys do not depend on the steps. */
  private env(stream: number): Env {
    const pr = new Prng(this.seed, 100 + stream)
    return { now: () => EPOCH_MS + this.clock, randomBytes: (n) => pr.bytes(n), setTimer: () => () => undefined }
  }

  /** Account 0 always has two devices, so there is at least one pair whose tech spaces sync. */
  async openDevices(crypto: CryptoProvider): Promise<void> {
    for (let a = 0; a < this.result.accounts; a++) {
      const count = a === 0 || this.r.chance(0.5) ? 2 : 1
      for (let d = 0; d < count; d++) {
        const engine = await AccountEngine.open({
          storage: new MemoryStorageAdapter(),
          crypto,
          env: this.env(this.devices.length),
          accountKey: accountKey(a),
          modules: DEFAULT_MODULES,
        })
        this.devices.push({ name: `a${a}d${d}`, account: a, identity: engine.accountId, engine, readSeen: new Set() })
      }
    }
    this.result.devices = this.devices.length
  }

  /** Account 0's first device creates the space and its general chat and adds every other account. */
  async shareSpace(): Promise<void> {
    const owner = this.devices[0]
    const info = await owner.engine.createSpace({ name: 'chat sim' })
    const ownerSpace = owner.engine.space(info.id)
    this.spaceId = info.id
    this.chatId = (await setupUsecase(ownerSpace.services.bundles, 'general-chat')).bundles[0].bundle.rootId
    for (let a = 1; a < this.result.accounts; a++) await ownerSpace.replica.addMember(memberOf(a), 'writer')
    for (const d of this.devices.slice(1)) await d.engine.adopt(info.id)
  }

  private space(d: Device): SpaceEngine {
    return d.engine.held(this.spaceId)!
  }

  private fail(kind: FailureKind, msg: string): void {
    this.result[kind]++
    if (this.result.failures.length < 20) this.result.failures.push(`${kind}: ${msg}`)
  }

  /** Delivers a random subset of `from`'s changes to `to`, in random order. */
  private async deliver(from: SpaceReplica, to: SpaceReplica, all = false): Promise<void> {
    const changes = (await from.allChanges()).filter(() => all || this.r.chance(0.7))
    await to.ingest(this.r.shuffle(changes).map(({ id, raw }) => ({ id, raw })))
  }

  /** What a reader after an ingest waits for (as the daemon's sync does): every commit readable, every announcement made. */
  private async settleDevice(d: Device): Promise<void> {
    for (let i = 0; i < 2; i++) {
      await d.engine.tech.settled()
      await this.space(d).settled()
      await this.space(d).services.of(chatReadModule).settled()
    }
  }

  private async settle(): Promise<void> {
    for (const d of this.devices) await this.settleDevice(d)
  }

  /** Two rounds, because a change can reach a device only after the one it came through. */
  async deliverAll(): Promise<void> {
    const { devices } = this
    for (let round = 0; round < 2; round++) {
      for (const x of devices) for (const y of devices) if (x !== y) await this.deliver(this.space(x).replica, this.space(y).replica, true)
      for (const x of devices) for (const y of devices) if (x !== y && x.account === y.account) await this.deliver(x.engine.tech.replica, y.engine.tech.replica, true)
    }
    await this.settle()
  }

  /** Engine flags and counters against a from-scratch recomputation on one device. */
  private async check(d: Device, when: string): Promise<CheckResult> {
    this.result.checks++
    await this.settleDevice(d)
    const sp = this.space(d)
    const held = (await sp.replica.listRecords(this.chatId, CHAT_COLLECTION)).filter((x) => !x.deleted && x.value !== undefined)
    const marks = marksOf(await d.engine.accountData.list(marksDataset(this.spaceId, this.chatId)))
    const facts = held.map((x) => factsOf(x.id, x.verId, x.value, x.created.a, d.identity))
    const expected = new Map(facts.map((f) => [f.id, flagsOf(f, d.identity, marks)]))
    const shown = new Map((await sp.datasetDocs(this.chatId, CHAT_COLLECTION)).map((doc) => [doc.id, flagsOfDoc(doc)]))
    for (const [id, want] of expected) {
      const got = shown.get(id)
      if (!got || !sameFlags(got, want)) this.fail('mismatches', `${when}: ${d.name} message ${id} shows ${JSON.stringify(got)}, recomputed ${JSON.stringify(want)}`)
      if (!want.unread && facts.find((f) => f.id === id)!.creator !== d.identity) d.readSeen.add(id)
      else if (want.unread && d.readSeen.has(id)) this.fail('violations', `${when}: ${d.name} message ${id} is unread again`)
    }
    const row = sp.objectDoc(this.chatId)?.chat
    const want: Counters | undefined = facts.length ? countersOf(facts, d.identity, marks) : undefined
    const got = isObject(row) ? { unreadCount: row.unreadCount, unreadMentions: row.unreadMentions, unreadReactionsCount: row.unreadReactionsCount } : undefined
    if (JSON.stringify(got) !== JSON.stringify(want)) this.fail('mismatches', `${when}: ${d.name} row counters ${JSON.stringify(got)}, recomputed ${JSON.stringify(want)}`)
    return { expected, counters: want }
  }

  /** The live messages `d` holds; `own` narrows to its own (true) or others' (false). */
  private async heldIds(d: Device, own?: boolean): Promise<Held[]> {
    return (await this.space(d).replica.listRecords(this.chatId, CHAT_COLLECTION)).filter(
      (x) => !x.deleted && x.value !== undefined && (own === undefined || (isObject(x.value) && x.value.creator === d.identity) === own),
    )
  }

  /** One random step; its label (with what it acted on) goes into the trace. */
  async step(step: number): Promise<void> {
    this.clock += 1 + this.r.int(1000)
    const d = this.r.pick(this.devices)
    const kind = pickKind(this.r)
    const label = `${step} ${d.name} ${kind}`
    // A route acts on what is readable (messages still in the commit feed count as arriving after it).
    if (kind === 'read' || kind === 'readAll' || kind === 'reactionsRead') await this.settleDevice(d)
    this.trace.push(await this.act(kind, d, step, label))
  }

  /** Runs one kind of step and returns its label, extended with what it acted on. */
  private async act(kind: Kind, d: Device, step: number, label: string): Promise<string> {
    switch (kind) {
      case 'send':
        return label + (await this.send(d, step))
      case 'edit':
        return label + (await this.edit(d, step))
      case 'react':
        return label + (await this.react(d))
      case 'read':
        return this.read(d, label)
      case 'readAll':
        return this.readAll(d, label)
      case 'reactionsRead':
        return this.reactionsRead(d, label)
      case 'syncSpace':
        return label + (await this.syncSpace(d))
      case 'syncTech':
        return label + (await this.syncTech(d))
      case 'check':
        await this.settle()
        await this.check(d, label)
        return label
    }
  }

  private async send(d: Device, step: number): Promise<string> {
    const sp = this.space(d)
    const extra: JsonObject = {}
    if (this.r.chance(0.3)) extra.mentions = [memberOf(this.r.int(this.result.accounts))]
    const now = instant(sp.env.now())
    const res = await sp.write(this.chatId, [
      { op: 'set', ds: CHAT_COLLECTION, id: CHANGE_DERIVED_ID, path: '', value: { creator: d.identity, createdAt: now, modifiedAt: now, text: `t${step}`, ...extra } },
    ])
    return ` ${res.recordIds[0]}`
  }

  /** Edits text and sets or clears the mentions, so a mention can appear on or vanish from a read message. */
  private async edit(d: Device, step: number): Promise<string> {
    const own = await this.heldIds(d, true)
    if (!own.length) return ''
    const sp = this.space(d)
    const m = this.r.pick(own)
    const mention = this.r.chance(0.5) ? [memberOf(this.r.int(this.result.accounts))] : undefined
    await sp.write(this.chatId, [
      { op: 'set', ds: CHAT_COLLECTION, id: m.id, path: 'text', value: `edit ${step}` },
      mention ? { op: 'set', ds: CHAT_COLLECTION, id: m.id, path: 'mentions', value: mention } : { op: 'unset', ds: CHAT_COLLECTION, id: m.id, path: 'mentions' },
      { op: 'set', ds: CHAT_COLLECTION, id: m.id, path: 'modifiedAt', value: instant(sp.env.now()) },
    ])
    return ` ${m.id}`
  }

  /** Toggles this device's reaction: on if its account has none on the message yet, off if it has. */
  private async react(d: Device): Promise<string> {
    const all = await this.heldIds(d)
    if (!all.length) return ''
    const sp = this.space(d)
    const m = this.r.pick(all)
    const emoji = this.r.pick(EMOJI)
    const path = `reactions.${emoji}.${d.identity}`
    const on = !(isObject(m.value) && isObject(m.value.reactions) && isObject(m.value.reactions[emoji]) && d.identity in m.value.reactions[emoji])
    await sp.write(this.chatId, [on ? { op: 'set', ds: CHAT_COLLECTION, id: m.id, path, value: instant(sp.env.now()) } : { op: 'unset', ds: CHAT_COLLECTION, id: m.id, path }])
    return ` ${m.id} ${on ? 'on' : 'off'}`
  }

  /** The read route's promise: nothing at or below the message it read is unread. */
  private async read(d: Device, label: string): Promise<string> {
    const all = await this.heldIds(d)
    if (!all.length) return label
    const m = this.r.pick(all)
    await this.space(d).services.of(chatReadModule).read(this.chatId, m.id)
    label += ` ${m.id}`
    const { expected } = await this.check(d, label)
    for (const x of all) if (x.verId <= m.verId && expected.get(x.id)?.unread) this.fail('violations', `${label}: ${x.id} at or below the read message is still unread`)
    return label
  }

  private async readAll(d: Device, label: string): Promise<string> {
    await this.space(d).services.of(chatReadModule).readAll(this.chatId)
    const { counters } = await this.check(d, label)
    if (counters && counters.unreadCount !== 0) this.fail('violations', `${label}: ${counters.unreadCount} unread after read-all`)
    return label
  }

  /** Only the creator reads reactions, so it picks among its own messages. */
  private async reactionsRead(d: Device, label: string): Promise<string> {
    const own = await this.heldIds(d, true)
    if (!own.length) return label
    const m = this.r.pick(own)
    await this.space(d).services.of(chatReadModule).reactionsRead(this.chatId, m.id)
    label += ` ${m.id}`
    const { expected } = await this.check(d, label)
    if (expected.get(m.id)?.unreadReactions) this.fail('violations', `${label}: reactions still unread`)
    return label
  }

  private async syncSpace(d: Device): Promise<string> {
    const to = this.r.pick(this.devices.filter((x) => x !== d))
    await this.deliver(this.space(d).replica, this.space(to).replica)
    return ` -> ${to.name}`
  }

  /** Marks travel only between devices of one account: a lone device has no one to sync with. */
  private async syncTech(d: Device): Promise<string> {
    const twins = this.devices.filter((x) => x !== d && x.account === d.account)
    if (!twins.length) return ''
    const to = this.r.pick(twins)
    await this.deliver(d.engine.tech.replica, to.engine.tech.replica)
    return ` -> ${to.name}`
  }

  /** A full sync, a last check on every device, and the twins compared; closes the engines. */
  async finish(): Promise<void> {
    await this.deliverAll()
    const final = new Map<Device, CheckResult>()
    for (const d of this.devices) final.set(d, await this.check(d, 'final'))
    this.compareTwins(final)
    this.trace.push(...this.devices.map((d) => `${d.name} ${JSON.stringify(final.get(d)!.counters)}`))
    this.result.traceHash = toHex(sha256(utf8(this.trace.join('\n'))))
    for (const d of this.devices) await d.engine.close()
  }

  /** After a full sync the devices of one account hold the same marks, so they must show the same state. */
  private compareTwins(final: Map<Device, CheckResult>): void {
    for (const d of this.devices) {
      for (const e of this.devices) {
        if (d === e || d.account !== e.account || d.name > e.name) continue
        const a = final.get(d)!
        const b = final.get(e)!
        if (JSON.stringify([...a.expected].sort()) !== JSON.stringify([...b.expected].sort()) || JSON.stringify(a.counters) !== JSON.stringify(b.counters)) {
          this.fail('diverged', `${d.name} and ${e.name} disagree after a full sync`)
        }
      }
    }
  }
}

type Kind = 'send' | 'edit' | 'react' | 'read' | 'readAll' | 'reactionsRead' | 'syncSpace' | 'syncTech' | 'check'

const KINDS: Array<[Kind, number]> = [
  ['send', 30],
  ['edit', 8],
  ['react', 12],
  ['read', 10],
  ['readAll', 4],
  ['reactionsRead', 5],
  ['syncSpace', 20],
  ['syncTech', 8],
  ['check', 5],
]

function pickKind(r: Prng): Kind {
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
