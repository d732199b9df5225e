import { spawnSync } from 'node:child_process'
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { REPO } from '../server/process.ts'

/**
 * Issue 39, item 3: a test that times out with a daemon running must not leave it listening
 * (a run once left two `svc serve` processes for 30 minutes). Runs vitest on a fixture whose
 * test starts a real `svc serve` and hangs past its timeout, then checks the daemon is gone.
 */

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}

let pid: number | undefined
let dir: string | undefined
afterEach(() => {
  if (pid !== undefined && alive(pid)) process.kill(pid, 'SIGKILL')
  if (dir) rmSync(dir, { recursive: true, force: true })
  pid = dir = undefined
})

describe('daemons started by tests', () => {
  it('a test that times out leaves no svc serve running after its file', async () => {
    dir = mkdtempSync(join(tmpdir(), 'svc-left-run-'))
    const pidFile = join(dir, 'pid')
    // The outer vitest's own variables would make the inner one think it is a worker.
    const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('VITEST') && k !== 'TINYPOOL_WORKER_ID'))
    const run = spawnSync(join(REPO, 'node_modules/.bin/vitest'), ['run', 'test/process/fixtures/left-daemon.test.ts'], {
      cwd: REPO,
      env: { ...env, SVC_LEFT_DAEMON_PID_FILE: pidFile, SVC_LEFT_DAEMON_TIMEOUT_MS: '20000' },
      encoding: 'utf8',
      timeout: 150_000,
    })
    expect(existsSync(pidFile), `the fixture did not start its daemon:\n${run.stdout}\n${run.stderr}`).toBe(true)
    pid = Number(readFileSync(pidFile, 'utf8'))
    expect(run.status, 'the fixture test must fail by its timeout').toBe(1)
    expect(run.stdout + run.stderr).toMatch(/timed out/i)
    const end = Date.now() + 5_000
    while (alive(pid) && Date.now() < end) await new Promise((r) => setTimeout(r, 100))
    expect(alive(pid), `svc serve ${pid} still runs after the test file ended`).toBe(false)
  }, 180_000)
})
