import { describe, expect, it } from 'vitest'
import { readdirSync, readFileSync, statSync } from 'node:fs'
import { join, relative } from 'node:path'
import { builtinModules } from 'node:module'

const root = join(import.meta.dirname, '..', '..')

function sourceFiles(dir: string): string[] {
  const out: string[] = []
  for (const name of readdirSync(dir)) {
    const p = join(dir, name)
    if (statSync(p).isDirectory()) out.push(...sourceFiles(p))
    else if (/\.(ts|js|mjs)$/.test(name)) out.push(p)
  }
  return out
}

/** Every module specifier a file imports, statically or dynamically, or re-exports from. */
export function importsOf(source: string): string[] {
  const specs: string[] = []
  const re = /(?:import|export)\s[^'"]*?from\s*['"]([^'"]+)['"]|import\s*\(\s*['"]([^'"]+)['"]\s*\)|import\s+['"]([^'"]+)['"]|require\s*\(\s*['"]([^'"]+)['"]\s*\)/g
  for (const m of source.matchAll(re)) specs.push(m[1] ?? m[2] ?? m[3] ?? m[4])
  return specs
}

const builtins = new Set(builtinModules.flatMap((m) => [m, m.split('/')[0]]))
const forbiddenInSync = (spec: string) =>
  spec.startsWith('node:') || builtins.has(spec) || builtins.has(spec.split('/')[0]) ||
  /^(libp2p|@libp2p\/|@chainsafe\/|fastify|@fastify\/|better-sqlite3)/.test(spec)

describe('layer boundaries (DESIGN 1)', () => {
  it('the checker sees the imports it must refuse', () => {
    const sample = `import fs from 'node:fs'\nimport { x } from "libp2p"\nexport * from 'better-sqlite3'\nconst f = await import('fastify')\nimport 'path'`
    expect(importsOf(sample).filter(forbiddenInSync).sort()).toEqual(['better-sqlite3', 'fastify', 'libp2p', 'node:fs', 'path'])
  })

  it('nothing under sync/ imports node:*, Node builtins, libp2p, Fastify or better-sqlite3', () => {
    const offenders: string[] = []
    const files = sourceFiles(join(root, 'sync'))
    expect(files.length).toBeGreaterThan(10)
    for (const f of files) {
      for (const spec of importsOf(readFileSync(f, 'utf8'))) {
        if (forbiddenInSync(spec)) offenders.push(`${relative(root, f)} imports ${spec}`)
      }
    }
    expect(offenders).toEqual([])
  })

  it('sim/ never imports node/ or server/ (except its Node-only crypto entry)', () => {
    const offenders: string[] = []
    let files: string[] = []
    try {
      files = sourceFiles(join(root, 'sim'))
    } catch {
      files = []
    }
    for (const f of files) {
      for (const spec of importsOf(readFileSync(f, 'utf8'))) {
        if (relative(root, f) === join('sim', 'node-crypto.ts') && spec === '../node/crypto/node-provider.ts') continue
        if (/(^|\/)(node|server)\//.test(spec) && spec.startsWith('.')) offenders.push(`${relative(root, f)} imports ${spec}`)
      }
    }
    expect(offenders).toEqual([])
  })
})
