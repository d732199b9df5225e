/**
 * Sync-core benchmarks (issue: foundation). Each figure is a ratio against a baseline measured
 * in the same process on the same bytes, because these machines are noisy.
 *
 * Workload: one space, 3 writers, 1,000 objects x 100 changes = 100,000 signed, encrypted
 * changes, each setting one field of one of 10 records of its object; changes arrive grouped
 * per object, as head sync delivers them.
 */
import Database from 'better-sqlite3'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { SpaceReplica, type ReplicaDeps } from '../sync/replica/space-replica.ts'
import { SqliteStorageAdapter } from '../node/storage/sqlite.ts'
import { MemoryStorageAdapter } from '../sync/storage/memory.ts'
import type { CryptoProvider } from '../sync/crypto/provider.ts'
import { nodeCryptoProvider } from '../node/crypto/node-provider.ts'
import { keyPairFromSeed, identityOf, type KeyPair } from '../sync/crypto/keys.ts'
import { signChange, decodeChange, signedBytesOf, type Change } from '../sync/dag/change.ts'
import { seal, open } from '../sync/crypto/box.ts'
import { encodeCanonical, decodeCanonical } from '../sync/core/encoding.ts'
import { systemEnv } from '../sync/core/env.ts'
import { publicKeyOf } from '../sync/crypto/keys.ts'
import type { ChangePayload } from '../sync/crdt/ops.ts'

const OBJECTS = Number(process.env.BENCH_OBJECTS ?? 1000)
const PER_OBJECT = Number(process.env.BENCH_PER_OBJECT ?? 100)
const BATCH = 1000
const INFLIGHT = 4

const keys = new Map<number, KeyPair>()
const key = (n: number): KeyPair => {
  let k = keys.get(n)
  if (!k) keys.set(n, (k = keyPairFromSeed(new Uint8Array(32).fill(n))))
  return k
}
const progress = (msg: string) => process.stderr.write(`[bench core] ${msg}\n`)

// The daemon's provider (node:crypto, verifies on the thread pool): the fastest verify path
// this platform has, used by ingest and by the bare baseline alike.
let provider: CryptoProvider | undefined
const benchCrypto = (): CryptoProvider => (provider ??= nodeCryptoProvider({ verify: 'threadpool' }))

export interface Fixture {
  spaceId: string
  setup: Array<{ id: string; raw: Uint8Array }>
  changes: Change[]
  readKey: Uint8Array
}

export async function buildFixture(): Promise<Fixture> {
  const crypto = benchCrypto()
  const deps: ReplicaDeps = { storage: new MemoryStorageAdapter(), crypto, env: systemEnv }
  const owner = await SpaceReplica.create(deps, key(1))
  await owner.addMember(identityOf(key(2).publicKey), 'writer')
  await owner.addMember(identityOf(key(3).publicKey), 'writer')
  const objects: string[] = []
  for (let i = 0; i < OBJECTS; i++) objects.push(await owner.createObject())
  const setup = (await owner.allChanges()).map(({ id, raw }) => ({ id, raw }))
  const st = owner.acl.current()
  const readKeyId = st.readKeyId!
  const readKey = owner.keyring.get(readKeyId)!
  const aclHeadId = (owner.acl.citation() as { head: string }).head
  const changes: Change[] = []
  for (let o = 0; o < OBJECTS; o++) {
    let prev = objects[o]
    // Chains are signed one object at a time; signatures within an object run in parallel
    // once the ids they build on are known, so build headers first.
    for (let k = 0; k < PER_OBJECT; k++) {
      const author = key(1 + ((o + k) % 3))
      const payload = seal(systemEnv, readKey, encodeCanonical({ ops: [{ op: 'set', ds: 'd', id: `r${k % 10}`, path: `f${k % 5}`, value: k }] }))
      const c = await signChange(crypto, author, {
        spaceId: owner.spaceId,
        treeId: objects[o],
        prevIds: [prev],
        aclHeadId,
        seq: k + 1,
        lamport: k + 1,
        timestamp: Date.now(),
        readKeyId,
        payload,
      })
      changes.push(c)
      prev = c.id
    }
    if (o % 100 === 99) progress(`signed ${changes.length} changes`)
  }
  return { spaceId: owner.spaceId, setup, changes, readKey }
}

