/**
 * Files benchmark (issue 19; `npm run bench -- --json --only files`, inside
 * scripts/netns-run.sh for mDNS, else the daemons are introduced through `POST /v1/peers`).
 * Sizes shrink with BENCH_FILES_MB (default 200) and BENCH_FILES_COUNT (default 10,000); every
 * figure with a target is a ratio against a baseline timed in the same run.
 *
 * - attachVsBareLoop: `POST {O}/files` of BENCH_FILES_MB on a real daemon, against the bare
 *   chunk+seal+address loop (sealBlock over 1 MiB chunks, the same crypto provider) on the same
 *   bytes in this process: throughput ratio (target >= 0.7).
 * - lanVsRawStream: the other account's daemon downloads the whole file from the first (block
 *   exchange over libp2p on loopback), against the same bytes sent over a raw libp2p stream
 *   between two fresh nodes: throughput ratio (target >= 0.5).
 * - rangeP50Ms: `Range` reads of 1 MiB at random offsets of the cached file (target <= 10 ms).
 * - The requests with targets go through node:http; `attachFetch*`, `lanFetch*` and
 *   `rangeFetchP50Ms` are the same measures through fetch (undici), whose own per-byte cost in
 *   this process is larger than the daemon's (a second 200 MB file, so nothing dedups).
 * - freeMs: `POST /v1/files/cache/free` of BENCH_FILES_COUNT deleted files of 100 KiB each
 *   (1 GB at the defaults): the unreferenced tier of free, the one a single daemon can reach
 *   without a second copy of live files.
 * - variantBomb (issue 33): a fresh daemon's RSS growth in MB (peak of /proc/<pid>/status VmRSS
 *   sampled every 20 ms, minus the RSS before) while the six variant widths of a 10000 x 10000
 *   RGB PNG of a few hundred KB are asked for at once (target <= 128); `*ChildrenPeakMB` is the
 *   peak of its variant processes' RSS together. variantLargest*: the same for a 7000 x 7000
 *   PNG, just under the pixel cap, which is resized. BENCH_FILES_VARIANTS_ONLY=1 runs only these.
 */
import { createHash, randomBytes } from 'node:crypto'
import { readdirSync, readFileSync } from 'node:fs'
import sharp from 'sharp'
import { request as httpRequest } from 'node:http'
import { createSvcNode } from '../node/p2p/libp2p-node.ts'
import { nodeCryptoProvider } from '../node/crypto/node-provider.ts'
import { keyPairFromSeed } from '../sync/crypto/keys.ts'
import { filesSecret, sealBlock } from '../sync/modules/files/blocks.ts'
import { FILES } from '../sync/modules/files/limits.ts'
import { addPeer, Fleet, inviteAndAccept, S, type Account } from '../test/e2e/accounts.ts'
import { ok, until } from '../test/e2e/daemons.ts'

const progress = (m: string) => process.stderr.write(`[bench files] ${m}\n`)
const MB = 1024 * 1024
const SIZE_MB = Number(process.env.BENCH_FILES_MB ?? 200)
const COUNT = Number(process.env.BENCH_FILES_COUNT ?? 10_000)
const RANGE_SAMPLES = 50
const IN_NETNS = process.env.NETNS_RUN_INSIDE === '1'
const r3 = (x: number) => Math.round(x * 1000) / 1000
const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))]

async function attach(a: Account, spaceId: string, objectId: string, bytes: Uint8Array, name: string): Promise<string> {
  const res = await fetch(`${a.d.url}${S(spaceId)}/objects/${objectId}/files?name=${name}`, {
    method: 'POST',
    headers: { 'content-type': 'application/octet-stream' },
    body: bytes as unknown as BodyInit,
  })
  const body = await res.json()
  if (res.status !== 201) throw new Error(`attach -> ${res.status} ${JSON.stringify(body)}`)
  return body.fileId
}

