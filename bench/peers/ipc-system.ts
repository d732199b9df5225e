/**
 * The workloads of bench/peers.ts on a system whose peers are forked processes speaking the ops
 * of bench/peers/harness.ts (Jazz, automerge-repo, Yjs). Peer A serves, peer B connects to it.
 */
import { execFileSync } from 'node:child_process'
import { existsSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { dropDir, now, startPeer, tempDir, type PeerProc } from './harness.ts'
import type { Sizes, SystemRun } from './types.ts'
import { cpuOf } from './cpu.ts'

const SCRIPTS = { jazz: './jazz/jazz-peer.ts', automerge: './automerge-peer.ts', yjs: './yjs-peer.ts' } as const
export type IpcSystem = keyof typeof SCRIPTS

/**
 * Jazz lives in a package of its own (bench/peers/jazz/package.json), installed here on first
 * use: its native crypto is published per platform, and a registry without the other
 * platforms' builds would make `npm ci` of the repository refuse its lockfile. Its own
 * lockfile (bench/peers/jazz/package-lock.json) pins every package it installs; `npm ci`
 * refuses that one for the same reason, so `npm install --no-save` installs what it locks and
 * leaves it as it is.
 */
function ensureJazz(progress: (m: string) => void): void {
  const dir = fileURLToPath(new URL('./jazz/', import.meta.url))
  if (existsSync(`${dir}node_modules/cojson/package.json`)) return
  progress('installing Jazz (cojson) into bench/peers/jazz, once')
  execFileSync('npm', ['install', '--no-save', '--no-audit', '--no-fund', '--ignore-scripts', '--legacy-peer-deps'], { cwd: dir, stdio: ['ignore', 'ignore', 'inherit'] })
}

/** VmRSS of a process, in MB (Linux). */
export async function rssMB(pid: number): Promise<number> {
  const { readFileSync } = await import('node:fs')
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))
  return m ? Math.round(Number(m[1]) / 1024) : NaN
}

