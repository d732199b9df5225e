/**
 * A Jazz peer (bench/peers.ts): cojson's LocalNode with its SQLite storage (`getSqliteStorage`
 * on a better-sqlite3 driver in WAL mode, as Jazz's Node storage packages drive it), the
 * native crypto Jazz recommends on Node (NapiCrypto), and cojson-transport-ws: peer A accepts
 * WebSocket peers as a sync server does, peer B connects to it. B signs in as the same account
 * (its id and secret, a new session), as a second device of one user does. Records are one
 * private CoMap each, owned by a group, referenced from an index CoMap by record id; the text is
 * a CoPlainText. Share and revoke run on a second group with another account's node.
 */
import Database from 'better-sqlite3'
import { createHash } from 'node:crypto'
import { join } from 'node:path'
import { LocalNode, getSqliteStorage, type RawCoMap, type RawGroup, type RawCoPlainText, type RawAccountID, type AgentSecret } from 'cojson'
import { NapiCrypto } from 'cojson/crypto/NapiCrypto'
import { createWebSocketPeer } from 'cojson-transport-ws'
import { WebSocket, WebSocketServer } from 'ws'
import { dirBytes, emit, now, recordFields, recordId, rng, serveOps, tick } from '../harness.ts'

/** The SQLite driver cojson's storage asks for, on better-sqlite3 (WAL). */
class BetterSqliteDriver {
  private readonly db: Database.Database
  constructor(file: string) {
    this.db = new Database(file)
    this.db.pragma('journal_mode = WAL')
  }
  run(sql: string, params: unknown[]) {
    this.db.prepare(sql).run(params)
  }
  query<T>(sql: string, params: unknown[]): T[] {
    return this.db.prepare(sql).all(params) as T[]
  }
  get<T>(sql: string, params: unknown[]): T | undefined {
    return this.db.prepare(sql).get(params) as T | undefined
  }
  transaction(fn: () => unknown) {
    this.db.transaction(fn)()
  }
  /** Folds the WAL into the database file, so the bytes on disk are what the store holds. */
  checkpoint() {
    this.db.pragma('wal_checkpoint(TRUNCATE)')
  }
  closeDb() {
    this.db.close()
  }
}

/** The parts of a CoMap and a CoPlainText the bench uses. */
type CoMap = Pick<RawCoMap, 'id' | 'get' | 'set' | 'keys'>
/** A loaded CoValue as the CoMap it was made as. */
const asMap = (v: unknown) => v as CoMap
type CoText = Pick<RawCoPlainText, 'id' | 'insertAfter' | 'insertBefore' | 'toString'>
const asText = (v: unknown) => v as CoText

type Account = { accountID: RawAccountID; accountSecret: AgentSecret }

let dir = ''
const cryptoReady = NapiCrypto.create()
let node: LocalNode
let wss: WebSocketServer | undefined
let group: RawGroup
let index: CoMap
let text: CoText
let account: Account
let shareGroup: RawGroup | undefined
let shareRec: CoMap | undefined
const members = new Map<string, unknown>()

let driver: BetterSqliteDriver | undefined
const storage = (d: string) => getSqliteStorage((driver = new BetterSqliteDriver(join(d, 'jazz.sqlite'))))
const serverPeer = (port: number) => createWebSocketPeer({ id: 'peer-a', websocket: new WebSocket(`ws://127.0.0.1:${port}`), role: 'server' })

async function listen() {
  wss = new WebSocketServer({ port: 0, host: '127.0.0.1' })
  await new Promise<void>((r) => wss!.once('listening', () => r()))
  let n = 0
  wss.on('connection', (ws) => node.syncManager.addPeer(createWebSocketPeer({ id: `client-${++n}`, websocket: ws, role: 'client' })))
  return (wss.address() as { port: number }).port
}

async function durable(ids: string[]) {
  await Promise.all(ids.map((id) => node.syncManager.waitForStorageSync(id as never) ?? Promise.resolve()))
}

function write(from: number, n: number): string[] {
  const ids: string[] = []
  for (let k = from; k < from + n; k++) {
    const m = group.createMap(recordFields(k), undefined, 'private')
    index.set(recordId(k), m.id)
    ids.push(m.id)
  }
  ids.push(index.id)
  return ids
}

/** Resolves once `read` gives a value for the CoValue `id` (subscribed, and polled as a backstop). */
function whenReadable<T>(id: string, read: (v: CoMap) => T | undefined): Promise<T> {
  return new Promise((resolve) => {
    let done = false
    const finish = (v: T) => {
      if (done) return
      done = true
      unsub()
      clearInterval(poll)
      resolve(v)
    }
    const unsub = node.subscribe(id as never, (v) => {
      if (v === 'unavailable') return
      const x = read(asMap(v))
      if (x !== undefined) finish(x)
    })
    const poll = setInterval(() => {
      const core = node.getCoValue(id as never)
      if (!core.isAvailable()) return
      const x = read(asMap(core.getCurrentContent()))
      if (x !== undefined) finish(x)
    }, 5)
  })
}

