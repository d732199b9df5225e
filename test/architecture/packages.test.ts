/**
 * Packages that install what they use (issue 34, item 8; docs/packages.md).
 *
 * The repository is one npm workspace root (the daemon with its CLI: node/ and server/, plus the
 * repository's tests, benchmarks, simulator and scripts) and the workspaces its package.json
 * lists (sync/: the library; node/push-node/: the push node; node/hub/: the hub). For each package this test reads
 * every file it owns with the TypeScript parser and checks that:
 *
 * - every bare import (not relative, not `node:`, not a Node builtin) is listed in its
 *   package.json: in `dependencies` when a runtime file loads it (the root, whose runtime ships
 *   as one compiled bundle, `npm run build`: in `dependencies` only what the bundle leaves
 *   outside, scripts/build.ts's CLI_EXTERNAL; the rest is in the bundle), in `dependencies` or
 *   `devDependencies` when only dev files (tests, conformance kits, scripts) or type-only imports
 *   (`import type`, `import('x').T`) use it; `@types/x` stands for `x` in type-only use;
 * - a relative import into another workspace's folder is a use of that workspace, listed the
 *   same way; a runtime file may load a workspace lazily (`await import(...)`) without listing it
 *   in `dependencies` (`svc push-node` does so, so the daemon runs without pg installed);
 * - a workspace that reaches the root's files (the push node starts the daemon's libp2p node)
 *   carries those files: their bare imports must be in its own list, as it runs them;
 * - nothing listed is unused: each `dependencies` entry is loaded by a runtime file; each
 *   `devDependencies` entry is imported, or is the `@types/` of something used, or provides a
 *   binary that one of the package's scripts calls, or is named in tsconfig's `types`, or its
 *   files are loaded by path (`node_modules/x/...`);
 * - the daemon (the root package) does not depend on pg or web-push, directly or through a
 *   workspace it depends on.
 */
import { describe, expect, it } from 'vitest'
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs'
import { builtinModules } from 'node:module'
import { dirname, join, relative, resolve, sep } from 'node:path'
import ts from 'typescript'
import { CLI_EXTERNAL } from '../../scripts/build.ts'

const root = join(import.meta.dirname, '..', '..')
const posix = (p: string) => p.split(sep).join('/')

interface PackageJson {
  name: string
  private?: boolean
  workspaces?: string[]
  scripts?: Record<string, string>
  dependencies?: Record<string, string>
  devDependencies?: Record<string, string>
  optionalDependencies?: Record<string, string>
  peerDependencies?: Record<string, string>
  exports?: unknown
  sideEffects?: boolean | string[]
}

const readJson = <T>(file: string): T => JSON.parse(readFileSync(join(root, file), 'utf8')) as T
const rootPkg = readJson<PackageJson>('package.json')
const workspaceDirs = rootPkg.workspaces ?? []

interface Pkg {
  dir: string // '' for the root
  json: PackageJson
  /** Files of this package that only development uses (tests, conformance kits, scripts). */
  isDev: (file: string) => boolean
}

/**
 * Which of a package's files are dev files. The root's runtime is the daemon and its CLI (node/,
 * server/), less the typed client's generator (`npm run gen:client`); everything else at the
 * root (test/, bench/, sim/, scripts/, config files) is development. In the workspaces, the
 * conformance kits (vitest suites other stores run against themselves) are dev files.
 */
const DEV_FILES: Record<string, (file: string) => boolean> = {
  '': (f) => !/^(node|server)\//.test(f) || f === 'server/client/generate.ts',
  sync: (f) => /conformance\.ts$/.test(f),
  'node/push-node': (f) => /conformance\.ts$/.test(f),
  'node/hub': (f) => /conformance\.ts$/.test(f),
}

/** Packages of the bench alone, installed on the bench's first run (bench/peers/jazz: Jazz). */
const BENCH_PACKAGES = ['bench/peers/jazz']

