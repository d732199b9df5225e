import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { bootApp, listen, type Booted } from '../routes/helpers.ts'
import { deliverJoins, exchange } from '../routes/sharing-helpers.ts'
import { svcAt } from './helpers.ts'

/*
 * CLI commands that need a second account (issue 39 item 6): two daemons in one process, the
 * space's changes carried between them by `exchange` (what a head-sync round would carry).
 */
let a: Booted
let b: Booted
const urls: Record<'a' | 'b', string> = { a: '', b: '' }
let space: string
beforeAll(async () => {
  ;[a, b] = await Promise.all([bootApp(), bootApp()])
  urls.a = await listen(a.app)
  urls.b = await listen(b.app)
  space = (await svc('a', 'spaces', 'create', 'Shared')).out.trim()
  const { inviteToken } = (await svc('a', 'invite', 'create', space, '--permission', 'writer')).json()
  expect((await svc('b', 'join', inviteToken, '--name', 'Bea')).code).toBe(0)
  await deliverJoins(b, a, space)
  expect((await svc('a', 'members', 'accept', space, b.accountId)).code).toBe(0)
  await exchange(a, b, space)
}, 60_000)
afterAll(async () => {
  await Promise.all([a?.close(), b?.close()])
})

const svc = (who: 'a' | 'b', ...args: string[]) => svcAt(urls[who], args)

describe('a removed member', () => {
  it('sees "removed" in svc spaces, and its writes fail saying it was removed', async () => {
    expect((await svc('b', 'objects', 'create', space, '--name', 'Before')).code).toBe(0)
    expect((await svc('a', 'members', 'remove', space, b.accountId)).code).toBe(0)
    await exchange(a, b, space)
    const rows = await svc('b', 'spaces')
    expect(rows.out).toMatch(new RegExp(`^Shared\\s+none\\s+removed\\s+${space}$`, 'm'))
    expect(rows.out).not.toMatch(/none\s+active/)
    const write = await svc('b', 'objects', 'create', space, '--name', 'After')
    expect(write.code).toBe(1)
    expect(write.err).toContain('403 space.read_only')
    expect(write.err).toContain('removed from this space')
  })
})