serveOps({
  async open({ dir: d, role, port }: { dir: string; role: 'a' | 'member'; port?: number }) {
    dir = d
    const crypto = await cryptoReady
    const made = await LocalNode.withNewlyCreatedAccount({ creationProps: { name: role }, crypto, storage: storage(dir), peers: role === 'member' ? [serverPeer(port!)] : [] })
    node = made.node
    account = { accountID: made.accountID, accountSecret: made.accountSecret }
    if (role === 'member') {
      await node.syncManager.waitForAllCoValuesSync()
      return { accountID: made.accountID }
    }
    return { port: await listen(), ...account }
  },
  create() {
    group = node.createGroup()
    index = group.createMap()
    text = group.createPlainText('')
    return { docId: index.id, textId: text.id, groupId: group.id }
  },
  async write({ from, n }: { from: number; n: number }) {
    const t0 = now()
    await durable(write(from, n))
    return { ms: now() - t0 }
  },
  async populate({ n }: { n: number }) {
    const ids = write(0, n)
    await durable(ids)
    return {}
  },
  /** Peer B: sign in as the account on a fresh store, load the index, then every record. */
  async firstSync({ dir: d, port, account: acc, docId, last }: { dir: string; port: number; account: Account; docId: string; last: number }) {
    dir = d
    const crypto = await cryptoReady
    const t0 = now()
    node = await LocalNode.withLoadedAccount({ ...acc, sessionID: undefined, peers: [serverPeer(port)], crypto, storage: storage(dir) })
    const idx = await whenReadable(docId, (m) => (m.get(recordId(last)) ? m : undefined))
    index = idx
    const ids = idx.keys().map((k) => idx.get(k) as string)
    const loaded = await Promise.all(ids.map((id) => node.load(id as never)))
    const lastRec = asMap(await node.load(idx.get(recordId(last)) as never))
    if (lastRec.get('name') !== recordFields(last).name) throw new Error('last record unreadable')
    return { ms: now() - t0, count: loaded.filter((x) => x !== 'unavailable').length }
  },
  /** Peer B for the text workload: signed in, connected, the text loaded. */
  async join({ dir: d, port, account: acc, textId }: { dir: string; port: number; account: Account; textId: string }) {
    dir = d
    const crypto = await cryptoReady
    node = await LocalNode.withLoadedAccount({ ...acc, sessionID: undefined, peers: [serverPeer(port)], crypto, storage: storage(dir) })
    text = asText(await node.load(textId as never))
    return {}
  },
  watch({ key }: { key: number }) {
    const id = index.get(recordId(key)) as string
    let last: unknown = undefined
    node.subscribe(id as never, (m) => {
      if (m === 'unavailable') return
      const v = asMap(m).get('n')
      if (v !== last) emit({ seen: (last = v), at: now() })
    })
    return {}
  },
  async edit({ key, value }: { key: number; value: number }) {
    const id = index.get(recordId(key)) as string
    const m = asMap(await node.load(id as never))
    const at = now()
    m.set('n', value)
    return { at }
  },
  async type({ n, seed }: { n: number; seed: number }) {
    const r = rng(seed)
    const t0 = now()
    for (let k = 0; k < n; k++) {
      const cur = asText(node.getCoValue(text.id).getCurrentContent())
      const len = cur.toString().length
      const pos = Math.floor(r() * (len + 1))
      const ch = String.fromCharCode(97 + Math.floor(r() * 26))
      if (pos === 0) cur.insertBefore(0, ch)
      else cur.insertAfter(pos - 1, ch)
      await tick()
    }
    return { ms: now() - t0 }
  },
  textState() {
    const s = asText(node.getCoValue(text.id).getCurrentContent()).toString()
    return { len: s.length, hash: createHash('sha1').update(s).digest('hex') }
  },
  async size() {
    await node.syncManager.waitForAllCoValuesSync()
    driver?.checkpoint()
    return { bytes: dirBytes(dir) }
  },
  async coldOpen({ dir: d, account: acc, docId, key }: { dir: string; account: Account; docId: string; key: number }) {
    const t0 = now()
    const crypto = await cryptoReady
    node = await LocalNode.withLoadedAccount({ ...acc, sessionID: undefined, peers: [], crypto, storage: storage(d) })
    // A large CoValue streams in from storage in parts: wait for the part naming the record.
    const recId = await whenReadable(docId, (m) => m.get(recordId(key)) as string | undefined)
    const rec = asMap(await node.load(recId as never))
    if (rec.get('name') !== recordFields(key).name) throw new Error('record not found')
    return { ms: now() - t0 }
  },
  // ---------------------------------------------------------------- share and revoke
  /** Owner: a group of its own with one record in it. */
  async shareSetup() {
    shareGroup = node.createGroup()
    shareRec = shareGroup.createMap(recordFields(0), undefined, 'private')
    await durable([shareGroup.id, shareRec.id])
    return { recId: shareRec.id }
  },
  /** Owner: loads the member's account (its public keys) ahead of adding it. */
  async loadMember({ accountID }: { accountID: string }) {
    const acc = await node.load(accountID as never)
    if (acc === 'unavailable') throw new Error('member account unavailable')
    members.set(accountID, acc)
    return {}
  },
  /** Member: reports when the record becomes readable (its name decrypts). */
  watchReadable({ recId }: { recId: string }) {
    void whenReadable(recId, (m) => m.get('name')).then((name) => emit({ readable: name, at: now() }))
    return {}
  },
  addMember({ accountID }: { accountID: string }) {
    const at = now()
    shareGroup!.addMember(members.get(accountID) as never, 'reader')
    return { at }
  },
  async removeMember({ accountID }: { accountID: string }) {
    const before = shareGroup!.getCurrentReadKeyId()
    const t0 = now()
    shareGroup!.removeMember(members.get(accountID) as never)
    shareRec!.set('name', 'written after the removal')
    const sealedAt = now()
    const after = shareGroup!.getCurrentReadKeyId()
    await durable([shareGroup!.id, shareRec!.id])
    return {
      ms: sealedAt - t0,
      durableMs: now() - t0,
      rotated: before !== after,
      memberLacksKey: shareGroup!.get(`${after}_for_${accountID}` as never) === undefined,
    }
  },
  async close() {
    await node?.gracefulShutdown()
    wss?.close()
    return {}
  },
})
