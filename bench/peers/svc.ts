/**
 * The workloads of bench/peers.ts on svc: real daemons (`svc serve`, each its own process, mDNS
 * off, P2P on loopback, introduced through `POST /v1/peers`), driven through the HTTP API as an
 * app drives them. Records are records of one dataset (`records`) of one object, the date as
 * `{$date}`; a live edit is seen through a live query (SSE) on B; the text is an editor paragraph
 * typed through `PATCH .../markdown` (the daemon turns each into a Yjs update, the `ytext` op).
 */
import { api, ok, startDaemon, stopDaemon, type Daemon } from '../../test/e2e/daemons.ts'
import { buildCli } from '../../scripts/build.ts'
import { accept, addPeer, Fleet, invite, join as joinSpace, p2pAddress, pendingRequest, put, removeMember, S } from '../../test/e2e/accounts.ts'
import { AccountDevice } from '../../test/e2e/account-device.ts'
import { decodeChange } from '../../sync/dag/change.ts'
import { dirBytes, dropDir, now, recordFields, recordId, rng, tempDir } from './harness.ts'
import { rssMB } from './ipc-system.ts'
import type { Sizes, SystemRun } from './types.ts'
import { cpuOf } from './cpu.ts'
import { cryptoBound } from './crypto-bound.ts'

const DS = 'records'
/** Writes in flight in the pipelined local-writes figure. */
const WINDOW = 32
/** Records written one request at a time after them (not part of the first sync's count). */
const AWAITED = 2000
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))
/**
 * With `BENCH_PEERS_PROFILE=DIR` every daemon runs under `--cpu-prof` and writes its CPU profile
 * into DIR when it stops, which it then does with SIGTERM instead of SIGKILL, so it exits
 * cleanly (scripts/cpuprofile-top.ts reads the profiles).
 */
const PROFILE_DIR = process.env.BENCH_PEERS_PROFILE
let built: Promise<unknown> | undefined
const STOP: NodeJS.Signals = PROFILE_DIR ? 'SIGTERM' : 'SIGKILL'
const NODE_ARGS = PROFILE_DIR ? ['--cpu-prof', `--cpu-prof-dir=${PROFILE_DIR}`] : []

const live = new Set<Daemon>()
process.on('exit', () => {
  for (const d of live) d.proc.kill('SIGKILL')
})

const value = (i: number) => {
  const f = recordFields(i)
  return { ...f, at: { $date: f.at } }
}

async function poll<T>(what: string, fn: () => Promise<T | undefined>, ms = 600_000, every = 5): Promise<T> {
  const end = now() + ms
  for (;;) {
    // A check that fails (a daemon still starting, a space not there yet) is asked again.
    const v = await fn().catch((err: unknown) => (process.env.BENCH_PEERS_VERBOSE ? void process.stderr.write(`[bench peers] ${what}: ${String(err)}\n`) : undefined))
    if (v !== undefined) return v
    if (now() > end) throw new Error(`timed out: ${what}`)
    await sleep(every)
  }
}

/** The record `id` as `d` reads it, or undefined. */
async function readRecord(d: Daemon, spaceId: string, objectId: string, id: string) {
  const r = await api(d, 'POST', `${S(spaceId)}/query`, { objectId, dataset: DS, filter: { id }, limit: 1 })
  return r.status === 200 && r.json.records.length ? r.json.records[0] : undefined
}

/** The live changes of one record on `d`, as an app subscribes to them (SSE). */
async function subscribe(d: Daemon, spaceId: string, objectId: string, id: string, onValue: (n: unknown, at: number) => void) {
  const ctl = new AbortController()
  const res = await fetch(`${d.url}${S(spaceId)}/query/subscribe`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ objectId, dataset: DS, filter: { id }, limit: 1 }),
    signal: ctl.signal,
  })
  if (res.status !== 200) throw new Error(`subscribe -> ${res.status} ${await res.text()}`)
  const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader()
  let buf = ''
  let ready!: () => void
  const isReady = new Promise<void>((r) => (ready = r))
  void (async () => {
    for (;;) {
      const { value: chunk, done } = await reader.read().catch(() => ({ value: undefined, done: true }))
      if (done) return
      buf += chunk
      let cut: number
      while ((cut = buf.indexOf('\n\n')) >= 0) {
        const frame = buf.slice(0, cut)
        buf = buf.slice(cut + 2)
        const event = /^event: (.*)$/m.exec(frame)?.[1]
        const data = /^data: (.*)$/m.exec(frame)?.[1]
        if (event === 'snapshot') ready()
        if (event !== 'changes' || !data) continue
        const at = now()
        for (const c of JSON.parse(data)) for (const u of [...(c.updated ?? []), ...(c.added ?? [])]) if (u.id === id) onValue(u.doc?.n, at)
      }
    }
  })()
  await isReady
  return () => ctl.abort()
}

