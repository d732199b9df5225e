import { spawn, spawnSync } from 'node:child_process'
import { existsSync, mkdtempSync, realpathSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { delimiter, join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildCli } from '../../scripts/build.ts'
import { COMMANDS } from '../../server/cli/commands/index.ts'
import { REPO } from '../server/process.ts'

/**
 * The package's bin, server/cli/svc.mjs (issue 39, items 1 and 2): it runs the compiled build
 * on the bundled Node 22 whatever Node starts it (Node 20 failed with `'node:worker_threads'
 * does not provide an export named 'isMarkedAsUntransferable'`), and passes signals on.
 */

const LAUNCHER = join(REPO, 'server/cli/svc.mjs')
const BUNDLED = join(REPO, 'node_modules/node/bin/node')

/** The first `node` on the PATH that is not the bundled one (Node 20 on these machines). */
function otherNode(): string | undefined {
  const bundled = existsSync(BUNDLED) ? realpathSync(BUNDLED) : ''
  for (const dir of (process.env.PATH ?? '').split(delimiter)) {
    const p = join(dir, 'node')
    if (existsSync(p) && realpathSync(p) !== bundled && realpathSync(p) !== realpathSync(process.execPath)) return p
  }
  return undefined
}
const other = otherNode()

const dirs: string[] = []
beforeAll(async () => {
  await buildCli()
}, 120_000)
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true })
})

describe('the svc launcher', () => {
  it('every command entry loads the command of its name', async () => {
    for (const entry of COMMANDS) expect((await entry.load()).name).toBe(entry.name)
  })

  it.skipIf(other === undefined)(`runs the CLI on the bundled Node when another Node starts it (${other ?? 'none found'})`, () => {
    const env = { ...process.env }
    delete env.SVC_FROM_SOURCE
    const version = spawnSync(other!, [LAUNCHER, '--version'], { cwd: tmpdir(), env, encoding: 'utf8', timeout: 30_000 })
    expect(version.stderr).toBe('')
    expect(version.stdout).toMatch(/^svc \d+\.\d+\.\d+\n$/)
    const down = spawnSync(other!, [LAUNCHER, 'health', '--url', 'http://127.0.0.1:9'], { cwd: tmpdir(), env, encoding: 'utf8', timeout: 30_000 })
    expect(down.status).toBe(3)
    expect(down.stderr).toContain('cannot reach')
  })

  it.skipIf(other === undefined)(
    'svc serve started by another Node: SIGTERM to the launcher stops the daemon it started',
    async () => {
      const data = mkdtempSync(join(tmpdir(), 'svc-launcher-'))
      dirs.push(data)
      const env: NodeJS.ProcessEnv = { ...process.env, SVC_NO_MDNS: '1', SVC_P2P_LISTEN: '/ip4/127.0.0.1/tcp/0' }
      delete env.SVC_FROM_SOURCE
      const proc = spawn(other!, [LAUNCHER, 'serve', '--port', '0', '--no-mdns', '--agents-port', 'off', '--data', data], {
        cwd: tmpdir(),
        env,
        stdio: ['ignore', 'pipe', 'pipe'],
        detached: true,
      })
      try {
        let out = ''
        let err = ''
        proc.stdout.setEncoding('utf8').on('data', (c: string) => (out += c))
        proc.stderr.setEncoding('utf8').on('data', (c: string) => (err += c))
        const exited = new Promise<number | null>((r) => proc.on('exit', (code) => r(code)))
        const url = await new Promise<string>((resolve, reject) => {
          proc.stdout.on('data', () => out.includes('\n') && resolve(out.split('\n')[0]))
          void exited.then((code) => reject(new Error(`exited ${code}: ${err}`)))
          setTimeout(() => reject(new Error(`no URL in 30 s: ${err}`)), 30_000).unref()
        })
        const health = (await (await fetch(`${url}/v1/health`)).json()) as { status: string }
        expect(health.status).toBe('ok')
        proc.kill('SIGTERM')
        expect(await exited).toBe(0)
        await expect(fetch(`${url}/v1/health`)).rejects.toThrow()
      } finally {
        try {
          process.kill(-proc.pid!, 'SIGKILL')
        } catch {
          // gone already
        }
      }
    },
    60_000,
  )
})
