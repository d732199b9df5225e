import { spawn, spawnSync, type ChildProcess } from 'node:child_process'
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { delimiter, join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { REPO } from '../server/process.ts'

/**
 * Issue 39, item 2: `npm pack` gives a tarball that installs with `npm install -g` and runs.
 * Packs the repository, installs the tarball into a temporary prefix (from npm's cache:
 * `--prefer-offline`, the registry only for what the cache lacks), starts `svc serve` from the
 * installed bin with the first Node on the PATH that is not the bundled one (Node 20 here: the
 * launcher must start the bundled Node 22), and checks health, the CLI, and that SIGTERM to the
 * launcher stops the daemon. The tracked files of the repository are unchanged afterwards.
 *
 * Slow: the install builds better-sqlite3 (twice: its own install script builds it for the Node
 * that runs npm, the package's postinstall for the bundled Node). Every step is bounded, and the
 * daemon (a process group of its own, launcher and child) is killed whatever happens.
 */

const INSTALL_TIMEOUT_MS = 12 * 60_000
const START_TIMEOUT_MS = 60_000

const tmp = mkdtempSync(join(tmpdir(), 'svc-pack-'))
let daemon: ChildProcess | undefined
const killDaemon = () => {
  if (daemon?.pid !== undefined && daemon.exitCode === null && daemon.signalCode === null) {
    try {
      process.kill(-daemon.pid, 'SIGKILL')
    } catch {
      // already gone
    }
  }
}
process.once('exit', killDaemon)
afterAll(() => {
  killDaemon()
  rmSync(tmp, { recursive: true, force: true })
})

/** What npm could rewrite of the tracked files: the manifests and the lockfile, as they are on disk. */
const tracked = () => {
  const files = spawnSync('git', ['ls-files', 'package-lock.json', 'package.json', '*/package.json'], { cwd: REPO, encoding: 'utf8' }).stdout.split('\n').filter(Boolean)
  return spawnSync('git', ['hash-object', ...files], { cwd: REPO, encoding: 'utf8' }).stdout
}

/** PATH without the repository's node_modules/.bin, so `#!/usr/bin/env node` finds the system's Node. */
const systemPath = () =>
  (process.env.PATH ?? '')
    .split(delimiter)
    .filter((d) => !d.includes('node_modules'))
    .join(delimiter)

describe('the package tarball', () => {
  it(
    'npm pack, npm install -g into a temporary prefix, svc serve from it',
    async () => {
      const before = tracked()
      const npmEnv = { ...process.env, npm_config_update_notifier: 'false', npm_config_fund: 'false', npm_config_audit: 'false' }
      const t0 = Date.now()
      const pack = spawnSync('npm', ['pack', '--pack-destination', tmp], { cwd: REPO, env: npmEnv, encoding: 'utf8', timeout: 5 * 60_000 })
      expect(pack.status, pack.stderr).toBe(0)
      const tarball = readdirSync(tmp).find((f) => f.endsWith('.tgz'))
      expect(tarball).toBeDefined()
      const packMs = Date.now() - t0

      const prefix = join(tmp, 'prefix')
      const t1 = Date.now()
      const install = spawnSync('npm', ['install', '-g', '--prefix', prefix, '--prefer-offline', '--foreground-scripts', join(tmp, tarball!)], {
        cwd: tmp,
        env: { ...npmEnv, PATH: systemPath() },
        encoding: 'utf8',
        timeout: INSTALL_TIMEOUT_MS,
        killSignal: 'SIGKILL',
      })
      const installMs = Date.now() - t1
      expect(install.status, `${install.stdout.slice(-3000)}\n${install.stderr.slice(-3000)}`).toBe(0)
      // What the install printed about the native build, and how long each step took.
      process.stderr.write(`[pack-install] pack ${packMs} ms, install ${installMs} ms\n`)
      for (const line of (install.stdout + install.stderr).split('\n')) if (line.startsWith('svc postinstall:')) process.stderr.write(`[pack-install] ${line}\n`)
      expect(install.stdout + install.stderr).toContain('svc postinstall:')

      const bin = join(prefix, 'bin', 'svc')
      expect(existsSync(bin)).toBe(true)
      const env: NodeJS.ProcessEnv = { ...process.env, PATH: systemPath(), SVC_NO_MDNS: '1', SVC_P2P_LISTEN: '/ip4/127.0.0.1/tcp/0' }
      delete env.SVC_FROM_SOURCE
      const version = spawnSync(bin, ['--version'], { cwd: tmp, env, encoding: 'utf8', timeout: 30_000 })
      expect(version.stdout).toMatch(/^svc \d+\.\d+\.\d+/)

      daemon = spawn(bin, ['serve', '--port', '0', '--no-mdns', '--agents-port', '0', '--data', join(tmp, 'data')], {
        cwd: tmp,
        env,
        stdio: ['ignore', 'pipe', 'pipe'],
        detached: true,
      })
      let out = ''
      let err = ''
      daemon.stdout!.setEncoding('utf8').on('data', (c: string) => (out += c))
      daemon.stderr!.setEncoding('utf8').on('data', (c: string) => (err += c))
      const exited = new Promise<number | null>((r) => daemon!.on('exit', (code) => r(code)))
      let timer: NodeJS.Timeout | undefined
      const url = await new Promise<string>((resolve, reject) => {
        daemon!.stdout!.on('data', () => out.includes('\n') && resolve(out.split('\n')[0]))
        void exited.then((code) => reject(new Error(`svc serve exited ${code}: ${err}`)))
        timer = setTimeout(() => {
          killDaemon()
          reject(new Error(`svc serve did not start in ${START_TIMEOUT_MS} ms: ${err}`))
        }, START_TIMEOUT_MS)
      }).finally(() => clearTimeout(timer))
      expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/)

      const health = spawnSync(bin, ['health', '--url', url], { cwd: tmp, env, encoding: 'utf8', timeout: 30_000 })
      expect(health.status, health.stderr).toBe(0)
      expect(JSON.parse(health.stdout)).toMatchObject({ status: 'ok', account: '' })
      const created = spawnSync(bin, ['auth', 'create', '--url', url], { cwd: tmp, env, encoding: 'utf8', timeout: 60_000 })
      expect(created.status, created.stderr).toBe(0)
      expect(JSON.parse(created.stdout)).toMatchObject({ created: true })

      // SIGTERM to the launcher reaches the daemon it started; both exit.
      daemon.kill('SIGTERM')
      expect(await exited).toBe(0)
      expect(spawnSync(bin, ['health', '--url', url], { cwd: tmp, env, timeout: 30_000 }).status).toBe(3)

      expect(tracked()).toBe(before)
    },
    INSTALL_TIMEOUT_MS + 10 * 60_000,
  )
})
