/**
 * The browser suite's app page: the library as a web app embeds it (docs/browser.md), with a
 * small status view (what the suite's screenshot shows) and `window.app`, the handles the
 * tests drive through playwright's `page.evaluate`.
 */
import { BrowserSync, liveRecords, openBrowserAccount, type BrowserAccount, type ChangesFrame, type LiveQuery, type WorkerVerifier } from '../../../sync/browser/index.ts'

let acc: BrowserAccount | undefined
let sync: BrowserSync | undefined
const live: LiveQuery[] = []
const frames: ChangesFrame[] = []
const digests: Record<string, string> = {}

const need = () => {
  if (!acc) throw new Error('no account is open')
  return acc
}

const app = {
  frames,
  async restore(mnemonic: string) {
    acc = await openBrowserAccount({ mnemonic })
    await render()
    return { accountId: acc.account.accountId, deviceId: acc.deviceId, crypto: acc.crypto.name }
  },
  async connect(addr: string) {
    if (!sync) {
      sync = await BrowserSync.start(need())
      sync.onRound(() => void render())
    }
    const peer = await sync.dial(addr)
    await render()
    return peer
  },
  /** Starts sync with no peer: what reads of files held in the page need. */
  async startSync() {
    if (!sync) {
      sync = await BrowserSync.start(need())
      sync.onRound(() => void render())
    }
  },
  /** Uses a hub (BrowserSync.addHub): resolves with its state once it answered the first registration. */
  async addHub(addr: string, token?: string) {
    if (!sync) {
      sync = await BrowserSync.start(need())
      sync.onRound(() => void render())
    }
    const hub = await sync.addHub(addr, { token })
    await render()
    return hub
  },
  hubs() {
    return sync?.hubs() ?? []
  },
  /** Needs sync started (the files service's block source is the sync's exchange). */
  async files(spaceId: string) {
    return (await sync!.listFiles(spaceId)).map((f) => ({ id: f.id, name: f.name, size: f.size, cached: f.cached, cachedBlocks: f.cachedBlocks, blocks: f.blocks }))
  },
  /** Reads a file through BrowserSync.readFile: its SHA-256 (hex), size, type, the progress reports and the time taken. */
  async readFile(spaceId: string, fileId: string) {
    const progress: Array<{ loaded: number; total: number }> = []
    const t0 = performance.now()
    const blob = await sync!.readFile(spaceId, fileId, { onProgress: (p) => progress.push(p) })
    const ms = performance.now() - t0
    const hash = new Uint8Array(await crypto.subtle.digest('SHA-256', await blob.arrayBuffer()))
    return { sha256: [...hash].map((b) => b.toString(16).padStart(2, '0')).join(''), size: blob.size, type: blob.type, progress, ms }
  },
  fileExchange() {
    return sync?.fileExchangeStats()
  },
  peers() {
    return sync?.peers() ?? []
  },
  /** Drops the link to a peer (the page stays online: a hub is redialled). */
  async hangUp(peer: string) {
    await sync?.hangUp(peer)
  },
  async syncNow(spaceId: string) {
    return (await sync!.syncNow(spaceId)).map((r) => ({ ok: r.ok, outcome: r.outcome, error: r.error }))
  },
  /** Offline: the sync node stops, every connection with it. */
  async offline() {
    await sync?.stop()
    sync = undefined
    await render()
  },
  async spaces() {
    return (await need().account.listSpaces()).map((s) => ({ id: s.id, name: s.name }))
  },
  /** Signatures verified in the account's verify workers and on the page's thread. */
  verifiedBy() {
    return (need().crypto as Partial<WorkerVerifier>).verifiedBy?.()
  },
  objectCount(spaceId: string) {
    const space = need().account.held(spaceId)
    return space ? [...space.objectDocs()].length : -1
  },
  async digest(spaceId: string) {
    const space = need().account.held(spaceId)
    if (!space) return undefined
    await space.settled()
    const d = await space.replica.stateDigest()
    digests[spaceId] = d
    await render()
    return d
  },
  async createSpace(name: string) {
    return (await need().account.createSpace({ name })).id
  },
  async createObject(spaceId: string, name: string) {
    return need()
      .account.space(spaceId)
      .createObject({ initialProperties: { core: { name } } })
  },
  async write(spaceId: string, objectId: string, dataset: string, id: string, value: unknown) {
    await need()
      .account.space(spaceId)
      .modify({ objectId, dataset, records: [{ id, ops: [{ type: '$set', path: 'v', value }] }] })
  },
  async records(spaceId: string, objectId: string, dataset: string) {
    const space = need().account.held(spaceId)
    if (!space || !space.objectDoc(objectId)) return []
    return (await space.datasetDocs(objectId, dataset)).map((d) => ({ id: d.id, v: d.v }))
  },
  async watch(spaceId: string, objectId: string, dataset: string) {
    const q = await liveRecords(need().account.space(spaceId), objectId, dataset, { sort: ['id'], limit: 100 }, { onChanges: (f) => frames.push(...f) })
    live.push(q)
    return q.snapshot.records.length
  },
  async close() {
    for (const q of live.splice(0)) q.close()
    await sync?.stop()
    sync = undefined
    await acc?.close()
    acc = undefined
  },
}
;(window as unknown as { app: typeof app }).app = app

/** The status view: account, device, crypto, peers, and each space with its object count and digest. */
async function render() {
  const el = document.getElementById('status')!
  if (!acc) {
    el.textContent = 'no account'
    return
  }
  const rows = await Promise.all(
    (await acc.account.listSpaces()).map(async (s) => {
      const n = app.objectCount(s.id)
      return `<tr><td>${esc(s.name || '(unnamed)')}</td><td><code>${s.id}</code></td><td>${n}</td><td><code>${digests[s.id]?.slice(0, 16) ?? ''}</code></td></tr>`
    }),
  )
  el.innerHTML = `
    <p>account <code>${acc.account.accountId}</code><br>device <code>${acc.deviceId}</code> (crypto: ${acc.crypto.name}, storage: ${acc.storage.name})</p>
    <p>connected peers: ${
      sync
        ?.peers()
        .map((p) => `<code>${p}</code>`)
        .join(', ') || 'none'
    }</p>
    <table><tr><th>space</th><th>id</th><th>objects</th><th>state digest</th></tr>${rows.join('')}</table>`
}

const esc = (s: string) => s.replace(/[&<>"]/g, (c) => `&#${c.charCodeAt(0)};`)
void render()
