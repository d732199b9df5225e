import { spawn, spawnSync, type ChildProcess } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { runnableBlocks } from '../docs/doc-blocks.ts'
import { failedBlock, outputMismatches, runBlocks } from '../docs/run-blocks.ts'
import { REPO } from '../server/process.ts'

/**
 * Issue 39, "How it is proven": a newcomer follows the README literally. The repository is
 * cloned to a temporary directory (so this tests the committed HEAD, not the working tree),
 * then the README's own blocks run there, read from the clone's README.md: its `sh install`
 * block (`npm install`: the native build and the compiled CLI), its `sh daemon` block (`npm
 * start ...`, in the background) and its quick start's `sh runnable` blocks, each output
 * checked against the block after it as the doc test does. Install must leave every tracked
 * file as it was.
 *
 * Slow (minutes: npm installs every dependency into the clone, from npm's cache where it can,
 * and better-sqlite3 builds for the bundled Node). Every step is bounded, and every process it
 * starts runs in a process group of its own that is killed when the test ends, whatever happened.
 */

const INSTALL_TIMEOUT_MS = 12 * 60_000
const START_TIMEOUT_MS = 60_000
const QUICK_START_TIMEOUT_MS = 5 * 60_000

const tmp = mkdtempSync(join(tmpdir(), 'svc-newcomer-'))
const clone = join(tmp, 'svc')
const groups = new Set<ChildProcess>()
const killAll = () => {
  for (const p of groups) {
    try {
      process.kill(-p.pid!, 'SIGKILL')
    } catch {
      // The group is gone already.
    }
  }
}
process.once('exit', killAll)
afterAll(() => {
  killAll()
  rmSync(tmp, { recursive: true, force: true })
}, 60_000)

/**
 * The environment of someone's shell: the test runner's own settings are not theirs. Vitest
 * sets NODE_ENV=production (npm would skip the dev dependencies the build needs), the suite's
 * SVC_* settings, and `npx`/`npm test` add npm_* variables naming this repository. npm's
 * settings a CI machine passes on purpose are kept (its cache, registry, the from-source build).
 */
function newcomerEnv(): NodeJS.ProcessEnv {
  const keep = new Set(['npm_config_cache', 'npm_config_registry', 'npm_config_userconfig', 'npm_config_build_from_source'])
  const env: NodeJS.ProcessEnv = {}
  for (const [k, v] of Object.entries(process.env)) {
    if (/^(npm_|NODE_|VITEST|SVC_|SVC$|INIT_CWD$)/i.test(k) && !keep.has(k)) continue
    env[k] = v
  }
  // npm's nags are noise in a log. prefer-offline: packages come from npm's cache, the registry
  // only for what it lacks. CI runs the suite where no registry is reachable (scripts/netns-run.sh)
  // after its own `npm ci` filled the cache, and pack-install.test.ts installs the same way. The
  // command is the README's all the same.
  return { ...env, npm_config_update_notifier: 'false', npm_config_fund: 'false', npm_config_audit: 'false', npm_config_prefer_offline: 'true' }
}

const portFree = (port: number) =>
  new Promise<boolean>((resolve) => {
    const s = createServer()
    s.once('error', () => resolve(false))
    s.listen(port, '127.0.0.1', () => s.close(() => resolve(true)))
  })

const git = (args: string[], cwd: string) => {
  const r = spawnSync('git', args, { cwd, encoding: 'utf8', timeout: 120_000 })
  expect(r.status, `git ${args.join(' ')}: ${r.stderr}`).toBe(0)
  return r.stdout.trim()
}

