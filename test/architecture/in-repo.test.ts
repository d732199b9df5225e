import { readdirSync, readFileSync, statSync } from 'node:fs'
import { join, relative } from 'node:path'
import { describe, expect, it } from 'vitest'

/**
 * Issue 39, item 3: no test, doc, script or benchmark depends on a file outside the repository
 * (test/server/errors.test.ts read `../shared/spec/core.md`, so `npm test` failed in a fresh
 * clone). The contract the code follows is in the repository, docs/spec/. CI's runner
 * (.ci/run) is the one file that may use the machine's tools beside the repository.
 */

const root = join(import.meta.dirname, '..', '..')
const DIRS = ['test', 'bench', 'scripts', 'sim', 'docs', 'server', 'node', 'sync']
const SKIP = new Set(['node_modules', 'dist'])

function files(dir: string): string[] {
  const out: string[] = []
  for (const name of readdirSync(join(root, dir))) {
    if (SKIP.has(name) || name.startsWith('.')) continue
    const rel = `${dir}/${name}`
    if (statSync(join(root, rel)).isDirectory()) out.push(...files(rel))
    else if (/\.(ts|mts|js|mjs|sh|md|json)$/.test(name)) out.push(rel)
  }
  return out
}

/** `../shared/...`, `join(x, '..', 'shared')`, or an absolute path into the machine's /work. */
const OUTSIDE = [/\.\.\/shared\//, /(['"`])\.\.\1\s*,\s*(['"`])shared\2/, /\/work\/(?:shared|main)\b/]

describe('the repository is self-contained', () => {
  it('no test, doc, script, benchmark or source names a path outside it', () => {
    const offenders: string[] = []
    const self = 'test/architecture/in-repo.test.ts' // names the patterns it looks for
    for (const f of [...DIRS.flatMap(files), 'README.md', 'package.json', 'vitest.config.ts'].filter((x) => x !== self)) {
      const text = readFileSync(join(root, f), 'utf8')
      text.split('\n').forEach((line, i) => {
        if (OUTSIDE.some((re) => re.test(line))) offenders.push(`${relative(root, join(root, f))}:${i + 1}: ${line.trim()}`)
      })
    }
    expect(offenders).toEqual([])
  })
})
