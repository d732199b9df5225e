import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Browser } from 'playwright-core'
import { bootApp, listen, newObject, newSpace, type Booted } from '../routes/helpers.ts'
import { launchChromium } from './harness.ts'

/*
 * Issue 33 in a real browser: a member's SVG, opened from the owner's daemon, ran its script on
 * the API's origin and read the space list (its fetch went out `Sec-Fetch-Site: same-origin`
 * with no `Origin`). test/security/files-active-content.test.ts checks the headers; this checks
 * what Chromium does with them.
 */
let a: Booted
let base: string
let spaceId: string
let objectId: string
let browser: Browser

beforeAll(async () => {
  a = await bootApp()
  spaceId = await newSpace(a.app, 'Secret space')
  objectId = await newObject(a.app, spaceId)
  base = await listen(a.app)
  browser = await launchChromium()
}, 120_000)
afterAll(async () => {
  await browser?.close()
  await a?.close()
})

const attach = async (body: string, name: string, mime: string): Promise<string> =>
  (
    await (
      await fetch(`${base}/v1/spaces/${spaceId}/objects/${objectId}/files?name=${name}&mime=${encodeURIComponent(mime)}`, {
        method: 'POST',
        headers: { 'content-type': 'application/octet-stream' },
        body,
      })
    ).json()
  ).fileId
const content = (fileId: string) => `${base}/v1/spaces/${spaceId}/files/${fileId}/content`

/** The space list the script tries to steal, once it arrives (or null after a second). */
const LOOT = "fetch('/v1/spaces').then(r => r.text()).then(t => document.documentElement.setAttribute('data-loot', t))"

describe('a file opened in a tab', () => {
  it('an SVG with script is downloaded, not rendered: its script never runs', async () => {
    const id = await attach(`<svg xmlns="http://www.w3.org/2000/svg"><script>${LOOT}</script></svg>`, 'cat.svg', 'image/svg+xml')
    const page = await browser.newPage()
    const downloaded = page.waitForEvent('download', { timeout: 10_000 }).then((d) => d.suggestedFilename())
    await page.goto(content(id)).catch(() => undefined)
    expect(await downloaded).toBe('cat.svg')
    await new Promise((r) => setTimeout(r, 1000))
    expect(await page.evaluate(() => document.documentElement?.getAttribute('data-loot') ?? null)).toBeNull()
    await page.close()
  })

  it('a document the API does render gets an opaque origin and may fetch nothing', async () => {
    const id = await attach('plain words <script>not run</script>', 'note.txt', 'text/plain')
    const page = await browser.newPage()
    await page.goto(content(id))
    expect(await page.evaluate(() => document.body.innerText)).toBe('plain words <script>not run</script>')
    expect(await page.evaluate(() => self.origin)).toBe('null')
    expect(
      await page.evaluate(
        async (u) =>
          fetch(u).then(
            (r) => `status ${r.status}`,
            (e: unknown) => (e instanceof Error ? e.name : String(e)),
          ),
        `${base}/v1/spaces`,
      ),
    ).toBe('TypeError')
    await page.close()
  })

  it('an image still displays', async () => {
    const png = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAIAAAACCAIAAAD91JpzAAAAEklEQVR4nGP4z8DAwMDAwMAAAAX/Af+9eQYAAAAASUVORK5CYII=', 'base64')
    const res = await fetch(`${base}/v1/spaces/${spaceId}/objects/${objectId}/files?name=dot.png&mime=image/png`, {
      method: 'POST',
      headers: { 'content-type': 'application/octet-stream' },
      body: png,
    })
    const page = await browser.newPage()
    await page.goto(content((await res.json()).fileId))
    expect(await page.evaluate(() => ({ w: document.images[0]?.naturalWidth, h: document.images[0]?.naturalHeight }))).toEqual({ w: 2, h: 2 })
    await page.close()
  })
})