describe('a newcomer following the README', () => {
  it(
    'clone, install and quick start print what the README shows',
    async () => {
      const t0 = Date.now()
      const head = git(['rev-parse', 'HEAD'], REPO)
      git(['clone', '--quiet', REPO, clone], tmp)
      git(['checkout', '--quiet', '--detach', head], clone)
      const readme = readFileSync(join(clone, 'README.md'), 'utf8')
      const install = runnableBlocks('README.md', readme, ['sh install'])
      const daemonBlocks = runnableBlocks('README.md', readme, ['sh daemon'])
      const quick = runnableBlocks('README.md', readme, ['sh runnable'])
      expect(install.length, 'README has an `sh install` block').toBeGreaterThan(0)
      expect(daemonBlocks.length, 'README has one `sh daemon` block').toBe(1)
      expect(quick.length).toBeGreaterThanOrEqual(5)
      const env = newcomerEnv()

      // 1. Install, as written.
      const t1 = Date.now()
      const installed = await runBlocks(install, { cwd: clone, env, timeoutMs: INSTALL_TIMEOUT_MS })
      const installMs = Date.now() - t1
      process.stderr.write(`[newcomer] install ${Math.round(installMs / 1000)} s\n`)
      for (const line of installed.stderr.split('\n')) if (line.startsWith('svc postinstall:')) process.stderr.write(`[newcomer] ${line}\n`)
      expect(installed.code, failedBlock(install, installed)).toBe(0)
      expect(git(['status', '--porcelain', '--untracked-files=no'], clone), 'install changed tracked files').toBe('')

      // 2. The daemon, in the background. The README's address is 7001; a machine where that
      //    port is taken (a developer's own daemon) runs it on a free one instead, through the
      //    documented SVC_PORT, and the quick start reaches it through the README's `$SVC`.
      const onDefault = await portFree(7001)
      const daemon = spawn('bash', ['-c', `set -euo pipefail\n${daemonBlocks[0].code}`], {
        cwd: clone,
        env: { ...env, ...(onDefault ? {} : { SVC_PORT: '0' }), SVC_P2P_LISTEN: '/ip4/127.0.0.1/tcp/0' },
        stdio: ['ignore', 'pipe', 'pipe'],
        detached: true,
      })
      groups.add(daemon)
      let out = ''
      let err = ''
      daemon.stdout.setEncoding('utf8').on('data', (c: string) => (out += c))
      daemon.stderr.setEncoding('utf8').on('data', (c: string) => (err += c))
      const exited = new Promise<number | null>((r) => daemon.on('exit', (code) => r(code)))
      const t2 = Date.now()
      let timer: NodeJS.Timeout | undefined
      const url = await new Promise<string>((resolve, reject) => {
        daemon.stdout.on('data', () => {
          // npm prints its own header (`> svc@0.1.0 start`) before the daemon's first line.
          const line = out.split('\n').find((l) => /^https?:\/\//.test(l))
          if (line !== undefined) resolve(line.trim())
        })
        void exited.then((code) => reject(new Error(`the README's daemon exited ${code}:\n${out}\n${err}`)))
        timer = setTimeout(() => reject(new Error(`the README's daemon printed no URL in ${START_TIMEOUT_MS} ms:\n${out}\n${err}`)), START_TIMEOUT_MS)
      }).finally(() => clearTimeout(timer))
      process.stderr.write(`[newcomer] daemon up in ${Date.now() - t2} ms at ${url}\n`)
      if (onDefault) expect(url).toBe('http://127.0.0.1:7001')
      else expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/)

      // 3. The quick start, block by block, outputs as the README shows them.
      const t3 = Date.now()
      const run = await runBlocks(quick, { cwd: clone, env: { ...env, ...(onDefault ? {} : { SVC: url, SVC_URL: url }), EDITOR: 'true' }, timeoutMs: QUICK_START_TIMEOUT_MS })
      process.stderr.write(`[newcomer] quick start ${Date.now() - t3} ms; total ${Math.round((Date.now() - t0) / 1000)} s\n`)
      expect(run.code, `${failedBlock(quick, run)}\n--- daemon stderr:\n${err.slice(-3000)}`).toBe(0)
      expect(outputMismatches(quick, run)).toEqual([])

      // 4. Ctrl-C in the first terminal: the daemon stops (npm start execs it).
      process.kill(-daemon.pid!, 'SIGINT')
      const stopped = await Promise.race([exited, new Promise<'hung'>((r) => setTimeout(() => r('hung'), 30_000))])
      expect(stopped, `the daemon did not stop on SIGINT:\n${err.slice(-3000)}`).not.toBe('hung')
    },
    INSTALL_TIMEOUT_MS + START_TIMEOUT_MS + QUICK_START_TIMEOUT_MS + 2 * 60_000,
  )
})