const packages: Pkg[] = [
  { dir: '', json: rootPkg, isDev: DEV_FILES[''] },
  ...BENCH_PACKAGES.map((dir) => ({ dir, json: readJson<PackageJson>(`${dir}/package.json`), isDev: () => true })),
  ...workspaceDirs.map((dir) => ({ dir, json: readJson<PackageJson>(`${dir}/package.json`), isDev: DEV_FILES[dir] ?? (() => false) })),
]
const byName = new Map(packages.map((p) => [p.json.name, p]))

/** The package that owns a repository file: the deepest workspace folder holding it, else the root. */
function ownerOf(file: string): Pkg {
  let best = packages[0]
  for (const p of packages) if (p.dir && (file === p.dir || file.startsWith(`${p.dir}/`)) && p.dir.length > best.dir.length) best = p
  return best
}

const SKIP_DIRS = new Set(['node_modules', 'dist', 'test-results', 'coverage', '.git', '.tmp'])
function listFiles(dir: string): string[] {
  const out: string[] = []
  for (const name of readdirSync(join(root, dir))) {
    if (SKIP_DIRS.has(name) || name.startsWith('.')) continue
    const rel = dir ? `${dir}/${name}` : name
    if (statSync(join(root, rel)).isDirectory()) out.push(...listFiles(rel))
    else if (/\.(ts|mts|cts|js|mjs|cjs)$/.test(name) && !name.endsWith('.d.ts')) out.push(rel)
  }
  return out
}
const allFiles = listFiles('')

interface Use {
  spec: string
  typeOnly: boolean
  dynamic: boolean
}

/** Every module a file names: imports, re-exports, `import()`, `require()`, `import('x').T`, and `node_modules/x/` paths. */
export function usesOf(fileName: string, text: string): Use[] {
  const sf = ts.createSourceFile(fileName, text, ts.ScriptTarget.Latest, true)
  const out: Use[] = []
  const visit = (n: ts.Node): void => {
    if (ts.isImportDeclaration(n) && ts.isStringLiteral(n.moduleSpecifier)) {
      out.push({ spec: n.moduleSpecifier.text, typeOnly: n.importClause?.phaseModifier === ts.SyntaxKind.TypeKeyword, dynamic: false })
    } else if (ts.isExportDeclaration(n) && n.moduleSpecifier && ts.isStringLiteral(n.moduleSpecifier)) {
      out.push({ spec: n.moduleSpecifier.text, typeOnly: n.isTypeOnly, dynamic: false })
    } else if (ts.isImportTypeNode(n) && ts.isLiteralTypeNode(n.argument) && ts.isStringLiteral(n.argument.literal)) {
      out.push({ spec: n.argument.literal.text, typeOnly: true, dynamic: false })
    } else if (ts.isCallExpression(n) && n.arguments.length > 0 && ts.isStringLiteralLike(n.arguments[0])) {
      const callee = n.expression
      if (callee.kind === ts.SyntaxKind.ImportKeyword) out.push({ spec: n.arguments[0].text, typeOnly: false, dynamic: true })
      else if (ts.isIdentifier(callee) && callee.text === 'require') out.push({ spec: n.arguments[0].text, typeOnly: false, dynamic: false })
    } else if (ts.isNewExpression(n) && ts.isIdentifier(n.expression) && n.expression.text === 'URL' && n.arguments?.[0] && ts.isStringLiteralLike(n.arguments[0])) {
      const m = /(?:^|\/)node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(n.arguments[0].text)
      if (m) out.push({ spec: m[1], typeOnly: false, dynamic: true })
    }
    n.forEachChild(visit)
  }
  visit(sf)
  return out
}

const usesCache = new Map<string, Use[]>()
const usesOfFile = (file: string): Use[] => {
  let u = usesCache.get(file)
  if (!u) usesCache.set(file, (u = usesOf(file, readFileSync(join(root, file), 'utf8'))))
  return u
}