/**
 * The bare loop every received change needs at least: open its payload and verify its
 * signature, on the given provider (keys cached per author), `chunk` verifies per step and up
 * to INFLIGHT steps in flight, so the verifiers never wait for the opens (pipelined as ingest
 * is, or the baseline would idle the pool between chunks and flatter ingest). The baseline of
 * ingestVsCrypto and the bound of lanBacklog.
 */
export async function bareOpenVerifyMs(fx: Fixture, crypto: CryptoProvider, chunk: number): Promise<number> {
  const pubs = new Map<string, Uint8Array>()
  const pubOf = (a: string) => pubs.get(a) ?? (pubs.set(a, publicKeyOf(a)), pubs.get(a)!)
  const prepared = fx.changes.map((c) => ({ pub: pubOf(c.author), msg: signedBytesOf(decodeChange(c.raw)), sig: c.signature, payload: c.payload }))
  const t0 = performance.now()
  let ok = 0
  const inflight: Array<Promise<boolean[]>> = []
  const settle = async () => (ok += (await inflight.shift()!).filter(Boolean).length)
  for (let i = 0; i < prepared.length; i += chunk) {
    const part = prepared.slice(i, i + chunk)
    for (const p of part) open(fx.readKey, p.payload, undefined, crypto.aead)
    inflight.push(Promise.all(part.map((p) => crypto.verify(p.pub, p.msg, p.sig))))
    if (inflight.length >= INFLIGHT) await settle()
  }
  while (inflight.length) await settle()
  if (ok !== prepared.length) throw new Error('baseline verify failed')
  return performance.now() - t0
}

function time<T>(fn: () => Promise<T>): Promise<[T, number]> {
  const t0 = performance.now()
  return fn().then((r) => [r, performance.now() - t0])
}

async function sqliteReplica(dir: string, name: string, spaceId: string, setup: Fixture['setup']) {
  const storage = new SqliteStorageAdapter(join(dir, `${name}.db`))
  const r = await SpaceReplica.open({ storage, crypto: benchCrypto(), env: systemEnv }, spaceId, key(1))
  const rep = await r.ingest(setup)
  if (rep.rejected.length) throw new Error(`setup rejected: ${rep.rejected[0].reason}`)
  return { r, storage }
}

/** Raw better-sqlite3 insert loop of the same bytes, 1,000-row transactions. */
function rawInsert(dir: string, name: string, changes: Change[]): number {
  const db = new Database(join(dir, `${name}.db`))
  db.pragma('journal_mode = WAL')
  db.pragma('synchronous = NORMAL')
  db.exec('CREATE TABLE kv (store TEXT NOT NULL, key TEXT NOT NULL, value BLOB NOT NULL, PRIMARY KEY (store, key)) WITHOUT ROWID')
  const ins = db.prepare('INSERT INTO kv (store, key, value) VALUES (?, ?, ?)')
  const tx = db.transaction((rows: Change[]) => {
    for (const c of rows) ins.run('changes', `${c.spaceId}/${c.treeId}/${c.id}`, c.raw)
  })
  const t0 = performance.now()
  for (let i = 0; i < changes.length; i += BATCH) tx(changes.slice(i, i + BATCH))
  const ms = performance.now() - t0
  db.close()
  return ms
}

/** The apply stage (rights, merge, one atomic commit per batch) of changes already verified and opened. */
async function applyRun(dir: string, name: string, fx: Fixture, opened: Array<{ change: Change; payload: ChangePayload }>) {
  const { r, storage } = await sqliteReplica(dir, name, fx.spaceId, fx.setup)
  const n = opened.length
  const [, ms] = await time(async () => {
    for (let i = 0; i < n; i += BATCH) {
      const rep = await r.applyVerified(opened.slice(i, i + BATCH))
      if (rep.accepted.length !== Math.min(BATCH, n - i)) throw new Error('apply rejected changes')
    }
  })
  const digest = await r.stateDigest()
  await storage.close()
  return { ms, digest }
}

/**
 * Full ingest from bytes (decode, id, signature, open, apply, persist), up to INFLIGHT batches
 * in flight as a sync session pipelines them: signatures of the next batches verify on the
 * thread pool while the current one applies.
 */