/** The smallest context around `pos` that occurs once in `text`: it names the spot to a PATCH. */
function context(text: string, pos: number) {
  for (let w = 1; ; w++) {
    const left = text.slice(Math.max(0, pos - w), pos)
    const right = text.slice(pos, pos + w)
    const old = left + right
    if (text.indexOf(old) === text.lastIndexOf(old) || w > text.length) return { left, right }
  }
}

export function svcSystem(progress: (m: string) => void): SystemRun {
  const dirs: string[] = []
  const daemons: Daemon[] = []
  const fleets: Fleet[] = []
  const dir = (tag: string) => {
    const d = tempDir(`svc-bench-peers-svc-${tag}-`)
    dirs.push(d)
    return d
  }
  const daemon = async (d: string) => {
    // As a user runs it: the launcher on the compiled CLI, built from this tree in this run.
    await (built ??= buildCli())
    const x = await startDaemon(d, { mdns: false, nodeArgs: NODE_ARGS, built: true })
    daemons.push(x)
    live.add(x)
    return x
  }
  /** A daemon with a fresh account, a space and an object in it. */
  async function owner(tag: string) {
    const A = await daemon(dir(tag))
    const { mnemonic } = await ok(A, 'POST', '/v1/auth', {})
    const spaceId = (await ok(A, 'POST', '/v1/spaces', { name: 'Side by side' })).id as string
    return { A, mnemonic, spaceId }
  }
  /** A second device of the same account on a fresh store, told where A is. */
  async function secondDevice(A: Daemon, mnemonic: string) {
    const B = await daemon(dir('b'))
    const t0 = now()
    await ok(B, 'POST', '/v1/auth', { mnemonic })
    const { multiaddr } = await p2pAddress({ d: A } as never)
    await ok(B, 'POST', '/v1/peers', { multiaddr })
    return { B, t0 }
  }

  return {
    async writesSyncEdit(s: Sizes, want: Set<number>) {
      const { A, mnemonic, spaceId } = await owner('a')
      const objectId = (await ok(A, 'POST', `${S(spaceId)}/objects`, {})).objectId as string
      const write = (i: number) =>
        ok(A, 'POST', `${S(spaceId)}/modify`, { objectId, dataset: DS, records: [{ id: recordId(i), ops: [{ type: '$set', path: '', value: value(i) }] }] })
      /** As an app awaiting each write before the next, A alone: further records of the same object. */
      const awaitedWrites = async () => {
        const n = Math.min(s.records, AWAITED)
        progress(`svc: ${n} local writes, one at a time`)
        const t = now()
        for (let i = s.records; i < s.records + n; i++) await write(i)
        return { localWritesAwaitedPerSec: Math.round(n / ((now() - t) / 1000)), localWritesAwaited: n }
      }
      // One request per record, each its own change, answered once committed. The peers write in
      // process and wait for durability once at the end; the like-for-like over HTTP keeps
      // WINDOW requests in flight and ends when every one is answered.
      /** svc's bare seal+sign and open+verify over the same records, after the daemons' work. */
      const bound = async (o: Record<string, unknown>) => {
        progress('svc: the bare crypto bound')
        const b = await cryptoBound(s.records)
        const r3 = (x: number) => Math.round(x * 1000) / 1000
        return {
          ...b,
          localWritesVsCryptoBound: r3((o.localWritesPerSec as number) / b.cryptoBoundWritesPerSec),
          ...(typeof o.firstSyncMs === 'number' ? { firstSyncVsCryptoBound: r3(b.cryptoBoundSyncMs / o.firstSyncMs) } : {}),
        }
      }
      progress(`svc: ${s.records} local writes, ${WINDOW} in flight`)
      const cw = cpuOf({ a: A.proc.pid!, client: process.pid })
      const t0 = now()
      let next = 0
      await Promise.all(
        Array.from({ length: WINDOW }, async () => {
          while (next < s.records) await write(next++)
        }),
      )
      const ms = now() - t0
      const out: Record<string, unknown> = { localWritesPerSec: Math.round(s.records / (ms / 1000)), localWritesMs: Math.round(ms), localWritesCpu: cw.done() }
      if (!want.has(2) && !want.has(3)) return { ...out, ...(await awaitedWrites()), ...(await bound(out)) }
      progress(`svc: first sync of ${s.records}`)
      const { B, t0: t1 } = await secondDevice(A, mnemonic)
      const cs = cpuOf({ a: A.proc.pid!, b: B.proc.pid! })
      // The last record written, then all of them (32 writes were in flight, so ids may commit out of order).
      await poll('B reads the last record', () => readRecord(B, spaceId, objectId, recordId(s.records - 1)))
      const count = async () => (await ok(B, 'POST', `${S(spaceId)}/query`, { objectId, dataset: DS, limit: 1, includeTotal: true })).total as number
      await poll('B holds every record', async () => ((await count()) === s.records ? true : undefined))
      const firstSyncMs = now() - t1
      const firstSyncCpu = cs.done()
      const total = await count()
      Object.assign(out, { firstSyncMs: Math.round(firstSyncMs), firstSyncRecords: total, firstSyncCpu })
      const stopB = async () => {
        await stopDaemon(B, STOP)
        live.delete(B)
      }
      if (!want.has(3)) return (await stopB(), { ...out, ...(await awaitedWrites()), ...(await bound(out)) })
      progress(`svc: ${s.edits} live edits`)
      const key = recordId(7)
      let wait: ((n: unknown, at: number) => void) | undefined
      const stop = await subscribe(B, spaceId, objectId, key, (n, at) => wait?.(n, at))
      const samples: number[] = []
      for (let i = 0; i < s.edits + s.warmup; i++) {
        const v = 1_000_000 + i
        const seen = new Promise<number>((resolve) => (wait = (n, at) => n === v && resolve(at)))
        const at = now()
        await ok(A, 'POST', `${S(spaceId)}/modify`, { objectId, dataset: DS, records: [{ id: key, ops: [{ type: '$set', path: 'n', value: v }] }] })
        const seenAt = await seen
        if (i >= s.warmup) samples.push(seenAt - at)
      }
      stop()
      await stopB()
      return { ...out, liveEditSamples: samples, ...(await awaitedWrites()), ...(await bound(out)) }
    },

    async concurrentText(s: Sizes) {
      const { A, mnemonic, spaceId } = await owner('a')
      const docType = (await ok(A, 'POST', `${S(spaceId)}/types`, { name: 'Doc', xKey: 'doc' })).id
      await ok(A, 'POST', `${S(spaceId)}/types/${docType}/parts`, { key: 'body', datasets: [{ module: 'editor', shared: true }] })
      const objectId = (await ok(A, 'POST', `${S(spaceId)}/objects`, { types: [docType] })).objectId as string
      const M = `${S(spaceId)}/objects/${encodeURIComponent(objectId)}/editor/editor_blocks/markdown`
      await ok(A, 'PUT', M, { content: 'q\n' })
      const { B } = await secondDevice(A, mnemonic)
      // GET answers JSON only when asked for it.
      const md = async (d: Daemon) => {
        const res = await fetch(`${d.url}${M}`, { headers: { accept: 'application/json' } })
        return res.status === 200 ? ((await res.json()).markdown as string).replace(/\n+$/, '') : ''
      }
      await poll('B holds the paragraph', async () => ((await md(B)) === 'q' ? true : undefined))
      // Bytes stored are measured on closed stores (SQLite folds its WAL in on close), so both
      // daemons stop, are measured, and start again on the same data before the typing.
      const closedBytes = async (d: Daemon) => {
        await stopDaemon(d, 'SIGTERM')
        live.delete(d)
        return dirBytes(d.dir)
      }
      const before = [await closedBytes(A), await closedBytes(B)]
      const A2 = await daemon(A.dir)
      const B2 = await daemon(B.dir)
      await poll('A booted', async () => ((await ok(A2, 'GET', '/v1/health')).account ? true : undefined))
      await poll('B booted', async () => ((await ok(B2, 'GET', '/v1/health')).account ? true : undefined))
      await ok(B2, 'POST', '/v1/peers', { multiaddr: (await p2pAddress({ d: A2 } as never)).multiaddr })
      await poll('B holds the paragraph again', async () => ((await md(B2)) === 'q' ? true : undefined))
      progress(`svc: both type ${s.chars} characters`)
      const type = async (d: Daemon, seed: number) => {
        const r = rng(seed)
        let retries = 0
        for (let k = 0; k < s.chars;) {
          const text = await md(d)
          const pos = Math.floor(r() * (text.length + 1))
          const ch = String.fromCharCode(97 + Math.floor(r() * 26))
          const { left, right } = context(text, pos)
          const res = await api(d, 'PATCH', M, { edits: [{ oldText: left + right, newText: left + ch + right }] })
          if (res.status === 200) k++
          else if (res.status === 400) retries++
          else throw new Error(`PATCH -> ${res.status} ${JSON.stringify(res.json)}`)
        }
        return retries
      }
      const t0 = now()
      const ct = cpuOf({ a: A2.proc.pid!, b: B2.proc.pid!, client: process.pid })
      const retries = await Promise.all([type(A2, 1), type(B2, 2)])
      const want = 1 + 2 * s.chars
      await poll(
        'both hold the same text',
        async () => {
          const [x, y] = await Promise.all([md(A2), md(B2)])
          return x === y && x.length === want ? true : undefined
        },
        600_000,
        5,
      )
      const ms = now() - t0
      const textCpu = ct.done()
      const after = [await closedBytes(A2), await closedBytes(B2)]
      return { textConvergedMs: Math.round(ms), textCpu, textBytesA: after[0] - before[0], textBytesB: after[1] - before[1], textPatchRetries: retries[0] + retries[1] }
    },

    async coldOpen(n: number) {
      const { A, spaceId } = await owner('cold')
      const objectId = (await ok(A, 'POST', `${S(spaceId)}/objects`, {})).objectId as string
      progress(`svc: ${n} records for the cold open`)
      const tp = now()
      for (let i = 0; i < n; i += 1000) {
        const records = []
        for (let k = i; k < Math.min(n, i + 1000); k++) records.push({ id: recordId(k), ops: [{ type: '$set', path: '', value: value(k) }] })
        await ok(A, 'POST', `${S(spaceId)}/modify`, { objectId, dataset: DS, records })
      }
      const populateMs = now() - tp
      await stopDaemon(A, 'SIGTERM')
      live.delete(A)
      const key = recordId(Math.floor(n / 2) + 1)
      const t0 = now()
      const C = await daemon(A.dir)
      const up = now()
      await poll('the restarted daemon answers the query', () => readRecord(C, spaceId, objectId, key), 600_000, 2)
      const t1 = now()
      return { coldOpenMs: Math.round(t1 - up), coldSpawnToAnswerMs: Math.round(t1 - t0), coldRssMB: await rssMB(C.proc.pid!), coldRecords: n, populateMs: Math.round(populateMs) }
    },

    async shareRevoke() {
      const fleet = new Fleet()
      fleets.push(fleet)
      const [own, member] = await Promise.all(['owner', 'member'].map((n) => fleet.account(n, { mdns: false })))
      for (const d of fleet.daemons) live.add(d)
      await addPeer(member, own)
      const spaceId = (await ok(own.d, 'POST', '/v1/spaces', { name: 'Shared' })).id as string
      const objectId = (await ok(own.d, 'POST', `${S(spaceId)}/objects`, {})).objectId as string
      await ok(own.d, 'POST', `${S(spaceId)}/modify`, { objectId, dataset: DS, records: [{ id: recordId(0), ops: [{ type: '$set', path: '', value: value(0) }] }] })
      progress('svc: invite, join, accept until the member reads')
      const ti = now()
      const token = await invite(own, spaceId, 'reader')
      const j = await joinSpace(member, token)
      if (j.status !== 202) throw new Error(`join -> ${j.status} ${JSON.stringify(j.json)}`)
      await pendingRequest(own, spaceId, member)
      const ta = now()
      await accept(own, spaceId, member)
      await poll('the member reads the record', () => readRecord(member.d, spaceId, objectId, recordId(0)), 120_000, 2)
      const tr = now()
      progress('svc: remove until a write is sealed under a new key')
      const w0 = await put(own, spaceId, objectId, DS, recordId(1), 'before')
      const t0 = now()
      await removeMember(own, spaceId, member)
      const w1 = await put(own, spaceId, objectId, DS, recordId(1), 'after')
      const sealedMs = now() - t0
      // What each write was sealed under, read from the change headers by a device of the account.
      const dev = await AccountDevice.start(own.key, spaceId)
      try {
        const { peerId, multiaddr } = await p2pAddress(own)
        await dev.dial(multiaddr, peerId)
        await dev.syncWith(peerId)
        const raw = await dev.replica.rawChanges(objectId, [w0.json.changeId, w1.json.changeId])
        const keyOf = new Map(raw.map((c) => [c.id, decodeChange(c.raw).readKeyId]))
        if (keyOf.get(w0.json.changeId) === keyOf.get(w1.json.changeId)) throw new Error('svc: the write after the removal is sealed under the old key')
      } finally {
        await dev.close()
      }
      return { addToMemberReadsMs: Math.round((tr - ta) * 10) / 10, inviteToMemberReadsMs: Math.round(tr - ti), removeToSealedMs: Math.round(sealedMs * 100) / 100 }
    },

    async close() {
      for (const d of daemons) {
        await stopDaemon(d, STOP)
        live.delete(d)
      }
      for (const f of fleets) {
        for (const d of f.daemons) live.delete(d)
        await f.close()
      }
      for (const d of dirs) dropDir(d)
      daemons.length = 0
      fleets.length = 0
      dirs.length = 0
    },
  }
}
