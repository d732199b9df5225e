import { spawn } from 'node:child_process'
import { existsSync, rmSync } from 'node:fs'
import { createServer } from 'node:net'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { tempRoot } from '../server/helpers.ts'
import { REPO } from '../server/process.ts'

const cleanups: Array<() => void> = []
afterEach(() => {
  for (const c of cleanups.splice(0)) c()
})

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}

async function until(what: string, check: () => boolean | Promise<boolean>, timeoutMs = 30_000): Promise<void> {
  const end = Date.now() + timeoutMs
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`)
    await new Promise((r) => setTimeout(r, 100))
  }
}

/** Whether a fresh listener can take the port (the daemon released it). */
function portFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = createServer()
    s.once('error', () => resolve(false))
    s.listen(port, '127.0.0.1', () => s.close(() => resolve(true)))
  })
}

/** The pids whose parent is `ppid` (Linux /proc), to find the daemon npm started. */
async function childrenOf(ppid: number): Promise<number[]> {
  const { readdirSync, readFileSync } = await import('node:fs')
  const out: number[] = []
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue
    try {
      const stat = readFileSync(`/proc/${d}/stat`, 'utf8')
      // Field 4 (after the parenthesised command, which may hold spaces) is the parent pid.
      const after = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
      if (Number(after[1]) === ppid) out.push(Number(d))
    } catch {
      // the process ended while we looked
    }
  }
  return out
}

describe('npm start as a process', () => {
  it('SIGTERM to npm’s pid stops the daemon gracefully: it exits, frees its port and its account lock', async () => {
    const data = tempRoot()
    cleanups.push(() => rmSync(data, { recursive: true, force: true }))
    const npm = spawn('npm', ['start', '--silent'], {
      cwd: REPO,
      env: { ...process.env, SVC_NO_MDNS: '1', SVC_DATA: data, SVC_PORT: '0' },
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    let out = ''
    let err = ''
    npm.stdout.setEncoding('utf8').on('data', (c: string) => (out += c))
    npm.stderr.setEncoding('utf8').on('data', (c: string) => (err += c))
    const npmExited = new Promise<number | null>((resolve) => npm.on('exit', (code) => resolve(code)))
    const daemons = new Set<number>()
    cleanups.push(() => {
      // Only what this test started: npm and the daemon it spawned.
      for (const pid of [npm.pid!, ...daemons]) if (alive(pid)) process.kill(pid, 'SIGKILL')
    })

    await until('the daemon URL', () => /http:\/\/127\.0\.0\.1:\d+/.test(out), 60_000).catch((e: unknown) => {
      throw new Error(`${(e as Error).message}; stderr: ${err}`)
    })
    const url = out.match(/http:\/\/127\.0\.0\.1:\d+/)![0]
    const port = Number(new URL(url).port)
    // The daemon is npm's child (with `exec`, the shell npm starts becomes the daemon).
    for (const pid of await childrenOf(npm.pid!)) daemons.add(pid)
    for (const pid of [...daemons]) for (const c of await childrenOf(pid)) daemons.add(c)
    expect(daemons.size).toBeGreaterThan(0)

    const created = await fetch(`${url}/v1/auth`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' })
    expect(created.status).toBe(201)
    const { accountId } = (await created.json()) as { accountId: string }
    const lock = join(data, 'accounts', accountId, 'lock')
    expect(existsSync(lock)).toBe(true)

    process.kill(npm.pid!, 'SIGTERM')
    await until('npm to exit', () => npm.exitCode !== null || npm.signalCode !== null)
    await npmExited
    await until('the daemon to exit', () => [...daemons].every((pid) => !alive(pid)))
    await until('the port to be released', () => portFree(port))
    expect(existsSync(lock)).toBe(false)
    // Graceful: the daemon closed its account itself (a killed one leaves the lock behind).
    expect(err).not.toMatch(/error while stopping/)
  }, 120_000)
})
