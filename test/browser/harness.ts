/**
 * What every browser test needs: the pages built (scripts/build-browser.ts), a static server
 * for them on loopback, and headless Chromium from the system (playwright-core drives it; it
 * never downloads a browser).
 */
import { createServer, type Server } from 'node:http'
import { readFile } from 'node:fs/promises'
import { join, normalize } from 'node:path'
import { chromium, type Browser, type Page } from 'playwright-core'
import { buildBrowser, buildBrowserTests } from '../../scripts/build-browser.ts'

/** Debian's chromium unless SVC_CHROMIUM names another build. */
export const CHROMIUM = process.env.SVC_CHROMIUM || '/usr/bin/chromium'

const TYPES: Record<string, string> = { '.html': 'text/html', '.js': 'text/javascript', '.map': 'application/json' }

/** Serves `dir` on 127.0.0.1 at a free port; only files inside it, nothing else. */
export async function serveStatic(dir: string): Promise<{ url: string; close: () => Promise<void> }> {
  const server: Server = createServer(async (req, res) => {
    const path = normalize(decodeURIComponent(new URL(req.url ?? '/', 'http://x').pathname)).replace(/^(\.\.[/\\])+/, '')
    const file = join(dir, path === '/' ? 'index.html' : path)
    if (!file.startsWith(dir)) return void res.writeHead(403).end()
    try {
      const body = await readFile(file)
      res.writeHead(200, { 'content-type': TYPES[file.slice(file.lastIndexOf('.'))] ?? 'application/octet-stream', 'cache-control': 'no-store' }).end(body)
    } catch {
      res.writeHead(404).end()
    }
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as { port: number }
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  }
}

/**
 * Headless Chromium. Chromium refuses to run its sandbox as root (CI and these machines run
 * as root, inside a network namespace), so there it runs without one: the pages it opens are
 * our own, served from loopback.
 */
export function launchChromium(args: readonly string[] = []): Promise<Browser> {
  const root = process.getuid?.() === 0
  return chromium.launch({ executablePath: CHROMIUM, headless: true, args: [...(root ? ['--no-sandbox'] : []), ...args], timeout: 60_000 })
}

/** Builds the library and the test pages, serves them, and opens a browser (`chromiumArgs`: more command-line flags). */
export async function browserFixture(o: { chromiumArgs?: readonly string[] } = {}) {
  const bundle = await buildBrowser()
  const dir = await buildBrowserTests()
  const server = await serveStatic(dir)
  const browser = await launchChromium(o.chromiumArgs)
  return {
    bundle,
    server,
    browser,
    /** A page with its console errors kept (a test failure prints them). */
    async page(path: string): Promise<{ page: Page; errors: string[] }> {
      const page = await browser.newPage()
      const errors: string[] = []
      page.on('pageerror', (e) => errors.push(String(e)))
      page.on('console', (m) => m.type() === 'error' && errors.push(m.text()))
      await page.goto(`${server.url}/${path}`)
      return { page, errors }
    },
    async close() {
      await browser.close().catch(() => undefined)
      await server.close()
    },
  }
}
