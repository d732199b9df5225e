import { describe, expect, it } from 'vitest'
import { readdirSync, readFileSync, statSync } from 'node:fs'
import { dirname, join, relative, resolve, sep } from 'node:path'
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
  spec.startsWith('node:') || builtins.has(spec) || builtins.has(spec.split('/')[0]) || /^(libp2p|@libp2p\/|@chainsafe\/|fastify|@fastify\/|better-sqlite3)/.test(spec)

/**
 * Two tiers of sync/ may use libp2p: sync/p2p (the runtime-neutral P2P parts: head sync's
 * libp2p transport, its frames and limits, the options every svc node shares, the peer guard),
 * which the daemon and the browser both start, and sync/browser, which assembles sync/ with
 * libp2p's browser transports into the bundle of `npm run build:browser`. Neither may use a Node
 * builtin, Fastify, SQLite or a Node-only libp2p transport (TCP, mDNS): the bundle's build
 * (platform browser) fails on any that slips in through a dependency.
 */
const LIBP2P_TIERS = ['p2p', 'browser']
const forbiddenInLibp2pTier = (spec: string) =>
  spec.startsWith('node:') || builtins.has(spec) || builtins.has(spec.split('/')[0]) || /^(fastify|@fastify\/|better-sqlite3|@libp2p\/(tcp|mdns))/.test(spec)