/**
 * The same two requests through node:http: the figures with targets use these, because
 * fetch (undici) costs this process more per byte than the daemon's whole attach does (it
 * copies a request body and accumulates a response through web streams), and this process is
 * only the instrument. The fetch figures stay printed beside them.
 */
function httpAttach(a: Account, spaceId: string, objectId: string, bytes: Uint8Array, name: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      `${a.d.url}${S(spaceId)}/objects/${objectId}/files?name=${name}`,
      { method: 'POST', headers: { 'content-type': 'application/octet-stream', 'content-length': bytes.length } },
      (res) => {
        const parts: Buffer[] = []
        res.on('data', (d: Buffer) => parts.push(d))
        res.on('end', () => {
          const body = JSON.parse(Buffer.concat(parts).toString('utf8'))
          if (res.statusCode !== 201) reject(new Error(`attach -> ${res.statusCode} ${JSON.stringify(body)}`))
          else resolve(body.fileId)
        })
        res.on('error', reject)
      },
    )
    req.on('error', reject)
    req.end(bytes)
  })
}

function httpDownload(a: Account, spaceId: string, fileId: string, range?: string): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(`${a.d.url}${S(spaceId)}/files/${fileId}/content`, { headers: range ? { range } : {} }, (res) => {
      const parts: Buffer[] = []
      res.on('data', (d: Buffer) => parts.push(d))
      res.on('end', () => {
        const body = Buffer.concat(parts)
        if ((res.statusCode ?? 500) >= 300) reject(new Error(`download -> ${res.statusCode} ${body.toString('utf8')}`))
        else resolve(body)
      })
      res.on('error', reject)
    })
    req.on('error', reject)
    req.end()
  })
}

async function download(a: Account, spaceId: string, fileId: string, range?: string): Promise<Buffer> {
  const res = await fetch(`${a.d.url}${S(spaceId)}/files/${fileId}/content`, { headers: range ? { range } : {} })
  if (res.status >= 300) throw new Error(`download -> ${res.status} ${await res.text()}`)
  return Buffer.from(await res.arrayBuffer())
}

/** The bare loop attach runs per block, on the same bytes: address of the plaintext, convergent key, seal, address of the ciphertext. */
function bareLoop(bytes: Uint8Array): number {
  const crypto = nodeCryptoProvider({ verify: 'threadpool' })
  const secret = filesSecret(randomBytes(32))
  const t0 = performance.now()
  for (let off = 0; off < bytes.length; off += FILES.blockSize) sealBlock(secret, bytes.subarray(off, off + FILES.blockSize), crypto.aead, crypto.sha256)
  return performance.now() - t0
}

/** The same bytes over one raw libp2p stream between two fresh nodes on loopback, until the receiver has read them all. */
async function rawStream(bytes: Uint8Array): Promise<number> {
  const a = await createSvcNode({ deviceKey: keyPairFromSeed(new Uint8Array(randomBytes(32))), listen: ['/ip4/127.0.0.1/tcp/0'] })
  const b = await createSvcNode({ deviceKey: keyPairFromSeed(new Uint8Array(randomBytes(32))), listen: ['/ip4/127.0.0.1/tcp/0'] })
  try {
    let received = 0
    let done!: () => void
    const all = new Promise<void>((r) => (done = r))
    await b.handle('/bench/raw/1.0.0', (stream) => {
      stream.addEventListener('message', (evt) => {
        received += (evt.data as { byteLength: number }).byteLength
        if (received >= bytes.length) done()
      })
    })
    const stream = await a.dialProtocol(b.getMultiaddrs()[0], '/bench/raw/1.0.0')
    const t0 = performance.now()
    for (let off = 0; off < bytes.length; off += MB) {
      if (!stream.send(bytes.subarray(off, off + MB))) await stream.onDrain()
    }
    await all
    return performance.now() - t0
  } finally {
    await a.stop()
    await b.stop()
  }
}

