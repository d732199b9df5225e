import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { BROWSER_DIST, buildBrowser } from '../../scripts/build-browser.ts'
import { REPO } from '../server/process.ts'
import { ok, startDaemon, stopDaemon, until, type Daemon } from '../e2e/daemons.ts'
import { launchChromium, serveStatic } from './harness.ts'
import { wsAddress } from './daemon.ts'

/**
 * docs/browser.md "Embed it", run as written (issue 39, item 9: it failed with `spaces []` and a
 * TypeError until it waited after `dial`). The page is the doc's `<script type="module">` block,
 * read from the doc, next to the library bundle as `./svc.js`; the only edits are the daemon's
 * real WebSocket address for the placeholder one, and the two names the doc leaves to the
 * reader, `mnemonic` and `render`, defined before it (render keeps what it is given).
 */

const PLACEHOLDER = "'/ip4/127.0.0.1/tcp/41234/ws/p2p/12D3KooW...'"

function documentedScript(): string {
  const doc = readFileSync(join(REPO, 'docs', 'browser.md'), 'utf8')
  const at = doc.indexOf('## Embed it')
  const m = at < 0 ? null : /```html[^\n]*\n([\s\S]*?)```/.exec(doc.slice(at))
  if (!m) throw new Error('docs/browser.md has no html block under "Embed it"')
  if (!m[1].includes(PLACEHOLDER)) throw new Error(`the embed example no longer dials ${PLACEHOLDER}: update this test`)
  return m[1]
}

let d: Daemon
let dir: string
let close: (() => Promise<void>) | undefined
let browser: Awaited<ReturnType<typeof launchChromium>> | undefined
let page: Page
const errors: string[] = []

beforeAll(async () => {
  await buildBrowser()
  dir = mkdtempSync(join(tmpdir(), 'svc-embed-'))
  d = await startDaemon(join(dir, 'daemon'), { mdns: false })
}, 180_000)

afterAll(async () => {
  await browser?.close().catch(() => undefined)
  await close?.()
  if (d) await stopDaemon(d, 'SIGKILL')
  if (dir) rmSync(dir, { recursive: true, force: true })
})

describe('docs/browser.md "Embed it" (real Chromium, a real daemon)', () => {
  it('the example restores the account, syncs, writes and renders a live query', async () => {
    const { mnemonic } = await ok(d, 'POST', '/v1/auth', {})
    const spaceId = (await ok(d, 'POST', '/v1/spaces', { name: 'Doc' })).id as string
    const site = join(dir, 'site')
    const script = documentedScript().replace(PLACEHOLDER, JSON.stringify(await wsAddress(d)))
    mkdirSync(site)
    copyFileSync(join(BROWSER_DIST, 'svc.js'), join(site, 'svc.js'))
    writeFileSync(
      join(site, 'index.html'),
      `<!doctype html><meta charset="utf-8"><title>embed</title><link rel="icon" href="data:,">\n<script>window.mnemonic = ${JSON.stringify(mnemonic)}; window.rendered = []; window.render = (x) => window.rendered.push(x)</script>\n${script}`,
    )
    const server = await serveStatic(site)
    close = server.close
    browser = await launchChromium()
    page = await browser.newPage()
    page.on('pageerror', (e) => errors.push(String(e)))
    const thrown = new Promise<void>((resolve) => page.on('pageerror', () => resolve()))
    page.on('console', (m) => m.type() === 'error' && errors.push(m.text()))
    await page.goto(`${server.url}/index.html`)
    // The script's last line renders the live query's snapshot: the record it wrote. An error
    // thrown by the script (the `TypeError` of the example without its wait) ends the wait.
    const rendered = page.waitForFunction(() => (window as any).rendered.some((r: any) => Array.isArray(r) && r.some((x: any) => x.id === 't1' && x.text === 'milk')), undefined, {
      timeout: 90_000,
    })
    await Promise.race([rendered, thrown]).catch((e: unknown) => errors.push(String(e)))
    expect(errors, `page errors; daemon stderr:\n${d.stderr().slice(-3000)}`).toEqual([])
    await rendered
    // What the page wrote reaches the daemon: the object named 'Note' in the space it listed.
    await until("the page's object on the daemon", async () => {
      const q = await ok(d, 'POST', `/v1/spaces/${spaceId}/objects/query`, { filter: { 'core.name': 'Note' } })
      return q.records.length === 1
    })
  }, 240_000)
})