const builtins = new Set(builtinModules)
const isBuiltin = (spec: string) => spec.startsWith('node:') || builtins.has(spec) || builtins.has(spec.split('/')[0])
const isRelative = (spec: string) => spec.startsWith('./') || spec.startsWith('../')
/** 'a/b' -> 'a', '@s/a/b' -> '@s/a'. */
const packageOf = (spec: string) =>
  spec
    .split('/')
    .slice(0, spec.startsWith('@') ? 2 : 1)
    .join('/')
/** The DefinitelyTyped package that types `name`. */
const typesOf = (name: string) => `@types/${name.startsWith('@') ? name.slice(1).replace('/', '__') : name}`

function resolveRelative(from: string, spec: string): string | undefined {
  const base = posix(relative(root, resolve(root, dirname(from), spec)))
  for (const c of [base, `${base}.ts`, `${base}/index.ts`, base.replace(/\.js$/, '.ts')]) {
    if (existsSync(join(root, c)) && statSync(join(root, c)).isFile()) return c
  }
  return undefined
}

interface Need {
  name: string
  /** 'runtime': a runtime file loads it; 'lazy': a runtime file loads it with import(); 'dev': dev files or types only. */
  kind: 'runtime' | 'lazy' | 'dev'
  where: string
}

/**
 * What a package needs: the bare imports of its files, and the workspaces its relative imports
 * reach. A non-root package carries the root's files it reaches (their imports are its own).
 */
function needsOf(pkg: Pkg): Need[] {
  const needs: Need[] = []
  const seen = new Map<string, boolean>() // file -> visited as runtime
  const queue: { file: string; runtime: boolean }[] = allFiles.filter((f) => ownerOf(f) === pkg).map((f) => ({ file: f, runtime: !pkg.isDev(f) }))
  while (queue.length > 0) {
    const { file, runtime } = queue.shift()!
    if (seen.get(file) === true || (seen.has(file) && !runtime)) continue
    seen.set(file, runtime)
    for (const use of usesOfFile(file)) {
      const kind: Need['kind'] = !runtime || use.typeOnly ? 'dev' : use.dynamic ? 'lazy' : 'runtime'
      if (isRelative(use.spec)) {
        const target = resolveRelative(file, use.spec)
        if (!target) continue
        const owner = ownerOf(target)
        if (owner === pkg) continue
        if (owner.dir === '') {
          // a workspace running the root's files carries them
          if (kind !== 'dev') queue.push({ file: target, runtime: true })
          else if (!seen.has(target)) queue.push({ file: target, runtime: false })
        } else {
          needs.push({ name: owner.json.name, kind, where: file })
        }
      } else if (!isBuiltin(use.spec)) {
        needs.push({ name: packageOf(use.spec), kind, where: file })
      }
    }
  }
  return needs
}