/** Resident set of a process in MB (Linux /proc). */
function rssMB(pid: number): number {
  const m = /^VmRSS:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))
  return m ? Number(m[1]) / 1024 : NaN
}

/** An RGB PNG of `side` x `side`: a horizontal gradient repeated, every row alike, so it compresses to a few hundred KB like the bomb. */
async function largePng(side: number): Promise<Buffer> {
  const tile = Buffer.alloc(256 * 256 * 3)
  for (let y = 0; y < 256; y++) for (let x = 0; x < 256; x++) tile.set([x, 255 - x, x >> 1], (y * 256 + x) * 3)
  return sharp({ create: { width: side, height: side, channels: 3, background: { r: 0, g: 0, b: 0 } } })
    .composite([{ input: tile, raw: { width: 256, height: 256, channels: 3 }, tile: true }])
    .png({ compressionLevel: 9 })
    .toBuffer()
}

/** Resident MB of a process's variant processes together. */
function childrenRssMB(pid: number): number {
  let total = 0
  for (const task of readdirSync(`/proc/${pid}/task`)) {
    let kids: string[] = []
    try {
      kids = readFileSync(`/proc/${pid}/task/${task}/children`, 'utf8').split(' ').filter(Boolean)
    } catch {
      /* the thread ended */
    }
    for (const kid of kids) {
      try {
        if (!readFileSync(`/proc/${kid}/cmdline`, 'utf8').includes('variant-child')) continue
        const mb = rssMB(Number(kid))
        if (Number.isFinite(mb)) total += mb // a child that just exited has no VmRSS
      } catch {
        /* the child ended */
      }
    }
  }
  return total
}

/**
 * Six widths of one image at once against a fresh daemon: the daemon's RSS growth, the peak
 * of its children's (variant processes) RSS together, the time and the statuses.
 */
async function variantAttack(a: Account, spaceId: string, objectId: string, image: Buffer, name: string) {
  const res = await fetch(`${a.d.url}${S(spaceId)}/objects/${objectId}/files?name=${name}&mime=image/png`, {
    method: 'POST',
    headers: { 'content-type': 'application/octet-stream' },
    body: image as unknown as BodyInit,
  })
  const { fileId } = await res.json()
  const pid = a.d.proc.pid!
  await new Promise((r) => setTimeout(r, 500))
  const before = rssMB(pid)
  let peak = before
  let children = 0
  const sample = setInterval(() => {
    peak = Math.max(peak, rssMB(pid))
    children = Math.max(children, childrenRssMB(pid))
  }, 20)
  const t0 = performance.now()
  const statuses = await Promise.all(
    FILES.variantWidths.map(async (w) => {
      const r = await fetch(`${a.d.url}${S(spaceId)}/files/${fileId}/content?variant=w${w}`)
      await r.arrayBuffer()
      return r.status
    }),
  )
  const ms = performance.now() - t0
  clearInterval(sample)
  peak = Math.max(peak, rssMB(pid))
  return { fileKB: Math.round(image.length / 1024), rssGrowthMB: r3(peak - before), childrenPeakMB: r3(children), ms: Math.round(ms), statuses: statuses.join(',') }
}

async function benchVariants(fleet: Fleet): Promise<Record<string, unknown>> {
  progress('variant bomb: six widths of a 10000 x 10000 PNG on a fresh daemon')
  const carol = await fleet.account('carol', { mdns: false })
  const space = await ok(carol.d, 'POST', '/v1/spaces', { name: 'Bench variants' })
  const { objectId } = await ok(carol.d, 'POST', `${S(space.id)}/objects`, {})
  const bomb = await variantAttack(carol, space.id, objectId, await largePng(10_000), 'bomb.png')
  progress(`  ${JSON.stringify(bomb)}`)
  progress('six widths of a 7000 x 7000 PNG (under the pixel cap)')
  const largest = await variantAttack(carol, space.id, objectId, await largePng(7_000), 'large.png')
  progress(`  ${JSON.stringify(largest)}`)
  return {
    variantBomb: bomb.rssGrowthMB,
    variantBombMs: bomb.ms,
    variantBombFileKB: bomb.fileKB,
    variantBombStatuses: bomb.statuses,
    variantBombChildrenPeakMB: bomb.childrenPeakMB,
    variantLargestFileKB: largest.fileKB,
    variantLargestRssMB: largest.rssGrowthMB,
    variantLargestChildrenPeakMB: largest.childrenPeakMB,
    variantLargestMs: largest.ms,
    variantLargestStatuses: largest.statuses,
  }
}

