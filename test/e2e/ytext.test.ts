/**
 * Issue 21, "How it is proven", end to end: real daemons of two accounts sharing a space over
 * mDNS (inside scripts/netns-run.sh only). Each edits the same paragraph while the other is
 * down (both edits are offline, so they are concurrent for sure); once both run again, the
 * markdown on both sides holds both edits. A cursor set on one daemon shows on the other and is
 * gone after the presence timeout (SVC_CURSOR_TIMEOUT_MS, short here).
 */
import { afterAll, describe, expect, it } from 'vitest'
import { Fleet, inviteAndAccept, S, type Account } from './accounts.ts'
import { IN_NETNS, ok, startDaemon, stopDaemon, text, until } from './daemons.ts'

// The daemons inherit it (test/server/process.ts spawns with process.env).
const TIMEOUT_MS = 3_000
process.env.SVC_CURSOR_TIMEOUT_MS = String(TIMEOUT_MS)

const fleet = new Fleet()
afterAll(() => fleet.close())

const E = (spaceId: string, obj: string) => `${S(spaceId)}/objects/${encodeURIComponent(obj)}/editor/editor_blocks`
const markdown = (a: Account, spaceId: string, obj: string) => text(a.d, `${E(spaceId, obj)}/markdown`)

/** Starts a stopped daemon again on its data; the account opens from there. */
async function start(a: Account) {
  a.d = await startDaemon(a.d.dir)
  fleet.daemons.push(a.d)
  await until(`${a.name} booted`, async () => (await ok(a.d, 'GET', '/v1/health')).account !== '')
}

describe.runIf(IN_NETNS)('two accounts edit one paragraph offline', () => {
  it('after sync both edits are in the markdown on both sides; a cursor shows on the other side and goes after the timeout', async () => {
    const [alice, bob] = await Promise.all(['alice', 'bob'].map((n) => fleet.account(n)))
    const space = await ok(alice.d, 'POST', '/v1/spaces', { name: 'Docs' })
    await inviteAndAccept(alice, space.id, bob, 'writer')
    const docType = (await ok(alice.d, 'POST', `${S(space.id)}/types`, { name: 'Doc', xKey: 'doc' })).id
    await ok(alice.d, 'POST', `${S(space.id)}/types/${docType}/parts`, { key: 'body', datasets: [{ module: 'editor', shared: true }] })
    const obj = (await ok(alice.d, 'POST', `${S(space.id)}/objects`, { types: [docType] })).objectId as string
    const base = '# Notes\n\nThe quick fox jumps.\n\nAnother paragraph.\n'
    await ok(alice.d, 'PUT', `${E(space.id, obj)}/markdown`, { content: base })
    await until('bob holds the document', async () => (await markdown(bob, space.id, obj).catch(() => '')) === base, 90_000, 300)

    // Bob goes down; Alice edits; Alice goes down; Bob comes back alone and edits.
    await stopDaemon(bob.d, 'SIGTERM')
    await ok(alice.d, 'PATCH', `${E(space.id, obj)}/markdown`, { edits: [{ oldText: 'quick fox', newText: 'quick brown fox' }] })
    await stopDaemon(alice.d, 'SIGTERM')
    await start(bob)
    await ok(bob.d, 'PATCH', `${E(space.id, obj)}/markdown`, { edits: [{ oldText: 'jumps.', newText: 'jumps over the lazy dog.' }] })
    expect(await markdown(bob, space.id, obj)).toBe('# Notes\n\nThe quick fox jumps over the lazy dog.\n\nAnother paragraph.\n')
    await start(alice)

    const merged = '# Notes\n\nThe quick brown fox jumps over the lazy dog.\n\nAnother paragraph.\n'
    await until(
      'both edits reach both sides',
      async () => {
        const [a, b] = await Promise.all([markdown(alice, space.id, obj).catch(() => ''), markdown(bob, space.id, obj).catch(() => '')])
        return a === merged && b === merged
      },
      120_000,
      500,
    )

    // Alice's cursor, in the paragraph after "brown": shows on Bob's side with its index there.
    const blockId = ((await ok(alice.d, 'POST', `${S(space.id)}/query`, { objectId: obj, dataset: 'editor_blocks' })).records as any[]).find((r) =>
      r.text?.startsWith('The quick'),
    )!.id
    const at = 'The quick brown'.length
    const seen = await until(
      'alice\u2019s cursor shows on bob\u2019s side',
      async () => {
        // At most once on the bus and the connection may still be dialling: set it until it lands.
        await ok(alice.d, 'PUT', `${E(space.id, obj)}/cursor`, { blockId, anchor: at, name: 'Alice' })
        const list = (await ok(bob.d, 'GET', `${E(space.id, obj)}/cursors`)).cursors as any[]
        return list.find((c) => c.identity === alice.identity) ?? false
      },
      60_000,
      500,
    )
    expect(seen).toMatchObject({ self: false, name: 'Alice', blockId, anchor: { index: at }, head: { index: at } })

    // Alice stops renewing it: gone on Bob's side after the timeout.
    await until(
      'alice\u2019s cursor times out on bob\u2019s side',
      async () => {
        const list = (await ok(bob.d, 'GET', `${E(space.id, obj)}/cursors`)).cursors as any[]
        return !list.some((c) => c.identity === alice.identity)
      },
      30_000 + TIMEOUT_MS * 4,
      250,
    )
  }, 400_000)
})
