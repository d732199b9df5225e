import { execFileSync } from 'node:child_process'
import { mkdtempSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { REPO } from '../server/process.ts'

const NATIVE = join(REPO, 'node_modules/better-sqlite3/build/Release/better_sqlite3.node')

describe('npx svc in a clone', () => {
  it('runs the clone’s own launcher from an empty npm cache, offline, and rebuilds nothing', () => {
    // npx installs the project into its cache as a link to the clone, which runs the
    // postinstall: it rebuilt better-sqlite3 there (minutes), and an interrupted rebuild
    // deleted the clone's native binary (issue 39, item 2). The postinstall now leaves a binary
    // that loads alone. `--offline` with an empty cache: nothing may come from a registry.
    const cache = mkdtempSync(join(tmpdir(), 'svc-npx-cache-'))
    try {
      const before = statSync(NATIVE).mtimeMs
      const out = execFileSync('npx', ['--offline', 'svc', '--version'], {
        cwd: REPO,
        encoding: 'utf8',
        env: { ...process.env, npm_config_cache: cache, npm_config_yes: 'true' },
        timeout: 120_000,
      })
      expect(out.trim()).toMatch(/^svc \d+\.\d+\.\d+/)
      expect(statSync(NATIVE).mtimeMs).toBe(before)
    } finally {
      rmSync(cache, { recursive: true, force: true })
    }
  })
})
