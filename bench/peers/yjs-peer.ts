/**
 * A Yjs peer (bench/peers.ts): y-websocket 2's server utilities with y-leveldb persistence on
 * peer A (the documented persistent setup, YPERSISTENCE's binding, here with its store promises
 * kept so durability can be awaited), and on peer B a WebsocketProvider with its own y-leveldb.
 * Records are a Y.Map per record inside one top-level Y.Map `records`; the text is a Y.Text.
 * Everything is loaded through `require` so that one copy of Yjs (the CommonJS build the
 * server utilities use) runs in the process.
 */
import { createRequire } from 'node:module'
import { createServer, type Server } from 'node:http'
import { createHash } from 'node:crypto'
import { dirBytes, emit, now, recordFields, recordId, rng, serveOps, tick } from './harness.ts'

const require = createRequire(import.meta.url)
const Y = require('yjs') as typeof import('yjs')
interface Leveldb {
  getYDoc(name: string): Promise<import('yjs').Doc>
  storeUpdate(name: string, update: Uint8Array): Promise<unknown>
  destroy(): Promise<void>
}
const { LeveldbPersistence } = require('y-leveldb') as { LeveldbPersistence: new (dir: string) => Leveldb }
const utils = require('y-websocket/bin/utils')
const { WebsocketProvider } = require('y-websocket') as typeof import('y-websocket')
const WS = require('ws')

const DOC = 'bench'
let dir = ''
let ldb: Leveldb
let doc: import('yjs').Doc
let server: Server | undefined
let provider: InstanceType<typeof WebsocketProvider> | undefined
const pending: Promise<unknown>[] = []

const records = () => doc.getMap<import('yjs').Map<unknown>>('records')
const text = () => doc.getText('text')

async function durable() {
  while (pending.length) await Promise.all(pending.splice(0))
}

/** Peer A: the y-websocket server with persistence bound as YPERSISTENCE binds it. */
async function openServer() {
  let bound!: () => void
  const ready = new Promise<void>((r) => (bound = r))
  utils.setPersistence({
    provider: ldb,
    bindState: async (name: string, ydoc: import('yjs').Doc) => {
      const persisted = await ldb.getYDoc(name)
      pending.push(ldb.storeUpdate(name, Y.encodeStateAsUpdate(ydoc)))
      Y.applyUpdate(ydoc, Y.encodeStateAsUpdate(persisted))
      ydoc.on('update', (u: Uint8Array) => pending.push(ldb.storeUpdate(name, u)))
      bound()
    },
    writeState: async () => {},
  })
  doc = utils.getYDoc(DOC)
  await ready
  server = createServer()
  const wss = new WS.WebSocketServer({ server })
  wss.on('connection', (conn: unknown, req: unknown) => utils.setupWSConnection(conn, req, { docName: DOC }))
  await new Promise<void>((r) => server!.listen(0, '127.0.0.1', () => r()))
  return { port: (server.address() as { port: number }).port }
}

/** Peer B: a local doc persisted to its own y-leveldb, not yet connected. */
async function openClient() {
  doc = new Y.Doc()
  const persisted = await ldb.getYDoc(DOC)
  Y.applyUpdate(doc, Y.encodeStateAsUpdate(persisted))
  doc.on('update', (u: Uint8Array) => pending.push(ldb.storeUpdate(DOC, u)))
  return {}
}

function waitFor(pred: () => boolean): Promise<void> {
  if (pred()) return Promise.resolve()
  return new Promise((resolve) => {
    const check = () => {
      if (!pred()) return
      doc.off('afterTransaction', check)
      resolve()
    }
    doc.on('afterTransaction', check)
  })
}

function write(from: number, n: number, batch: number) {
  const r = records()
  for (let i = from; i < from + n; i += batch) {
    doc.transact(() => {
      for (let k = i; k < Math.min(from + n, i + batch); k++) r.set(recordId(k), new Y.Map(Object.entries(recordFields(k))))
    })
  }
}

serveOps({
  async open({ dir: d, role }: { dir: string; role: 'a' | 'b' }) {
    dir = d
    ldb = new LeveldbPersistence(dir)
    return role === 'a' ? openServer() : openClient()
  },
  create: () => ({ docId: DOC }),
  async write({ from, n }: { from: number; n: number }) {
    const t0 = now()
    write(from, n, 1)
    await durable()
    return { ms: now() - t0 }
  },
  async populate({ n, batch }: { n: number; batch: number }) {
    write(0, n, batch)
    await durable()
    return {}
  },
  /** Peer B: connect, and wait until the last record is readable. */
  async firstSync({ port, last }: { port: number; last: number }) {
    const t0 = now()
    provider = new WebsocketProvider(`ws://127.0.0.1:${port}`, DOC, doc, { WebSocketPolyfill: WS, disableBc: true })
    await waitFor(() => records().get(recordId(last))?.get('name') !== undefined)
    return { ms: now() - t0, count: records().size }
  },
  async connect({ port }: { port: number }) {
    provider = new WebsocketProvider(`ws://127.0.0.1:${port}`, DOC, doc, { WebSocketPolyfill: WS, disableBc: true })
    await new Promise<void>((r) => (provider!.synced ? r() : provider!.once('sync', () => r())))
    return {}
  },
  watch({ key }: { key: number }) {
    const rec = records().get(recordId(key))!
    rec.observe(() => emit({ seen: rec.get('n'), at: now() }))
    return {}
  },
  edit({ key, value }: { key: number; value: number }) {
    const at = now()
    records().get(recordId(key))!.set('n', value)
    return { at }
  },
  async type({ n, seed }: { n: number; seed: number }) {
    const r = rng(seed)
    const t = text()
    const t0 = now()
    for (let k = 0; k < n; k++) {
      t.insert(Math.floor(r() * (t.length + 1)), String.fromCharCode(97 + Math.floor(r() * 26)))
      await tick()
    }
    return { ms: now() - t0 }
  },
  textState() {
    const s = text().toString()
    return { len: s.length, hash: createHash('sha1').update(s).digest('hex') }
  },
  async size() {
    await durable()
    return { bytes: dirBytes(dir) }
  },
  /** A restarted peer: open the store and read one record. */
  async coldOpen({ dir: d, key }: { dir: string; key: number }) {
    const t0 = now()
    dir = d
    ldb = new LeveldbPersistence(dir)
    doc = await ldb.getYDoc(DOC)
    const v = records().get(recordId(key))?.toJSON()
    if (!v) throw new Error('record not found')
    return { ms: now() - t0 }
  },
  async close() {
    await durable()
    provider?.destroy()
    server?.close()
    await ldb.destroy()
    return {}
  },
})