/** The two accounts, the shared space and object every stage writes to, and the big file's bytes. */
interface FilesFixture {
  alice: Account
  bob: Account
  spaceId: string
  objectId: string
  bytes: Uint8Array
}

async function openPair(fleet: Fleet): Promise<FilesFixture> {
  progress(`two daemons (mDNS ${IN_NETNS ? 'on' : 'off: introduced through POST /v1/peers'}), ${SIZE_MB} MB`)
  const [alice, bob] = await Promise.all(['alice', 'bob'].map((n) => fleet.account(n, { mdns: IN_NETNS })))
  if (!IN_NETNS) await addPeer(bob, alice)
  const space = await ok(alice.d, 'POST', '/v1/spaces', { name: 'Bench files' })
  const { objectId } = await ok(alice.d, 'POST', `${S(space.id)}/objects`, {})
  await inviteAndAccept(alice, space.id, bob, 'writer')
  const bytes = new Uint8Array(randomBytes(SIZE_MB * MB))
  return { alice, bob, spaceId: space.id, objectId, bytes }
}

async function attachStage({ alice, spaceId, objectId, bytes }: FilesFixture) {
  progress('attach')
  // One small attach first, as a daemon in use has made: the block crypto thread starts at
  // a daemon's first file (about 0.2 s, once), and that start is not the throughput measured.
  await httpAttach(alice, spaceId, objectId, new Uint8Array(randomBytes(4 * MB)), 'warm.bin')
  const t0 = performance.now()
  const fileId = await httpAttach(alice, spaceId, objectId, bytes, 'big.bin')
  const attachMs = performance.now() - t0
  const bareMs = bareLoop(bytes)
  // Other bytes (no dedup) through fetch, for the record.
  const other = new Uint8Array(randomBytes(SIZE_MB * MB))
  const tf = performance.now()
  const otherId = await attach(alice, spaceId, objectId, other, 'other.bin')
  const attachFetchMs = performance.now() - tf
  return { fileId, attachMs, bareMs, other, otherId, attachFetchMs }
}

/** 1 MiB at random offsets of the cached file, timed one by one. */
async function rangeReads({ alice, spaceId, bytes }: FilesFixture, fileId: string, get: typeof download): Promise<number[]> {
  const ms: number[] = []
  for (let i = 0; i < RANGE_SAMPLES; i++) {
    const start = Math.floor(Math.random() * (bytes.length - MB))
    const t = performance.now()
    const got = await get(alice, spaceId, fileId, `bytes=${start}-${start + MB - 1}`)
    ms.push(performance.now() - t)
    if (got.length !== MB) throw new Error('short range read')
  }
  return ms
}

/** Bob downloads both files from alice (node:http, then fetch); the raw libp2p stream is the baseline. */
async function lanStage({ bob, spaceId, bytes }: FilesFixture, fileId: string, other: Uint8Array, otherId: string) {
  progress('LAN transfer')
  await until('bob holds the record', async () => (await ok(bob.d, 'GET', `${S(spaceId)}/files/${fileId}`).catch(() => undefined)) ?? false, 120_000, 200)
  const t1 = performance.now()
  const got = await httpDownload(bob, spaceId, fileId)
  const lanMs = performance.now() - t1
  // The second file through fetch (bob fetches its blocks from alice the same way).
  await until('bob holds the second record', async () => (await ok(bob.d, 'GET', `${S(spaceId)}/files/${otherId}`).catch(() => undefined)) ?? false, 120_000, 200)
  const tl = performance.now()
  const otherGot = await download(bob, spaceId, otherId)
  const lanFetchMs = performance.now() - tl
  if (otherGot.length !== other.length) throw new Error('second transfer differs')
  if (createHash('sha256').update(got).digest('hex') !== createHash('sha256').update(bytes).digest('hex')) throw new Error('transfer differs')
  const rawMs = await rawStream(bytes)
  return { lanMs, lanFetchMs, rawMs }
}

