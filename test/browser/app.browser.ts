import { afterAll, beforeAll, beforeEach, describe, expect, it, onTestFailed } from 'vitest'
import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import sharp from 'sharp'
import type { Browser, BrowserContext, Page } from 'playwright-core'
import { buildWebApp } from '../../scripts/build-app.ts'
import { api, ok, startDaemon, stopDaemon, type Daemon } from '../e2e/daemons.ts'
import { launchChromium } from './harness.ts'

/*
 * Issue 37: the web app, end to end. Two daemons of two accounts (real `svc serve` processes,
 * P2P on loopback), one Chromium context each, driven only through the UI: first run, sharing,
 * a document typed by both at once, chat with a mention, an image, a filtered task table,
 * search, and removal. Each main screen is checked with axe-core and photographed into
 * docs/app/ (docs/app.md shows them), so the pictures never go stale.
 */
const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..')
const SHOTS = join(ROOT, 'docs', 'app')
const AXE = readFile(new URL('../../node_modules/axe-core/axe.min.js', import.meta.url), 'utf8')

interface Side {
  d: Daemon
  context: BrowserContext
  page: Page
  errors: string[]
  accountId: string
}

let browser: Browser
let a: Side
let b: Side
const dirs: string[] = []
let spaceId = ''

async function side(name: string): Promise<Side> {
  const dir = await mkdtemp(join(tmpdir(), `svc-app-${name}-`))
  dirs.push(dir)
  const d = await startDaemon(dir, { mdns: false })
  const context = await browser.newContext({ viewport: { width: 1280, height: 860 } })
  await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: d.url })
  const page = await context.newPage()
  const errors: string[] = []
  page.on('pageerror', (e) => errors.push(String(e)))
  // Script errors and errors the app logs; a refused or failed request is the app's to show, not an error of the page.
  page.on('console', (m) => m.type() === 'error' && !m.text().startsWith('Failed to load resource') && errors.push(m.text()))
  page.on('dialog', (dialog) => void dialog.accept())
  await page.goto(d.url)
  return { d, context, page, errors, accountId: '' }
}

/** axe-core's serious and critical violations on the page as it is now. */
async function axe(page: Page): Promise<string[]> {
  // Evaluated through the DevTools protocol, which the app's CSP does not govern.
  await page.evaluate(await AXE)
  const result = await page.evaluate(async () => {
    const run = (globalThis as any).axe.run as (ctx: unknown, opts: unknown) => Promise<{ violations: Array<{ id: string; impact: string; nodes: unknown[] }> }>
    return (await run(document, { runOnly: ['wcag2a', 'wcag2aa', 'best-practice'] })).violations
  })
  return result.filter((v) => v.impact === 'serious' || v.impact === 'critical').map((v) => `${v.id} (${v.nodes.length})`)
}

async function screen(page: Page, name: string): Promise<void> {
  expect(await axe(page), `axe on ${name}`).toEqual([])
  await page.screenshot({ path: join(SHOTS, `${name}.png`) })
}

async function firstRun(s: Side, name: string): Promise<void> {
  await s.page.getByRole('button', { name: 'Create an account' }).click()
  await expect.poll(() => s.page.getByTestId('mnemonic').textContent()).toMatch(/^(\w+ ){11,23}\w+$/)
  await s.page.getByLabel('Your name, as the people you share with will see it').fill(name)
  const go = s.page.getByRole('button', { name: 'Continue' })
  expect(await go.isDisabled()).toBe(true)
  await s.page.getByLabel('I have saved my recovery phrase').check()
  await go.click()
  await s.page.getByRole('dialog').getByRole('button', { name: 'Skip the tour' }).click()
  s.accountId = (await ok(s.d, 'GET', '/v1/auth')).accountId
}

/** Opens a section of the shared space the way a user does: the space in the menu, then its tab. */
const openSpace = async (s: Side, tab: string) => {
  await s.page.locator(`a[data-space="Team"]`).click()
  await s.page.getByRole('navigation', { name: 'Space sections' }).getByRole('link', { name: tab }).click()
}

beforeAll(async () => {
  await buildWebApp()
  browser = await launchChromium()
  ;[a, b] = await Promise.all([side('a'), side('b')])
}, 180_000)

