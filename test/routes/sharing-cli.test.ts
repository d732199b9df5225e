import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { main } from '../../server/cli/dispatch.ts'
import { memoryIO } from '../server/process.ts'
import { bootApp, listen, type Booted } from './helpers.ts'
import { deliverJoins, exchange } from './sharing-helpers.ts'

let a: Booted
let b: Booted
const urls: Record<string, string> = {}
beforeAll(async () => {
  ;[a, b] = await Promise.all([bootApp(), bootApp()])
  urls.a = await listen(a.app)
  urls.b = await listen(b.app)
})
afterAll(async () => {
  await Promise.all([a.close(), b.close()])
})

async function svc(who: 'a' | 'b', ...args: string[]) {
  const m = memoryIO('', { SVC_URL: urls[who] })
  // --json: these assertions read the API's JSON, not the tables.
  const code = await main([...args, '--json'], m.io)
  return { code, out: m.out(), err: m.err(), json: () => JSON.parse(m.out()) }
}

/** The human form (no --json): tables. */
async function svcText(who: 'a' | 'b', ...args: string[]) {
  const m = memoryIO('', { SVC_URL: urls[who] })
  const code = await main(args, m.io)
  return { code, out: m.out(), err: m.err() }
}

describe('svc invite, join, members', () => {
  it('invite create/list/revoke, join, members list/accept/set/remove, with the exit codes of the spec', async () => {
    const space = (await svc('a', 'spaces', 'create', 'CLI shared')).json().id as string
    const created = await svc('a', 'invite', 'create', space, '--permission', 'writer')
    expect(created.code).toBe(0)
    const { inviteToken } = created.json()
    const listed = (await svc('a', 'invite', 'list', space)).json().invites
    expect(listed).toEqual([{ recordId: expect.any(String), permission: 'writer', inviteToken }])

    const joined = await svc('b', 'join', inviteToken, '--name', 'Bea')
    expect(joined.code).toBe(0)
    expect(joined.json()).toMatchObject({ id: space, status: 'joining' })
    await deliverJoins(b, a, space)
    // A table by default (issue 39 item 6), the API's JSON with --json.
    const rows = await svcText('a', 'members', space)
    expect(rows.out).toMatch(/^IDENTITY\s+NAME\s+ROLE\s+STATUS\s+REQUEST$/m)
    expect(rows.out).toMatch(new RegExp(`^${a.accountId} \\(you\\)\\s+.*owner\\s+active`, 'm'))
    expect(rows.out).toMatch(new RegExp(`^${b.accountId}\\s+.*pending\\s+pending `, 'm'))
    const pending = (await svc('a', 'members', space)).json().members
    expect(pending.map((m: { name: string; status: string }) => [m.name, m.status])).toEqual([
      ['', 'active'],
      ['Bea', 'pending'],
    ])

    expect((await svc('a', 'members', 'accept', space, b.accountId)).code).toBe(0)
    await exchange(a, b, space)
    expect((await svc('b', 'spaces', 'get', space)).json()).toMatchObject({ status: 'active', ownRole: 'writer' })
    expect(await svc('a', 'members', 'set', space, b.accountId, 'reader')).toMatchObject({ code: 0, out: '' })
    expect((await svc('a', 'members', 'list', space)).json().members[1]).toMatchObject({ identity: b.accountId, role: 'reader' })
    // A reader manages nothing: 403, exit 1.
    const refused = await svc('b', 'members', 'remove', space, a.accountId)
    expect(refused.code).toBe(1)
    expect(refused.err).toContain('403 acl.forbidden')
    expect((await svc('a', 'members', 'remove', space, b.accountId)).code).toBe(0)
    expect((await svc('a', 'members', space, '--all')).json().members.map((m: { status: string }) => m.status)).toEqual(['active', 'removed'])

    expect((await svc('a', 'invite', 'revoke', space, listed[0].recordId)).code).toBe(0)
    expect((await svc('a', 'invite', 'revoke', space, listed[0].recordId)).err).toContain('404 invite.not_found')
    expect((await svc('a', 'invite', 'revoke', space)).code).toBe(0)
    expect((await svc('a', 'invite', 'list', space)).json().invites).toEqual([])

    const bad = await svc('b', 'join', 'not-a-token')
    expect(bad.code).toBe(1)
    expect(bad.err).toContain('400 invite.invalid')
    for (const args of [['invite'], ['invite', 'frob', space], ['join'], ['members'], ['members', 'set', space, b.accountId], ['members', 'list', space, '--permission', 'x']]) {
      expect((await svc('a', ...args)).code).toBe(1)
    }
    const down = memoryIO('', { SVC_URL: 'http://127.0.0.1:1' })
    expect(await main(['members', space], down.io)).toBe(3)
  })
})
