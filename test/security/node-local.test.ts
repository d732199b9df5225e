import { spawn } from 'node:child_process'
import { chmodSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { fileSyncStats } from '../../node/account/files.ts'
import { acquireLock } from '../../node/account/lock.ts'
import { DaemonHost } from '../../node/daemon/daemon-host.ts'
import { AccountLifecycle } from '../../node/daemon/account-lifecycle.ts'
import { systemEnv } from '../../sync/core/env.ts'
import { resolveServeConfig } from '../../server/cli/serve-config.ts'
import { tmpDir } from './node-daemon.ts'

const dirs: string[] = []
const fresh = (prefix: string) => {
  const d = tmpDir(prefix)
  dirs.push(d)
  return d
}
const sessions: AccountLifecycle[] = []
afterAll(async () => {
  for (const s of sessions) await s.close()
  for (const d of dirs) rmSync(d, { recursive: true, force: true })
})

/** A real daemon session and engine (SQLite, no P2P) with an account created in `dataRoot`. */
async function bootAccount(dataRoot: string, durability?: 'normal' | 'full') {
  const engine = new DaemonHost({ dataRoot, noMdns: true, p2p: false, ...(durability ? { durability } : {}) })
  const session = new AccountLifecycle({ dataRoot, mode: 'standalone', engine, env: systemEnv, ...(durability ? { durability } : {}) })
  sessions.push(session)
  const { accountId } = await session.authorize({}, undefined)
  return { engine, session, accountId, dir: join(dataRoot, 'accounts', accountId) }
}

/** Field 22 of /proc/<pid>/stat: when the process started, in clock ticks since boot. */
function processStartTime(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19]
  } catch {
    return undefined
  }
}

const modeOf = (p: string) => statSync(p).mode & 0o777

describe('After a crash the account can refuse to boot forever', () => {
  it('a lock file left by an earlier process that had our pid is stale', () => {
    const dir = fresh('svc-lock-')
    // What a crashed daemon leaves when the new one gets its pid (containers: pid 1 every time).
    writeFileSync(join(dir, 'lock'), `${process.pid} 7a3f0c2e-crashed\n`)
    const lock = acquireLock(dir)
    expect(readFileSync(join(dir, 'lock'), 'utf8')).toMatch(new RegExp(`^${process.pid} `))
    lock.release()
    // The same with the start time and boot id this version writes.
    writeFileSync(join(dir, 'lock'), `${process.pid} start=${processStartTime(process.pid) ?? 1} boot=x 7a3f0c2e-crashed\n`)
    acquireLock(dir).release()
  })

  it('a lock this process holds is still refused, with details.pid', () => {
    const dir = fresh('svc-lock-')
    const lock = acquireLock(dir)
    expect(() => acquireLock(dir)).toThrow(expect.objectContaining({ code: 'auth.account_in_use', details: { pid: process.pid } }))
    lock.release()
    acquireLock(dir).release()
  })

  it.runIf(processStartTime(process.pid) !== undefined)('a live pid with another start time is a reused pid (stale); with its own start time it holds the lock', async () => {
    const dir = fresh('svc-lock-')
    const child = spawn('sleep', ['30'], { stdio: 'ignore' })
    try {
      await new Promise((r) => child.once('spawn', r))
      const pid = child.pid!
      const start = processStartTime(pid)!
      writeFileSync(join(dir, 'lock'), `${pid} start=${Number(start) + 12345} other\n`)
      acquireLock(dir).release()
      writeFileSync(join(dir, 'lock'), `${pid} start=${start} live\n`)
      expect(() => acquireLock(dir)).toThrow(expect.objectContaining({ code: 'auth.account_in_use', details: { pid } }))
    } finally {
      child.kill('SIGKILL')
    }
  })

  it('a daemon session boots an account whose lock carries our own pid', async () => {
    const root = fresh('svc-lock-root-')
    const first = await bootAccount(root)
    await first.session.close()
    writeFileSync(join(first.dir, 'lock'), `${process.pid} 1b2c-crashed\n`)
    const engine = new DaemonHost({ dataRoot: root, noMdns: true, p2p: false })
    const again = new AccountLifecycle({ dataRoot: root, mode: 'standalone', engine, env: systemEnv })
    sessions.push(again)
    expect(await again.bootAtStart()).toBe(first.accountId)
  })
})