afterAll(async () => {
  await browser?.close().catch(() => undefined)
  await Promise.all([a, b].filter(Boolean).map((s) => stopDaemon(s.d)))
  await Promise.all(dirs.map((d) => rm(d, { recursive: true, force: true })))
})

// A failure says what each side's screen showed, and what its page logged.
beforeEach(() => {
  onTestFailed(async () => {
    for (const [name, s] of [
      ['A', a],
      ['B', b],
    ] as const) {
      const shown = await s?.page
        .locator('body')
        .innerText({ timeout: 2000 })
        .catch(() => '(no page)')
      console.error(`--- ${name}'s screen:\n${shown}\n--- ${name}'s page errors: ${JSON.stringify(s?.errors)}`)
    }
  })
})

describe('the web app, two accounts', () => {
  it('first run: an account is created, its phrase shown once and confirmed, then a tour', async () => {
    await a.page.getByRole('heading', { name: 'Welcome to svc' }).waitFor()
    await screen(a.page, 'first-run')
    await firstRun(a, 'Ada')
    await firstRun(b, 'Bea')
    expect(a.accountId).not.toBe(b.accountId)
    // Meeting on the LAN is mDNS's job; here B is given A's address, as `svc peers add` would.
    const p = await ok(a.d, 'GET', '/v1/debug/p2p')
    const listen = (p.listen as string[]).find((x) => x.includes('/127.0.0.1/tcp/') && !x.includes('/ws'))!
    const added = await api(b.d, 'POST', '/v1/peers', { multiaddr: listen.includes('/p2p/') ? listen : `${listen}/p2p/${p.peerId}` })
    expect(added.status, JSON.stringify(added.json)).toBeLessThan(300)
  }, 120_000)

  it('A creates a space and invites B; B joins through the UI once A accepts', async () => {
    await a.page.getByLabel('New space').fill('Team')
    await a.page.getByRole('button', { name: 'Create', exact: true }).click()
    await a.page.locator('a[data-space="Team"][aria-current="page"]').waitFor()
    spaceId = (await ok<Array<{ id: string; name: string }>>(a.d, 'GET', '/v1/spaces')).find((x) => x.name === 'Team')!.id
    await openSpace(a, 'Members')
    await a.page.getByLabel('Permission').selectOption('writer')
    await a.page.getByRole('button', { name: 'Create invite' }).click()
    const token = await a.page.getByTestId('token').inputValue()
    expect(token.length).toBeGreaterThan(20)

    await b.page.getByLabel('Join with a token').fill(token)
    await b.page.getByRole('button', { name: 'Join', exact: true }).click()
    await a.page.getByRole('button', { name: 'Accept' }).click({ timeout: 60_000 })
    await screen(a.page, 'members')
    await b.page.waitForURL(/#\/s\/[^/]+\/members/)
    await expect.poll(async () => (await ok(b.d, 'GET', `/v1/spaces/${spaceId}`)).ownRole, { timeout: 60_000 }).toBe('writer')
    await b.page.locator('tr[data-member="Ada"]').waitFor({ timeout: 60_000 })
  }, 180_000)
})

describe('the web app, working together', () => {
  it('both type into the same paragraph at once: every keystroke kept, each sees the other’s cursor', async () => {
    await openSpace(a, 'Documents')
    await a.page.getByPlaceholder('New document title').fill('Plan')
    await a.page.getByRole('button', { name: 'New document' }).click()
    const areaA = a.page.locator('textarea.block-text').first()
    await areaA.click({ timeout: 30_000 })
    await a.page.keyboard.type('Hello team.', { delay: 20 })
    await openSpace(b, 'Documents')
    await b.page.getByRole('navigation', { name: 'Documents' }).getByRole('link', { name: 'Plan' }).click({ timeout: 60_000 })
    const areaB = b.page.locator('textarea.block-text').first()
    await expect.poll(() => areaB.inputValue(), { timeout: 60_000 }).toBe('Hello team.')

    await areaA.click()
    await areaA.evaluate((el: HTMLTextAreaElement) => el.setSelectionRange(el.value.length, el.value.length))
    await areaB.click()
    await areaB.evaluate((el: HTMLTextAreaElement) => el.setSelectionRange(0, 0))
    await Promise.all([a.page.keyboard.type(' alpha bravo charlie', { delay: 40 }), b.page.keyboard.type('Zulu yankee xray ', { delay: 40 })])
    const both = 'Zulu yankee xray Hello team. alpha bravo charlie'
    await expect.poll(() => areaA.inputValue(), { timeout: 30_000 }).toBe(both)
    await expect.poll(() => areaB.inputValue(), { timeout: 30_000 }).toBe(both)
    // Each sees the other's caret where the other stopped typing.
    const before = (p: Page, name: string) =>
      p.locator(`.caret-mirror:has([data-name="${name}"])`).evaluate((mirror, who) => {
        let text = ''
        for (const n of mirror.childNodes) {
          if ((n as Element).getAttribute?.('data-name') === who) return text
          text += n.textContent
        }
        return null
      }, name)
    await expect.poll(() => before(a.page, 'Bea'), { timeout: 30_000 }).toBe('Zulu yankee xray ')
    await expect.poll(() => before(b.page, 'Ada'), { timeout: 30_000 }).toBe(both)
    // And what the other selects.
    await areaB.evaluate((el: HTMLTextAreaElement) => {
      el.focus()
      el.setSelectionRange(0, 4)
    })
    await expect.poll(() => a.page.locator('.remote-selection').first().textContent(), { timeout: 30_000 }).toBe('Zulu')
    await screen(a.page, 'document')
  }, 180_000)

  it('A mentions B in the chat: B’s unread and mention badges appear, and clear when B reads', async () => {
    await openSpace(a, 'Chat')
    await a.page.getByLabel('Message', { exact: true }).click({ timeout: 30_000 })
    await a.page.keyboard.type('@Be')
    await a.page.getByRole('option', { name: 'Bea' }).waitFor({ timeout: 30_000 })
    await a.page.keyboard.press('Enter')
    await a.page.keyboard.type('please review the plan')
    await a.page.keyboard.press('Enter')
    await a.page.getByText('please review the plan').waitFor()

    await b.page.getByTestId('tab-mentions').waitFor({ timeout: 60_000 })
    expect(await b.page.getByTestId('tab-unread').textContent()).toBe('1')
    await openSpace(b, 'Chat')
    await b.page.locator('.mention', { hasText: '@Bea' }).waitFor({ timeout: 30_000 })
    await expect.poll(() => b.page.getByTestId('tab-mentions').count(), { timeout: 30_000 }).toBe(0)
    await expect.poll(() => b.page.getByTestId('tab-unread').count(), { timeout: 30_000 }).toBe(0)
    await screen(b.page, 'chat')
  }, 180_000)

  it('A attaches an image: B sees its preview', async () => {
    const png = await sharp({ create: { width: 640, height: 400, channels: 3, background: { r: 200, g: 40, b: 90 } } })
      .png()
      .toBuffer()
    await a.page.locator('.composer input[type=file]').setInputFiles({ name: 'sunset.png', mimeType: 'image/png', buffer: png })
    await a.page.getByTestId('image-preview').first().waitFor({ timeout: 60_000 })
    const preview = b.page.getByTestId('image-preview').first()
    await preview.waitFor({ timeout: 90_000 })
    expect(await preview.evaluate((img: HTMLImageElement) => img.naturalWidth)).toBe(512)
  }, 180_000)

  it('a task table filtered on done = false drops a row when B ticks it', async () => {
    await openSpace(a, 'Tables')
    await a.page.getByLabel('New type').fill('Task')
    await a.page.getByRole('button', { name: 'Create type' }).click()
    await a.page.getByLabel('Property', { exact: true }).fill('Done', { timeout: 30_000 })
    await a.page.getByLabel('Kind', { exact: true }).selectOption('boolean')
    await a.page.getByRole('button', { name: 'Add property' }).click()
    await a.page.getByRole('columnheader', { name: 'Done' }).waitFor({ timeout: 30_000 })
    for (const n of ['Write spec', 'Ship it']) {
      await a.page.getByLabel('New row').fill(n)
      await a.page.getByRole('button', { name: 'Add row' }).click()
      await a.page.locator(`tr[data-row="${n}"]`).waitFor({ timeout: 30_000 })
    }
    await a.page.getByLabel('Filter', { exact: true }).selectOption({ label: 'Done' })
    await a.page.getByLabel('Value', { exact: true }).fill('false')
    await a.page.getByRole('button', { name: 'Add filter' }).click()
    await expect.poll(() => a.page.locator('tbody tr[data-row]').count(), { timeout: 30_000 }).toBe(2)

    await openSpace(b, 'Tables')
    await b.page.getByRole('tab', { name: 'Task' }).click({ timeout: 60_000 })
    const box = b.page.getByLabel('Done of Write spec')
    await box.check({ timeout: 60_000 })
    await expect.poll(() => a.page.locator('tr[data-row="Write spec"]').count(), { timeout: 30_000 }).toBe(0)
    await a.page.getByText('“Write spec” left the view').waitFor()
    expect(await a.page.locator('tr[data-row="Ship it"]').count()).toBe(1)
    // Types change from the UI too.
    const schema = a.page.locator('.schema-panel')
    await schema.getByText('Type and properties').click()
    await schema.getByLabel('Type name').fill('Tasks')
    await schema.getByRole('button', { name: 'Rename' }).first().click()
    await a.page.getByRole('tab', { name: 'Tasks' }).waitFor({ timeout: 10_000 })
    await screen(a.page, 'table')
  }, 180_000)

  it('search finds a word that B typed', async () => {
    await openSpace(a, 'Search')
    await a.page.getByLabel('Search', { exact: true }).fill('yankee')
    await expect
      .poll(
        async () => {
          await a.page.getByRole('button', { name: 'Search', exact: true }).click()
          await new Promise((r) => setTimeout(r, 300))
          return a.page.getByTestId('search-hit').count()
        },
        { timeout: 60_000 },
      )
      .toBeGreaterThan(0)
    expect(await a.page.getByTestId('search-hit').first().textContent()).toContain('yankee')
    await screen(a.page, 'search')
  }, 120_000)

  it('sync and health, and the app at phone width', async () => {
    await a.page.getByRole('link', { name: 'Sync and health' }).click()
    await a.page.getByRole('heading', { name: 'Sync and health' }).waitFor()
    await screen(a.page, 'sync')
    await b.page.setViewportSize({ width: 390, height: 800 })
    await b.page.getByRole('button', { name: 'Menu' }).click()
    await b.page.getByRole('navigation', { name: 'Spaces' }).waitFor()
    await screen(b.page, 'phone-menu')
    await b.page.locator('a[data-space="Team"]').click()
    await b.page.getByRole('navigation', { name: 'Space sections' }).waitFor()
    await screen(b.page, 'phone-space')
    await b.page.setViewportSize({ width: 1280, height: 860 })
  }, 120_000)

  it('A removes B: B’s app shows the removal, and B sees nothing written after it', async () => {
    await openSpace(a, 'Members')
    await a.page.locator('tr[data-member="Bea"]').getByRole('button', { name: 'Remove' }).click({ timeout: 30_000 })
    await b.page.getByTestId('removed-banner').waitFor({ timeout: 60_000 })

    await openSpace(a, 'Tables')
    await a.page.getByLabel('New row').fill('After removal', { timeout: 30_000 })
    await a.page.getByRole('button', { name: 'Add row' }).click()
    await a.page.locator('tr[data-row="After removal"]').waitFor({ timeout: 30_000 })
    await openSpace(b, 'Tables')
    await b.page.getByRole('tab', { name: 'Task' }).click({ timeout: 30_000 })
    await b.page.locator('tr[data-row="Ship it"]').waitFor({ timeout: 30_000 })
    // A's sync pushes within a second; give it several before concluding it never arrives.
    await new Promise((r) => setTimeout(r, 5000))
    expect(await b.page.locator('tr[data-row="After removal"]').count()).toBe(0)
  }, 180_000)

  it('a daemon that stops answering is shown as unreachable', async () => {
    expect(a.errors).toEqual([])
    expect(b.errors).toEqual([])
    await stopDaemon(a.d)
    await a.page.getByText('The daemon is unreachable').waitFor({ timeout: 30_000 })
  }, 60_000)
})