/** The binaries a package provides (from its installed package.json). */
function binsOf(name: string): string[] {
  const file = join(root, 'node_modules', name, 'package.json')
  if (!existsSync(file)) return []
  const json = JSON.parse(readFileSync(file, 'utf8')) as { name: string; bin?: string | Record<string, string> }
  if (!json.bin) return []
  return typeof json.bin === 'string' ? [json.name.replace(/^@[^/]+\//, '')] : Object.keys(json.bin)
}

const tsconfigTypes = (readJson<{ compilerOptions?: { types?: string[] } }>('tsconfig.json').compilerOptions?.types ?? []).map(typesOf)

function problemsOf(pkg: Pkg): string[] {
  const label = pkg.dir || '(root)'
  const deps = { ...pkg.json.dependencies, ...pkg.json.optionalDependencies, ...pkg.json.peerDependencies }
  const dev = pkg.json.devDependencies ?? {}
  const listed = (n: string) => n in deps || n in dev
  const needs = needsOf(pkg)
  const problems: string[] = []
  // one line per package named: its most demanding use (runtime, then lazy, then dev)
  const rank = { runtime: 0, lazy: 1, dev: 2 }
  const strongest = new Map<string, Need>()
  for (const n of needs) {
    const had = strongest.get(n.name)
    if (!had || rank[n.kind] < rank[had.kind]) strongest.set(n.name, n)
  }
  for (const n of [...strongest.values()].sort((a, b) => a.name.localeCompare(b.name))) {
    if (n.name === pkg.json.name) continue
    // The daemon ships compiled (scripts/build.ts): what its runtime imports is in the bundle,
    // a devDependency, except the packages the bundle leaves outside (native, WebAssembly).
    const bundled = pkg.dir === '' && !CLI_EXTERNAL.includes(n.name)
    const ok = n.kind === 'runtime' ? n.name in deps || (bundled && n.name in dev) : listed(n.name) || (n.kind === 'dev' && listed(typesOf(n.name)))
    if (!ok) problems.push(`${label}: ${n.where} uses ${n.name} (${n.kind}), not in ${n.kind === 'runtime' ? 'dependencies' : 'its package.json'}`)
  }
  const runtimeUsed = new Set(needs.filter((n) => n.kind !== 'dev').map((n) => n.name))
  const anyUsed = new Set(needs.map((n) => n.name))
  for (const name of Object.keys(pkg.json.dependencies ?? {})) {
    if (name in dev) problems.push(`${label}: ${name} is in both dependencies and devDependencies`)
    if (!anyUsed.has(name)) problems.push(`${label}: dependency ${name} is used by none of its files`)
    else if (!runtimeUsed.has(name) && !name.startsWith('@types/')) problems.push(`${label}: dependency ${name} is used only by dev files or types: a devDependency`)
  }
  const scripts = Object.values(pkg.json.scripts ?? {}).join(' ')
  const calls = new Set(scripts.split(/[\s;&|()=]+/))
  const usesBuiltins = needs.length > 0 && allFiles.some((f) => ownerOf(f) === pkg && usesOfFile(f).some((u) => isBuiltin(u.spec)))
  for (const name of Object.keys(dev)) {
    const used =
      anyUsed.has(name) ||
      [...anyUsed].some((u) => typesOf(u) === name) ||
      (name === '@types/node' && (usesBuiltins || (pkg.dir === '' && tsconfigTypes.includes(name)))) ||
      binsOf(name).some((b) => calls.has(b))
    if (!used) problems.push(`${label}: devDependency ${name} is used by none of its files or scripts`)
  }
  return problems
}

/** The packages a package's install pulls in: its dependencies, and those of the workspaces among them. */
function installedBy(pkg: Pkg, acc = new Set<string>()): Set<string> {
  for (const name of Object.keys({ ...pkg.json.dependencies, ...pkg.json.optionalDependencies, ...pkg.json.peerDependencies })) {
    if (acc.has(name)) continue
    acc.add(name)
    const ws = byName.get(name)
    if (ws) installedBy(ws, acc)
  }
  return acc
}

describe('packages install what they use (issue 34, item 8)', () => {
  it('the checker sees imports, type-only imports, lazy imports and path loads', () => {
    const sample = [
      `import a from 'a'`,
      `import type { B } from '@s/b/sub'`,
      `import { type C } from 'c'`,
      `export * from 'd'`,
      `const e = await import('e')`,
      `type F = import('f').F`,
      `const g = new URL('../node_modules/g/lib/x.js', import.meta.url)`,
      `import fs from 'node:fs'`,
    ].join('\n')
    expect(usesOf('x.ts', sample).map((u) => `${u.spec}${u.typeOnly ? ':type' : ''}${u.dynamic ? ':lazy' : ''}`)).toEqual([
      'a',
      '@s/b/sub:type',
      'c',
      'd',
      'e:lazy',
      'f:type',
      'g:lazy',
      'node:fs',
    ])
    expect(packageOf('@s/b/sub')).toBe('@s/b')
    expect(typesOf('@s/b')).toBe('@types/s__b')
  })

  it('the root lists the workspaces: the library, the push node and the hub', () => {
    expect(workspaceDirs).toEqual(expect.arrayContaining(['sync', 'node/push-node', 'node/hub']))
    for (const dir of workspaceDirs) expect(existsSync(join(root, dir, 'package.json'))).toBe(true)
  })

  for (const pkg of packages) {
    it(`${pkg.dir || 'the root (daemon and CLI)'}: every bare import is listed, and nothing listed is unused`, () => {
      expect(allFiles.filter((f) => ownerOf(f) === pkg).length).toBeGreaterThan(BENCH_PACKAGES.includes(pkg.dir) ? 0 : 3)
      expect(problemsOf(pkg)).toEqual([])
    })
  }

  it('the daemon does not depend on pg or web-push, directly or through a workspace', () => {
    const installed = installedBy(packages[0])
    expect(installed.has('pg')).toBe(false)
    expect(installed.has('web-push')).toBe(false)
    expect(installed.has(byName.get('@svc/push-node')!.json.name)).toBe(false)
    expect(installed.has(byName.get('@svc/hub')!.json.name)).toBe(false)
    // ...while the push node, which the daemon's CLI loads lazily, does, and the hub has pg
    expect([...installedBy(byName.get('@svc/push-node')!)]).toEqual(expect.arrayContaining(['pg', 'web-push']))
    expect([...installedBy(byName.get('@svc/hub')!)]).toEqual(expect.arrayContaining(['pg']))
  })

  it('no runtime file of the daemon imports the push node or the hub statically', () => {
    const apart = new Set([byName.get('@svc/push-node')!, byName.get('@svc/hub')!])
    const offenders: string[] = []
    for (const f of allFiles.filter((x) => ownerOf(x) === packages[0] && !packages[0].isDev(x))) {
      for (const u of usesOfFile(f)) {
        if (!isRelative(u.spec) || u.typeOnly || u.dynamic) continue
        const target = resolveRelative(f, u.spec)
        if (target && apart.has(ownerOf(target))) offenders.push(`${f} imports ${u.spec}`)
      }
    }
    expect(offenders).toEqual([])
  })

  it('the library can be bundled on its own: exports name existing files, sideEffects names every module with top-level effects', () => {
    const lib = byName.get('@svc/sync')!
    expect(lib.json.private).not.toBe(true)
    const exp = lib.json.exports as Record<string, unknown>
    expect(exp['.']).toBeDefined()
    const targets = JSON.stringify(exp).match(/"\.\/[^"*]+"/g) ?? []
    for (const t of targets) expect(existsSync(join(root, 'sync', JSON.parse(t) as string)), t).toBe(true)
    // A bundler may drop a module none of whose exports is used unless sideEffects names it: every
    // module that runs a statement when loaded (other than declarations, and loops that only fill
    // a table the module declares) must be named there.
    expect(Array.isArray(lib.json.sideEffects)).toBe(true)
    const declared = new Set((lib.json.sideEffects as string[]).map((f) => posix(join('sync', f))))
    const effectful: string[] = []
    for (const f of allFiles.filter((x) => ownerOf(x) === lib && !lib.isDev(x))) {
      const sf = ts.createSourceFile(f, readFileSync(join(root, f), 'utf8'), ts.ScriptTarget.Latest, true)
      const locals = new Set(sf.statements.filter(ts.isVariableStatement).flatMap((v) => v.declarationList.declarations.map((d) => d.name.getText())))
      const fillsLocal = (s: ts.Statement) =>
        (ts.isForStatement(s) || ts.isForOfStatement(s)) &&
        ts.isExpressionStatement(s.statement) &&
        ts.isBinaryExpression(s.statement.expression) &&
        ts.isElementAccessExpression(s.statement.expression.left) &&
        locals.has(s.statement.expression.left.expression.getText())
      const effects = sf.statements.some(
        (s) =>
          ts.isExpressionStatement(s) ||
          ts.isIfStatement(s) ||
          ts.isTryStatement(s) ||
          ts.isWhileStatement(s) ||
          ((ts.isForStatement(s) || ts.isForOfStatement(s) || ts.isForInStatement(s)) && !fillsLocal(s)) ||
          (ts.isImportDeclaration(s) && !s.importClause),
      )
      if (effects) effectful.push(f)
    }
    expect(effectful.sort()).toEqual([...declared].sort())
  })
})