export function ipcSystem(name: IpcSystem, progress: (m: string) => void): SystemRun {
  const procs: PeerProc[] = []
  const dirs: string[] = []
  const dir = (tag: string) => {
    const d = tempDir(`svc-bench-peers-${name}-${tag}-`)
    dirs.push(d)
    return d
  }
  const peer = () => {
    if (name === 'jazz') ensureJazz(progress)
    const p = startPeer(SCRIPTS[name])
    procs.push(p)
    return p
  }
  /** Peer B of this system, opened on a fresh store and connected to A (`open` answered `a`). */
  async function peerB(a: any, ids: any, last: number | null, b = peer()) {
    const d = dir('b')
    if (name === 'jazz') {
      if (last === null) await b.call('join', { dir: d, port: a.port, account: a, textId: ids.textId })
      else return { b, first: await b.call('firstSync', { dir: d, port: a.port, account: a, docId: ids.docId, last }) }
      return { b, first: null }
    }
    await b.call('open', { dir: d, role: 'b', port: a.port })
    if (last !== null) return { b, first: await b.call('firstSync', { port: a.port, docId: ids.docId, last }) }
    if (name === 'automerge') await b.call('openText', { textId: ids.textId })
    else await b.call('connect', { port: a.port })
    return { b, first: null }
  }

  return {
    async writesSyncEdit(s: Sizes, want: Set<number>) {
      const A = peer()
      const a = await A.call('open', { dir: dir('a'), role: 'a' })
      const ids = await A.call('create')
      progress(`${name}: ${s.records} local writes`)
      const cw = cpuOf({ a: A.proc.pid! })
      const w = await A.call('write', { from: 0, n: s.records })
      const out: Record<string, unknown> = { localWritesPerSec: Math.round(s.records / (w.ms / 1000)), localWritesMs: Math.round(w.ms), localWritesCpu: cw.done() }
      if (!want.has(2) && !want.has(3)) return out
      progress(`${name}: first sync of ${s.records}`)
      const B = peer()
      const cs = cpuOf({ a: A.proc.pid!, b: B.proc.pid! })
      const { first } = await peerB(a, ids, s.records - 1, B)
      Object.assign(out, { firstSyncMs: Math.round(first.ms), firstSyncRecords: first.count, firstSyncCpu: cs.done() })
      if (!want.has(3)) return out
      progress(`${name}: ${s.edits} live edits`)
      const key = 7
      await B.call('watch', { key })
      let wait: ((e: any) => void) | undefined
      B.onEvent((e) => wait?.(e))
      const samples: number[] = []
      for (let i = 0; i < s.edits + s.warmup; i++) {
        const value = 1_000_000 + i
        const seen = new Promise<any>((resolve) => (wait = (e) => e.seen === value && resolve(e)))
        const { at } = await A.call('edit', { key, value })
        const e = await seen
        if (i >= s.warmup) samples.push(e.at - at)
      }
      return { ...out, liveEditSamples: samples }
    },

    async concurrentText(s: Sizes) {
      const A = peer()
      const a = await A.call('open', { dir: dir('a'), role: 'a' })
      const ids = await A.call('create')
      const { b: B } = await peerB(a, ids, null)
      const before = await Promise.all([A.call('size'), B.call('size')])
      progress(`${name}: both type ${s.chars} characters`)
      const t0 = now()
      const ct = cpuOf({ a: A.proc.pid!, b: B.proc.pid! })
      await Promise.all([A.call('type', { n: s.chars, seed: 1 }), B.call('type', { n: s.chars, seed: 2 })])
      for (;;) {
        const [x, y] = await Promise.all([A.call('textState'), B.call('textState')])
        if (x.hash === y.hash && x.len === 2 * s.chars) break
        if (now() - t0 > 600_000) throw new Error(`${name}: texts never converged (${x.len} / ${y.len})`)
        await new Promise((r) => setTimeout(r, 5))
      }
      const ms = now() - t0
      const textCpu = ct.done()
      const after = await Promise.all([A.call('size'), B.call('size')])
      return { textConvergedMs: Math.round(ms), textCpu, textBytesA: after[0].bytes - before[0].bytes, textBytesB: after[1].bytes - before[1].bytes }
    },

    async coldOpen(n: number) {
      const d = dir('cold')
      const A = peer()
      const a = await A.call('open', { dir: d, role: 'a' })
      const ids = await A.call('create')
      progress(`${name}: ${n} records for the cold open`)
      const t = now()
      await A.call('populate', { n, batch: 1000 }, 3_600_000)
      const populateMs = now() - t
      await A.call('close')
      await A.kill()
      const C = peer()
      const key = Math.floor(n / 2) + 1
      const r = await C.call('coldOpen', { dir: d, account: a, docId: ids.docId, key })
      const spawnToAnswerMs = now() - C.startedAt
      return {
        coldOpenMs: Math.round(r.ms),
        coldSpawnToAnswerMs: Math.round(spawnToAnswerMs),
        coldRssMB: await rssMB(C.proc.pid!),
        coldRecords: n,
        populateMs: Math.round(populateMs),
      }
    },

    async close() {
      for (const p of procs) await p.kill()
      for (const d of dirs) dropDir(d)
      procs.length = 0
      dirs.length = 0
    },

    async shareRevoke() {
      if (name !== 'jazz') return undefined
      const A = peer()
      const a = await A.call('open', { dir: dir('owner'), role: 'a' })
      const M = peer()
      const m = await M.call('open', { dir: dir('member'), role: 'member', port: a.port })
      const { recId } = await A.call('shareSetup')
      await A.call('loadMember', { accountID: m.accountID })
      const readable = new Promise<any>((resolve) => M.onEvent((e) => e.readable !== undefined && resolve(e)))
      await M.call('watchReadable', { recId })
      await new Promise((r) => setTimeout(r, 200))
      const { at } = await A.call('addMember', { accountID: m.accountID })
      const e = await readable
      const removal = await A.call('removeMember', { accountID: m.accountID })
      if (!removal.rotated || !removal.memberLacksKey) throw new Error(`jazz: the removal did not rotate away from the member: ${JSON.stringify(removal)}`)
      return {
        addToMemberReadsMs: Math.round((e.at - at) * 10) / 10,
        removeToSealedMs: Math.round(removal.ms * 100) / 100,
        removeToSealedDurableMs: Math.round(removal.durableMs * 10) / 10,
      }
    },
  }
}
