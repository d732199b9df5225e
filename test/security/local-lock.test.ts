import { spawn, type ChildProcess } from 'node:child_process'
import { readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { acquireLock, processStartTime } from '../../node/account/lock.ts'
import { AccountLifecycle } from '../../node/daemon/account-lifecycle.ts'
import { DaemonHost } from '../../node/daemon/daemon-host.ts'
import { systemEnv } from '../../sync/core/env.ts'
import { tmpDir } from './node-daemon.ts'

/*
 * Issue 33, 8a: a lock written before locks carried a start time (`<pid> <nonce>`) that names a
 * live, unrelated process blocked the account's boot until that process ended: after a crash
 * or a container restart the pid is often taken by something else. docs/security.md "The local
 * machine".
 */
const linux = processStartTime(process.pid) !== undefined

const dirs: string[] = []
const children: ChildProcess[] = []
const sessions: AccountLifecycle[] = []
afterAll(async () => {
  for (const s of sessions) await s.close()
  for (const c of children) c.kill()
  for (const d of dirs) rmSync(d, { recursive: true, force: true })
})
const fresh = (prefix: string) => {
  const d = tmpDir(prefix)
  dirs.push(d)
  return d
}

/** A running process; resolves once it runs its own program (not the fork of ours). */
async function running(cmd: string, args: string[], expectCmdline: RegExp): Promise<number> {
  const c = spawn(cmd, args, { stdio: 'ignore' })
  children.push(c)
  const pid = c.pid!
  for (let i = 0; i < 200; i++) {
    const line = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ')
    if (expectCmdline.test(line)) return pid
    await new Promise((r) => setTimeout(r, 10))
  }
  throw new Error(`process ${pid} never ran ${cmd}`)
}
const aNodeProcess = () => running(process.execPath, ['-e', 'setTimeout(() => {}, 120000)'], /setTimeout/)
const notNode = () => running('sleep', ['120'], /^sleep /)

function oldFormatLock(dir: string, pid: number, writtenMsAgo = 0): string {
  const path = join(dir, 'lock')
  writeFileSync(path, `${pid} 5f0c1d2e-old-format\n`)
  if (writtenMsAgo > 0) {
    const t = (Date.now() - writtenMsAgo) / 1000
    utimesSync(path, t, t)
  }
  return path
}

const warnings = () => {
  const got: string[] = []
  return { log: { warn: (obj: object, msg: string) => void got.push(`${msg} ${JSON.stringify(obj)}`) }, got }
}

describe.runIf(linux)('an old-format lock naming a running process', () => {
  it('is stale when that process started after the lock was written (a reused pid), and the takeover is logged', async () => {
    const dir = fresh('svc-oldlock-')
    const pid = await aNodeProcess()
    oldFormatLock(dir, pid, 60 * 60 * 1000)
    const w = warnings()
    const lock = acquireLock(dir, w.log)
    expect(readFileSync(lock.path, 'utf8')).toMatch(new RegExp(`^${process.pid} start=`))
    expect(w.got).toEqual([`taking over an old-format account lock: the process with its pid started after the lock was written {"dir":${JSON.stringify(dir)},"pid":${pid}}`])
    lock.release()
  })

  it('is stale when that process is not Node, even if it started before the lock was written', async () => {
    const dir = fresh('svc-oldlock-')
    const pid = await notNode()
    oldFormatLock(dir, pid)
    const w = warnings()
    const lock = acquireLock(dir, w.log)
    expect(w.got[0]).toMatch(/not a Node process/)
    lock.release()
  })

  it('still holds when a Node process that was running when the lock was written runs on: it may be an older daemon', async () => {
    const dir = fresh('svc-oldlock-')
    const pid = await aNodeProcess()
    oldFormatLock(dir, pid)
    expect(() => acquireLock(dir)).toThrow(expect.objectContaining({ code: 'auth.account_in_use', details: { pid } }))
  })

  it('does not keep a daemon session from booting the account', async () => {
    const root = fresh('svc-oldlock-root-')
    const engine = new DaemonHost({ dataRoot: root, noMdns: true, p2p: false })
    const first = new AccountLifecycle({ dataRoot: root, mode: 'standalone', engine, env: systemEnv })
    const { accountId } = await first.authorize({}, undefined)
    await first.close()
    oldFormatLock(join(root, 'accounts', accountId), await notNode())
    const again = new AccountLifecycle({ dataRoot: root, mode: 'standalone', engine: new DaemonHost({ dataRoot: root, noMdns: true, p2p: false }), env: systemEnv })
    sessions.push(again)
    const warned: string[] = []
    const onWarning = (w: Error & { code?: string }) => {
      if (w.code === 'SVC_ACCOUNT_LOCK') warned.push(w.message)
    }
    process.on('warning', onWarning)
    try {
      expect(await again.bootAtStart()).toBe(accountId)
      await new Promise((r) => setImmediate(r))
    } finally {
      process.off('warning', onWarning)
    }
    expect(warned).toHaveLength(1)
  })
})
