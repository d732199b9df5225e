/**
 * Bundles the web app (app/main.tsx, Preact) with esbuild into dist/app/: one script, one
 * stylesheet and index.html, all served by the daemon from its own origin (server/http/app-static.ts).
 * Nothing is fetched at run time: no CDN, no font, no analytics. Prints the sizes, raw and
 * gzipped, as JSON. `npm run build:app` runs it; the daemon builds it on first serve when
 * dist/app is missing in a development clone, and the app's tests call `buildApp` themselves.
 */
import { build } from 'esbuild'
import { copyFile, mkdir, readFile } from 'node:fs/promises'
import { gzipSync } from 'node:zlib'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

const root = join(dirname(fileURLToPath(import.meta.url)), '..')
export const APP_DIST = join(root, 'dist', 'app')

export interface AppBundleSize {
  bytes: number
  gzipBytes: number
  files: Record<string, { bytes: number; gzipBytes: number }>
}

/** Builds the app; resolves to its size (every file the first screen loads). */
export async function buildWebApp(): Promise<AppBundleSize> {
  await mkdir(APP_DIST, { recursive: true })
  await build({
    entryPoints: { app: join(root, 'app', 'main.tsx') },
    outdir: APP_DIST,
    bundle: true,
    format: 'esm',
    platform: 'browser',
    target: ['es2022'],
    minify: true,
    sourcemap: false,
    jsx: 'automatic',
    jsxImportSource: 'preact',
    define: { 'process.env.NODE_ENV': '"production"' },
    logLevel: 'warning',
    legalComments: 'none',
  })
  await copyFile(join(root, 'app', 'index.html'), join(APP_DIST, 'index.html'))
  const files: AppBundleSize['files'] = {}
  let bytes = 0
  let gzipBytes = 0
  for (const f of ['index.html', 'app.js', 'app.css']) {
    const body = await readFile(join(APP_DIST, f)).catch(() => Buffer.alloc(0))
    const gz = gzipSync(body, { level: 9 }).length
    files[f] = { bytes: body.length, gzipBytes: gz }
    bytes += body.length
    gzipBytes += gz
  }
  return { bytes, gzipBytes, files }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  console.log(JSON.stringify(await buildWebApp()))
}