async function ingestRun(dir: string, name: string, fx: Fixture, items: Array<{ id: string; raw: Uint8Array }>) {
  const { r, storage } = await sqliteReplica(dir, name, fx.spaceId, fx.setup)
  const n = items.length
  const [, ms] = await time(async () => {
    const inflight: Array<Promise<unknown>> = []
    for (let i = 0; i < n; i += BATCH) {
      const expected = Math.min(BATCH, n - i)
      inflight.push(
        r.ingest(items.slice(i, i + BATCH)).then((rep) => {
          if (rep.accepted.length !== expected) throw new Error(`ingest rejected ${rep.rejected[0]?.reason}`)
        }),
      )
      if (inflight.length >= INFLIGHT) await inflight.shift()
    }
    await Promise.all(inflight)
  })
  const digest = await r.stateDigest()
  await storage.close()
  return { ms, digest }
}

/**
 * Each ratio pairs REPS runs of the measured side with REPS runs of its baseline, alternating
 * (so a slow spell of this shared VM hits both sides alike), and divides the medians; every
 * sample is printed too. One run of each was not enough: idle runs of the same build swung
 * by ±15%, and the first run of either side pays for JIT warm-up the others do not.
 */
const REPS = Number(process.env.BENCH_CORE_REPS ?? 5)

export async function benchCore(): Promise<Record<string, unknown>> {
  const dir = mkdtempSync(join(tmpdir(), 'svc-bench-core-'))
  try {
    progress(`building ${OBJECTS * PER_OBJECT} changes`)
    const fx = await buildFixture()
    const crypto = benchCrypto()
    const n = fx.changes.length

    // 1. applyVsRawInsert: the apply stage through the SQLite adapter against raw inserts of
    // the same bytes.
    const opened = fx.changes.map((change) => ({ change, payload: decodeCanonical<ChangePayload>(open(fx.readKey, change.payload)) }))
    const applyMs: number[] = []
    const rawMs: number[] = []
    let digest: string | undefined
    for (let rep = 0; rep < REPS; rep++) {
      progress(`apply stage, run ${rep + 1}/${REPS}`)
      const a = await applyRun(dir, `apply${rep}`, fx, opened)
      if (digest !== undefined && a.digest !== digest) throw new Error('apply runs disagree on state')
      digest = a.digest
      applyMs.push(a.ms)
      rawMs.push(rawInsert(dir, `raw${rep}`, fx.changes))
      removeDb(dir, `apply${rep}`)
      removeDb(dir, `raw${rep}`)
    }

    // 2. ingestVsCrypto: full ingest against a bare loop of the same opens and signature
    // checks on the fastest verify path, pipelined the same way.
    const items = fx.changes.map((c) => ({ id: c.id, raw: c.raw }))
    const ingestMs: number[] = []
    const cryptoMs: number[] = []
    for (let rep = 0; rep < REPS; rep++) {
      progress(`full ingest, run ${rep + 1}/${REPS}`)
      const g = await ingestRun(dir, `ingest${rep}`, fx, items)
      if (g.digest !== digest) throw new Error('apply and ingest disagree on state')
      ingestMs.push(g.ms)
      removeDb(dir, `ingest${rep}`)
      progress(`crypto baseline, run ${rep + 1}/${REPS}`)
      cryptoMs.push(await bareOpenVerifyMs(fx, crypto, BATCH))
    }

    const ingest = median(ingestMs)
    return {
      workload: {
        changes: n,
        objects: OBJECTS,
        recordsPerObject: 10,
        batch: BATCH,
        inflight: INFLIGHT,
        runs: REPS,
        storage: 'sqlite (WAL, synchronous=NORMAL)',
        verifier: crypto.name,
      },
      applyVsRawInsert: round(median(rawMs) / median(applyMs)),
      applyMs: samples(applyMs),
      rawInsertMs: samples(rawMs),
      ingestVsCrypto: round(median(cryptoMs) / ingest),
      ingestMs: samples(ingestMs),
      cryptoBaselineMs: samples(cryptoMs),
      ingestPerSec: Math.round(n / (ingest / 1000)),
      peakRssMB: Math.round(process.resourceUsage().maxRSS / 1024),
    }
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

function removeDb(dir: string, name: string) {
  for (const suffix of ['', '-wal', '-shm']) rmSync(join(dir, `${name}.db${suffix}`), { force: true })
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b)
  const m = s.length >> 1
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2
}

/** The median and every run, in milliseconds. */
const samples = (xs: number[]) => ({ median: Math.round(median(xs)), runs: xs.map(Math.round) })

const round = (x: number) => Math.round(x * 1000) / 1000
