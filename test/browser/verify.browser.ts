import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Page } from 'playwright-core'
import { browserFixture } from './harness.ts'

/**
 * sync/browser/verify-workers.ts in real Chromium: Ed25519 signatures verified in Web Workers
 * get exactly the page's own answers (valid ones pass, forged ones fail), and a request is
 * answered however the workers end up (stopped mid-flight, none started).
 */
let fx: Awaited<ReturnType<typeof browserFixture>>
let page: Page
let errors: string[]
beforeAll(async () => {
  fx = await browserFixture()
  ;({ page, errors } = await fx.page('verify.html'))
  await page.waitForFunction(() => (window as any).verify !== undefined, undefined, { timeout: 60_000 })
})
afterAll(async () => fx?.close())

type Run = { ready: number; name: string; cases: number; forged: number; wrong: string[]; by: { workers: number; page: number }; after: boolean }
const run = (n: number, o: { workers?: number; closeEarly?: boolean }) => page.evaluate(([n, o]) => (window as any).verify.run(n, o), [n, o] as const) as Promise<Run>

describe('verifying signatures in Web Workers (real Chromium)', () => {
  it("answers every valid and forged signature as the page's own WebCrypto does, the workers doing the work", async () => {
    const r = await run(600, { workers: 2 })
    expect(r.wrong, errors.join('\n')).toEqual([])
    expect(r.cases).toBe(1200)
    expect(r.forged).toBe(600)
    expect(r.ready).toBe(2)
    expect(r.name).toBe('browser-webcrypto+workers')
    // The page may help while idle, but the workers verified most of them.
    expect(r.by.workers + r.by.page).toBe(1200)
    expect(r.by.workers).toBeGreaterThan(600)
    expect(r.after).toBe(true)
  })

  it('requests in flight when the workers stop are answered on the page, with the same answers', async () => {
    const r = await run(300, { workers: 1, closeEarly: true })
    expect(r.wrong, errors.join('\n')).toEqual([])
    expect(r.by.workers + r.by.page).toBeGreaterThanOrEqual(600)
    expect(r.by.page).toBeGreaterThan(0)
  })

  it('with no workers, everything verifies on the page', async () => {
    const r = await run(100, { workers: 0 })
    expect(r.wrong).toEqual([])
    expect(r.ready).toBe(0)
    expect(r.by).toEqual({ workers: 0, page: 200 })
  })
})
