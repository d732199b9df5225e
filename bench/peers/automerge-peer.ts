/**
 * An automerge-repo peer (bench/peers.ts): a Repo with the Node filesystem storage adapter and
 * the WebSocket network adapter, the server side on peer A and the client side on peer B, as
 * automerge-repo's docs set up a sync server and its clients. Records are map entries of one
 * document (`records[id]` = the five fields, the date as a Date); the text is a string field
 * of a second document edited with `splice`.
 */
import { createHash } from 'node:crypto'
import { Repo, splice, type DocHandle, type AutomergeUrl } from '@automerge/automerge-repo'
import { NodeFSStorageAdapter } from '@automerge/automerge-repo-storage-nodefs'
import { WebSocketClientAdapter, WebSocketServerAdapter } from '@automerge/automerge-repo-network-websocket'
import { WebSocketServer } from 'ws'
import { dirBytes, emit, now, recordFields, recordId, rng, serveOps, tick } from './harness.ts'

type Rec = { name: string; n: number; done: boolean; at: Date; note: string }
type Records = { records: Record<string, Rec> }
type Text = { text: string }

let dir = ''
let repo: Repo
let wss: WebSocketServer | undefined
let docs: DocHandle<Records>
let textDoc: DocHandle<Text>

const fields = (i: number): Rec => {
  const f = recordFields(i)
  return { ...f, at: new Date(f.at) }
}

function until<T>(h: DocHandle<T>, pred: (d: T) => boolean): Promise<void> {
  if (pred(h.doc())) return Promise.resolve()
  return new Promise((resolve) => {
    const check = () => {
      if (!pred(h.doc())) return
      h.off('change', check)
      resolve()
    }
    h.on('change', check)
  })
}

function write(from: number, n: number, batch: number) {
  for (let i = from; i < from + n; i += batch) {
    docs.change((d) => {
      for (let k = i; k < Math.min(from + n, i + batch); k++) d.records[recordId(k)] = fields(k)
    })
  }
}

serveOps({
  async open({ dir: d, role, port }: { dir: string; role: 'a' | 'b'; port?: number }) {
    dir = d
    const storage = new NodeFSStorageAdapter(dir)
    if (role === 'a') {
      wss = new WebSocketServer({ port: 0, host: '127.0.0.1' })
      await new Promise<void>((r) => (wss!.address() ? r() : wss!.once('listening', () => r())))
      repo = new Repo({ storage, network: [new WebSocketServerAdapter(wss as never)], peerId: 'peer-a' as never, sharePolicy: async () => true })
      return { port: (wss.address() as { port: number }).port }
    }
    repo = new Repo({ storage, network: port ? [new WebSocketClientAdapter(`ws://127.0.0.1:${port}`)] : [], peerId: 'peer-b' as never, sharePolicy: async () => true })
    return {}
  },
  create() {
    docs = repo.create<Records>({ records: {} })
    textDoc = repo.create<Text>({ text: '' })
    return { docId: docs.url, textId: textDoc.url }
  },
  async write({ from, n }: { from: number; n: number }) {
    const t0 = now()
    write(from, n, 1)
    await repo.flush()
    return { ms: now() - t0 }
  },
  async populate({ n, batch }: { n: number; batch: number }) {
    write(0, n, batch)
    await repo.flush()
    return {}
  },
  async firstSync({ docId, last }: { docId: AutomergeUrl; last: number }) {
    const t0 = now()
    docs = await repo.find<Records>(docId)
    await until(docs, (d) => d.records?.[recordId(last)]?.name !== undefined)
    return { ms: now() - t0, count: Object.keys(docs.doc().records).length }
  },
  async openText({ textId }: { textId: AutomergeUrl }) {
    textDoc = await repo.find<Text>(textId)
    return {}
  },
  watch({ key }: { key: number }) {
    let last = docs.doc().records[recordId(key)].n
    docs.on('change', ({ doc }) => {
      const v = doc.records[recordId(key)].n
      if (v !== last) emit({ seen: (last = v), at: now() })
    })
    return {}
  },
  edit({ key, value }: { key: number; value: number }) {
    const at = now()
    docs.change((d) => {
      d.records[recordId(key)].n = value
    })
    return { at }
  },
  async type({ n, seed }: { n: number; seed: number }) {
    const r = rng(seed)
    const t0 = now()
    for (let k = 0; k < n; k++) {
      textDoc.change((d) => {
        splice(d, ['text'], Math.floor(r() * (d.text.length + 1)), 0, String.fromCharCode(97 + Math.floor(r() * 26)))
      })
      await tick()
    }
    return { ms: now() - t0 }
  },
  textState() {
    const s = textDoc.doc().text
    return { len: s.length, hash: createHash('sha1').update(s).digest('hex') }
  },
  async size() {
    await repo.flush([docs, textDoc].filter((h) => h?.isReady()).map((h) => h.documentId))
    return { bytes: dirBytes(dir) }
  },
  async coldOpen({ dir: d, docId, key }: { dir: string; docId: AutomergeUrl; key: number }) {
    const t0 = now()
    repo = new Repo({ storage: new NodeFSStorageAdapter(d), network: [], peerId: 'peer-cold' as never })
    const h = await repo.find<Records>(docId)
    if (!h.doc().records[recordId(key)]) throw new Error('record not found')
    return { ms: now() - t0 }
  },
  async close() {
    await repo.flush([docs, textDoc].filter((h) => h?.isReady()).map((h) => h.documentId))
    await repo.shutdown()
    wss?.close()
    return {}
  },
})
