/**
 * Bundles the browser entry of the sync library (sync/browser/index.ts) with esbuild into
 * dist/browser/svc.js (ESM, minified), and prints its size, minified and gzipped, as JSON.
 * `--test` also builds the pages of the browser suite (test/browser/page/) into
 * dist/browser-test/. `npm run build:browser` runs it; the browser suite and the benchmark
 * call `buildBrowser` themselves.
 *
 * The bundle is built for `platform: 'browser'`: a `node:*` import or a Node builtin anywhere
 * in the graph fails the build, which is how the bundle proves it carries no Node-only code.
 */
import { build, type BuildOptions } from 'esbuild'
import { copyFile, mkdir, readFile } from 'node:fs/promises'
import { gzipSync } from 'node:zlib'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

const root = join(dirname(fileURLToPath(import.meta.url)), '..')
export const BROWSER_DIST = join(root, 'dist', 'browser')
export const BROWSER_TEST_DIST = join(root, 'dist', 'browser-test')

const common: BuildOptions = {
  bundle: true,
  format: 'esm',
  platform: 'browser',
  // Chromium 120+ / current Firefox and Safari: top-level await, class fields, bigint.
  target: ['es2022'],
  minify: true,
  sourcemap: 'linked',
  // Shipped builds of dependencies, as the daemon loads them (vitest.config.ts says why).
  define: { 'process.env.NODE_ENV': '"production"' },
  logLevel: 'warning',
  legalComments: 'none',
}

export interface BundleSize {
  file: string
  bytes: number
  gzipBytes: number
}

async function sizeOf(file: string): Promise<BundleSize> {
  const bytes = await readFile(file)
  return { file: file.slice(root.length + 1), bytes: bytes.length, gzipBytes: gzipSync(bytes, { level: 9 }).length }
}

/** The library bundle; resolves to its size. */
export async function buildBrowser(): Promise<BundleSize> {
  const outfile = join(BROWSER_DIST, 'svc.js')
  await build({ ...common, entryPoints: [join(root, 'sync', 'browser', 'index.ts')], outfile })
  return sizeOf(outfile)
}

/**
 * The browser suite's pages: the app page (the library plus what the tests drive), the
 * benchmark's page (bench/browser.ts) and the storage conformance page, whose `vitest` import is the small runner in
 * test/browser/page/runner.ts (the suite's `expect` is vitest's own, @vitest/expect).
 */
export async function buildBrowserTests(): Promise<string> {
  const page = join(root, 'test', 'browser', 'page')
  await mkdir(BROWSER_TEST_DIST, { recursive: true })
  await build({
    ...common,
    minify: false,
    entryPoints: { app: join(page, 'app.ts'), conformance: join(page, 'conformance.ts'), bench: join(page, 'bench.ts'), verify: join(page, 'verify.ts') },
    outdir: BROWSER_TEST_DIST,
    alias: { vitest: join(page, 'runner.ts') },
  })
  for (const f of ['index.html', 'conformance.html', 'bench.html', 'verify.html']) await copyFile(join(page, f), join(BROWSER_TEST_DIST, f))
  return BROWSER_TEST_DIST
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const size = await buildBrowser()
  if (process.argv.includes('--test')) await buildBrowserTests()
  console.log(JSON.stringify(size))
}