/** COUNT small files attached and deleted, then one free of the whole unreferenced tier, timed. */
async function freeStage({ alice, spaceId, objectId }: FilesFixture) {
  progress(`cache/free over ${COUNT} files`)
  const small = new Uint8Array(randomBytes(100 * 1024))
  const ids: string[] = []
  for (let i = 0; i < COUNT; i++) {
    // Distinct content per file (no dedup): the first bytes carry the index.
    new DataView(small.buffer).setUint32(0, i)
    ids.push(await attach(alice, spaceId, objectId, small, `f${i}`))
    if (i % 1000 === 999) progress(`  ${i + 1} attached`)
  }
  for (const id of ids) await ok(alice.d, 'DELETE', `${S(spaceId)}/files/${id}`)
  const before = (await ok(alice.d, 'GET', '/v1/files/cache')).size
  const t2 = performance.now()
  const { freed } = await ok(alice.d, 'POST', '/v1/files/cache/free', { bytes: before })
  const freeMs = performance.now() - t2
  return { freed: freed as number, freeMs }
}

export async function benchFiles(): Promise<Record<string, unknown>> {
  const fleet = new Fleet()
  if (process.env.BENCH_FILES_VARIANTS_ONLY === '1') {
    try {
      return { ...(await benchVariants(fleet)), targets: { variantBomb: '<= 128' } }
    } finally {
      await fleet.close()
    }
  }
  try {
    const fx = await openPair(fleet)
    const { fileId, attachMs, bareMs, other, otherId, attachFetchMs } = await attachStage(fx)
    progress('range reads')
    const rangeMs = await rangeReads(fx, fileId, httpDownload)
    const rangeFetchMs = await rangeReads(fx, fileId, download)
    const { lanMs, lanFetchMs, rawMs } = await lanStage(fx, fileId, other, otherId)
    const { freed, freeMs } = await freeStage(fx)
    const variants = await benchVariants(fleet)

    return {
      sizeMB: SIZE_MB,
      attachMBps: r3(SIZE_MB / (attachMs / 1000)),
      bareLoopMBps: r3(SIZE_MB / (bareMs / 1000)),
      attachVsBareLoop: r3(bareMs / attachMs),
      attachFetchMBps: r3(SIZE_MB / (attachFetchMs / 1000)),
      attachFetchVsBareLoop: r3(bareMs / attachFetchMs),
      lanMBps: r3(SIZE_MB / (lanMs / 1000)),
      rawStreamMBps: r3(SIZE_MB / (rawMs / 1000)),
      lanVsRawStream: r3(rawMs / lanMs),
      lanFetchMBps: r3(SIZE_MB / (lanFetchMs / 1000)),
      lanFetchVsRawStream: r3(rawMs / lanFetchMs),
      rangeP50Ms: r3(pct(rangeMs, 50)),
      rangeP99Ms: r3(pct(rangeMs, 99)),
      rangeFetchP50Ms: r3(pct(rangeFetchMs, 50)),
      freeFiles: COUNT,
      freeMB: r3(freed / MB),
      freeMs: Math.round(freeMs),
      ...variants,
      targets: { attachVsBareLoop: '>= 0.7', lanVsRawStream: '>= 0.5', rangeP50Ms: '<= 10', variantBomb: '<= 128' },
    }
  } finally {
    await fleet.close()
  }
}