describe('layer boundaries (DESIGN 1)', () => {
  it('the checker sees the imports it must refuse', () => {
    const sample = `import fs from 'node:fs'\nimport { x } from "libp2p"\nexport * from 'better-sqlite3'\nconst f = await import('fastify')\nimport 'path'`
    expect(importsOf(sample).filter(forbiddenInSync).sort()).toEqual(['better-sqlite3', 'fastify', 'libp2p', 'node:fs', 'path'])
  })

  it('nothing under sync/ imports node:*, Node builtins, libp2p, Fastify or better-sqlite3 (libp2p only in its tiers)', () => {
    const offenders: string[] = []
    const files = sourceFiles(join(root, 'sync'))
    expect(files.length).toBeGreaterThan(10)
    for (const f of files) {
      const tier = LIBP2P_TIERS.includes(relative(root, f).split(sep)[1])
      for (const spec of importsOf(readFileSync(f, 'utf8'))) {
        if (tier ? forbiddenInLibp2pTier(spec) : forbiddenInSync(spec)) offenders.push(`${relative(root, f)} imports ${spec}`)
      }
    }
    expect(offenders).toEqual([])
  })

  it('sync/ imports nothing of node/, server/ or sim/, and nothing imports sync/browser', () => {
    const offenders: string[] = []
    for (const { file, target } of relativeImports('sync')) {
      const to = relative(root, target).split(sep)
      if (to[0] !== 'sync') offenders.push(`${relative(root, file)} imports ${to.join('/')}`)
    }
    for (const dir of ['sync', 'node', 'server', 'sim']) {
      for (const { file, target } of relativeImports(dir)) {
        const from = relative(root, file).split(sep).join('/')
        if (!from.startsWith('sync/browser/') && relative(root, target).split(sep).join('/').startsWith('sync/browser/')) offenders.push(`${from} imports sync/browser`)
      }
    }
    expect(offenders).toEqual([])
  })

  it('sim/ never imports node/ or server/ (except its Node-only crypto entry)', () => {
    const offenders: string[] = []
    let files: string[]
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

/**
 * Layering inside sync/: each folder may import only itself and its declared neighbours
 * (docs/architecture.md, folder table). `core` depends on nothing; `query` only on `core`;
 * a module (`sync/modules/<name>`) on the seam it plugs into and what that seam hands it.
 */
const SYNC_NEIGHBOURS: Record<string, readonly string[]> = {
  core: [],
  crypto: ['core'],
  crdt: ['core'],
  dag: ['core', 'crypto'],
  acl: ['core', 'crypto', 'dag'],
  storage: ['core'],
  query: ['core'],
  replica: ['core', 'crypto', 'crdt', 'dag', 'acl', 'storage'],
  protocol: ['core', 'crypto', 'dag', 'acl', 'replica'],
  // The hub's runtime-neutral core: a SyncHost over keyless replicas, its control protocol's codec.
  hub: ['core', 'crypto', 'protocol', 'replica'],
  // crypto: hashes only (chat's change-derived message ids and read-state content keys).
  // storage: the adapter interface the seam hands a module for stores of its own (search's index).
  modules: ['core', 'crypto', 'crdt', 'query', 'replica', 'space', 'storage'],
  space: ['core', 'crypto', 'crdt', 'dag', 'acl', 'storage', 'query', 'replica'],
  // Head sync over libp2p, shared by the daemon and the page.
  p2p: ['core', 'protocol', 'space'],
  // The browser entry: everything a web app needs, assembled (nothing imports it back).
  browser: ['core', 'crypto', 'crdt', 'dag', 'acl', 'storage', 'query', 'replica', 'protocol', 'p2p', 'space', 'modules'],
}

/** `sync/<folder>` of a file or resolved import, or undefined outside sync/. */
const syncFolder = (path: string): string | undefined => {
  const parts = relative(root, path).split(sep)
  return parts[0] === 'sync' && parts.length > 2 ? parts[1] : undefined
}

/** Relative imports of every file under `dir`, resolved to repository paths. */
function relativeImports(dir: string): Array<{ file: string; target: string }> {
  const out: Array<{ file: string; target: string }> = []
  for (const f of sourceFiles(join(root, dir))) {
    for (const spec of importsOf(readFileSync(f, 'utf8'))) if (spec.startsWith('.')) out.push({ file: f, target: resolve(dirname(f), spec) })
  }
  return out
}

/** Edges between sync/ folders that the table does not declare. */
function layerOffenders(edges: Array<{ file: string; target: string }>): string[] {
  const offenders: string[] = []
  for (const { file, target } of edges) {
    const from = syncFolder(file)
    const to = syncFolder(target)
    if (!from || !to || from === to) continue
    const edge = `${relative(root, file).split(sep).join('/')} -> sync/${to}`
    if (!(SYNC_NEIGHBOURS[from] ?? []).includes(to)) offenders.push(edge)
  }
  return offenders
}

describe('layering inside sync/ and between the tiers (issue 12)', () => {
  it('every folder of sync/ has a row in the neighbour table, and every row names existing folders', () => {
    const folders = readdirSync(join(root, 'sync'))
      .filter((n) => statSync(join(root, 'sync', n)).isDirectory())
      .sort()
    expect(folders).toEqual(Object.keys(SYNC_NEIGHBOURS).sort())
    for (const ns of Object.values(SYNC_NEIGHBOURS)) for (const n of ns) expect(folders).toContain(n)
  })

  it('a sync/ folder imports only itself and its declared neighbours', () => {
    expect(layerOffenders(relativeImports('sync'))).toEqual([])
  })

  it('the checker refuses an edge the table does not declare', () => {
    const at = (p: string) => join(root, ...p.split('/'))
    const edges = [
      { file: at('sync/core/ids.ts'), target: at('sync/query/values.ts') },
      { file: at('sync/query/filter.ts'), target: at('sync/replica/types.ts') },
      { file: at('sync/query/filter.ts'), target: at('sync/query/values.ts') },
      { file: at('sync/replica/space-replica.ts'), target: at('sync/acl/state.ts') },
    ]
    expect(layerOffenders(edges)).toEqual(['sync/core/ids.ts -> sync/query', 'sync/query/filter.ts -> sync/replica'])
  })

  it('node/ never imports server/', () => {
    const offenders = relativeImports('node')
      .filter(({ target }) => relative(root, target).split(sep)[0] === 'server')
      .map(({ file, target }) => `${relative(root, file)} imports ${relative(root, target)}`)
    expect(offenders).toEqual([])
  })

  it('nothing under server/routes/ imports sync/replica/ directly', () => {
    const offenders = relativeImports(join('server', 'routes'))
      .filter(({ target }) => syncFolder(target) === 'replica')
      .map(({ file, target }) => `${relative(root, file)} imports ${relative(root, target)}`)
    expect(offenders).toEqual([])
  })

  it('environment variables are read in one place: the CLI entry hands them to serve-config (the launcher reads only how to start it)', () => {
    const readers: string[] = []
    for (const dir of ['sync', 'node', 'server']) {
      for (const f of sourceFiles(join(root, dir))) if (/\bprocess\.env\b/.test(readFileSync(f, 'utf8'))) readers.push(relative(root, f))
    }
    // and the package's bin, which reads only how to start the CLI (SVC_FROM_SOURCE, and
    // SVC_LAUNCHED, which it sets itself when it starts the bundled Node), never the daemon's settings
    expect(readers.sort()).toEqual([join('server', 'cli', 'main.ts'), join('server', 'cli', 'svc.mjs')])
  })
})