describe('svc.db and its WAL are 0644', () => {
  it('the database, its -wal and -shm, the wallet, metadata and lock files are 0600; directories 0700', async () => {
    const previous = process.umask(0o022)
    try {
      const root = fresh('svc-modes-')
      const { engine, dir } = await bootAccount(root)
      // A write, so the WAL holds data.
      await engine.account().createSpace({ name: 'modes' })
      for (const f of ['svc.db', 'svc.db-wal', 'svc.db-shm', 'wallet.json', 'account.json', 'lock']) {
        expect([f, modeOf(join(dir, f)).toString(8)]).toEqual([f, '600'])
      }
      expect(modeOf(dir).toString(8)).toBe('700')
      expect(modeOf(join(root, 'accounts')).toString(8)).toBe('700')
    } finally {
      process.umask(previous)
    }
  })

  it('files an older version left world-readable are tightened when the account boots', async () => {
    const previous = process.umask(0o022)
    try {
      const root = fresh('svc-modes-')
      const first = await bootAccount(root)
      await first.session.close()
      mkdirSync(first.dir, { recursive: true })
      writeFileSync(join(first.dir, 'svc.db-wal'), '')
      for (const f of ['svc.db', 'svc.db-wal']) chmodSync(join(first.dir, f), 0o644)
      const engine = new DaemonHost({ dataRoot: root, noMdns: true, p2p: false })
      const again = new AccountLifecycle({ dataRoot: root, mode: 'standalone', engine, env: systemEnv })
      sessions.push(again)
      await again.bootAtStart()
      for (const f of ['svc.db', 'svc.db-wal', 'svc.db-shm']) expect([f, modeOf(join(first.dir, f)).toString(8)]).toEqual([f, '600'])
    } finally {
      process.umask(previous)
    }
  })
})

describe('No way to ask for power-loss durability', () => {
  it('--durability, SVC_DURABILITY and the config key "durability" select it; the default stays normal', () => {
    expect(resolveServeConfig([], {}).durability).toBe('normal')
    expect(resolveServeConfig(['--durability', 'full'], {}).durability).toBe('full')
    expect(resolveServeConfig([], { SVC_DURABILITY: 'full' }).durability).toBe('full')
    const cfg = join(fresh('svc-cfg-'), 'svc.json')
    writeFileSync(cfg, JSON.stringify({ durability: 'full' }))
    expect(resolveServeConfig(['--config', cfg], {}).durability).toBe('full')
    expect(resolveServeConfig(['--config', cfg, '--durability', 'normal'], {}).durability).toBe('normal')
    expect(() => resolveServeConfig(['--durability', 'fsync'], {})).toThrow(/durability must be/)
  })

  it('full: SQLite runs with synchronous=FULL and the account directory is fsynced after the wallet and metadata renames', async () => {
    const before = fileSyncStats.dirSyncs
    const { engine } = await bootAccount(fresh('svc-durable-'), 'full')
    // wallet.json and account.json (one fsync each after the rename) and the new account directory.
    expect(fileSyncStats.dirSyncs - before).toBeGreaterThanOrEqual(3)
    expect(engine.storage()!.db.pragma('synchronous', { simple: true })).toBe(2) // FULL
  })

  it('normal (the default): synchronous=NORMAL, no directory fsync', async () => {
    const before = fileSyncStats.dirSyncs
    const { engine } = await bootAccount(fresh('svc-normal-'))
    expect(fileSyncStats.dirSyncs).toBe(before)
    expect(engine.storage()!.db.pragma('synchronous', { simple: true })).toBe(1) // NORMAL
  })
})
