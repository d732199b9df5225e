/**
 * `npm run build`: compiles what the installed `svc` runs, so that no command compiles
 * TypeScript when it starts (issue 39, item 1). Each step is a function in STEPS; a later step
 * (the web app's, for one) is one more entry there.
 *
 * The CLI step bundles the daemon and its CLI with esbuild into dist/cli/ (ESM, Node 22):
 *
 * - entries: the CLI (main.js, what `server/cli/svc.mjs` loads) and the three files the daemon
 *   starts by path: the agents' sandbox thread, the files' block-crypto thread and the image
 *   variant child (sandbox-thread.js, block-crypto-thread.js, variant-child.js). Their
 *   `new URL('./x.ts', import.meta.url)` becomes `./x.js`: every output file sits in the one
 *   folder, chunks included, so the URL resolves from whichever chunk holds the code.
 * - code splitting: `svc --version` and `svc health` load the small entry and the client; the
 *   daemon (`svc serve`), the hub and the push node are chunks loaded by `await import(...)`
 *   when their command runs.
 * - the library and the workspaces (`@svc/sync`, the hub, the push node) and every pure-JS
 *   dependency are in the bundle, so an install needs only what cannot be bundled: the native
 *   and WebAssembly packages (better-sqlite3, sharp, quickjs-emscripten) and the bundled Node;
 *   pg and web-push stay outside too (the push node's and the hub's, which a daemon install
 *   leaves out, docs/packages.md).
 *
 * Development runs the TypeScript through tsx (`npm run svc`, the tests); only the launcher
 * prefers dist/.
 */
import { APP_DIST, buildWebApp } from './build-app.ts'
import { build, type Plugin } from 'esbuild'
import { readFile, rename, rm } from 'node:fs/promises'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

const root = join(dirname(fileURLToPath(import.meta.url)), '..')
export const CLI_DIST = join(root, 'dist', 'cli')

/** Packages the bundle imports at run time rather than containing. */
export const CLI_EXTERNAL = ['better-sqlite3', 'sharp', 'quickjs-emscripten', 'pg', 'pg-native', 'web-push']

/** The files the daemon starts as threads or processes, by their URL beside the importer. */
const PATH_ENTRIES = {
  'sandbox-thread': 'node/agents/sandbox-thread.ts',
  'block-crypto-thread': 'node/files/block-crypto-thread.ts',
  'variant-child': 'node/files/variant-child.ts',
}

const workerUrls: Plugin = {
  name: 'worker-urls',
  setup(b) {
    b.onLoad({ filter: /[\\/](node)[\\/].*\.ts$/ }, async (args) => {
      const text = await readFile(args.path, 'utf8')
      if (!text.includes('import.meta.url')) return undefined
      const out = text.replace(/new URL\('\.\/([\w-]+)\.ts', import\.meta\.url\)/g, (whole, name: string) => {
        if (!(name in PATH_ENTRIES)) throw new Error(`${args.path}: ${whole} is not an entry of scripts/build.ts`)
        return `new URL('./${name}.js', import.meta.url)`
      })
      return { contents: out, loader: 'ts' }
    })
  },
}

export interface BuiltStep {
  step: string
  ms: number
  out: string
}

/** The daemon and CLI bundle; resolves to where it is. */
export async function buildCli(): Promise<string> {
  // Built beside and swapped in, so a `svc` starting meanwhile finds the old build or none (the
  // launcher then runs the sources), never half of one.
  const next = `${CLI_DIST}.next-${process.pid}`
  const old = `${CLI_DIST}.old-${process.pid}`
  await rm(next, { recursive: true, force: true })
  await build({
    entryPoints: { main: join(root, 'server/cli/main.ts'), ...Object.fromEntries(Object.entries(PATH_ENTRIES).map(([k, v]) => [k, join(root, v)])) },
    outdir: next,
    bundle: true,
    splitting: true,
    format: 'esm',
    platform: 'node',
    target: ['node22'],
    chunkNames: 'chunk-[hash]',
    external: CLI_EXTERNAL,
    // The shipped builds of dependencies, as the daemon loads them (vitest.config.ts says why).
    define: { 'process.env.NODE_ENV': '"production"' },
    // CommonJS dependencies (fastify, pino) call require(): an ESM bundle gets one from Node.
    banner: { js: "import { createRequire as __svcCreateRequire } from 'node:module'; const require = __svcCreateRequire(import.meta.url);" },
    plugins: [workerUrls],
    sourcemap: 'linked',
    legalComments: 'none',
    logLevel: 'warning',
  })
  await rename(CLI_DIST, old).catch((err: unknown) => {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err
  })
  await rename(next, CLI_DIST)
  await rm(old, { recursive: true, force: true })
  return CLI_DIST
}

/** Every build step, in order; `npm run build` runs them all. */
export const STEPS: Record<string, () => Promise<string>> = {
  cli: buildCli,
  app: async () => {
    await buildWebApp()
    return APP_DIST
  },
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const only = process.argv.slice(2).filter((a) => !a.startsWith('-'))
  for (const [step, run] of Object.entries(STEPS)) {
    if (only.length > 0 && !only.includes(step)) continue
    const t0 = performance.now()
    const out = await run()
    const done: BuiltStep = { step, ms: Math.round(performance.now() - t0), out: out.slice(root.length + 1) }
    // stderr: `npm pack` runs this (prepare) and prints the tarball name alone on stdout.
    process.stderr.write(JSON.stringify(done) + '\n')
  }
}
