import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { browserFixture } from './harness.ts'

let fx: Awaited<ReturnType<typeof browserFixture>>
beforeAll(async () => {
  fx = await browserFixture()
})
afterAll(async () => fx?.close())

describe('storage conformance on real IndexedDB in Chromium', () => {
  it('IndexedDbStorageAdapter passes every test of sync/storage/conformance.ts inside the page', async () => {
    const { page, errors } = await fx.page('conformance.html')
    await page.waitForFunction(() => (window as any).conformance?.done === true, undefined, { timeout: 240_000, polling: 500 })
    const results: Array<{ name: string; ok: boolean; error?: string }> = await page.evaluate(() => (window as any).conformance.results)
    const failed = results.filter((r) => !r.ok).map((r) => `${r.name}: ${r.error}`)
    expect(failed, errors.join('\n')).toEqual([])
    // The suite ran, persistence tests included (they reopen the database).
    expect(results.length).toBeGreaterThan(30)
    expect(results.some((r) => r.name.includes('persists committed data across reopen'))).toBe(true)
    await page.close()
  })
})
