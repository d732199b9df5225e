import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { wireLink } from '../../node/push/link.ts'
import { nobleProvider } from '../../sync/crypto/provider.ts'
import { pushModule } from '../../sync/modules/push/module.ts'
import { bundleRootId } from '../../sync/space/bundles/model.ts'
import { coreWith } from '../push/node-fixture.ts'
import { bootApp, listen, type Booted } from '../routes/helpers.ts'
import { svcAt } from './helpers.ts'

/* svc profile, svc spaces set|settings and svc push (issue 39 item 6) against a listening daemon. */
let b: Booted
let url: string
let space: string
beforeAll(async () => {
  b = await bootApp()
  url = await listen(b.app)
  space = (await svc('spaces', 'create', 'Settings')).out.trim()
}, 60_000)
afterAll(() => b?.close())

const svc = (...args: string[]) => svcAt(url, args)

describe('svc profile', () => {
  it('get shows the account; set changes the fields given and clears an empty one', async () => {
    const before = await svc('profile')
    expect(before.code).toBe(0)
    expect(before.out).toMatch(new RegExp(`^ACCOUNT\\s+NAME\\s+DESCRIPTION\\s+ICON\\n${b.accountId}\\n$`))
    expect(await svc('profile', 'set', '--name', 'Ada', '--description', 'tester')).toMatchObject({ code: 0, out: 'profile updated\n' })
    expect((await svc('profile', 'get', '--json')).json()).toEqual({ accountId: b.accountId, name: 'Ada', description: 'tester', iconCid: '' })
    expect((await svc('profile')).out).toMatch(new RegExp(`^${b.accountId}\\s+Ada\\s+tester$`, 'm'))
    expect((await svc('profile', 'set', '--description', '')).code).toBe(0)
    expect((await svc('profile', '--json')).json()).toMatchObject({ name: 'Ada', description: '' })
    expect((await svc('profile', 'set')).err).toContain('give --name, --description or --icon')
    expect((await svc('profile', '--name', 'x')).err).toContain('belong to profile set')
  })
})

describe('svc spaces set and settings', () => {
  it('set renames and re-describes the space; settings shows, sets and unsets this account’s keys', async () => {
    expect(await svc('spaces', 'set', space, '--name', 'Renamed', '--description', 'about')).toMatchObject({ code: 0, out: 'space updated\n' })
    expect((await svc('spaces', 'get', space, '--json')).json()).toMatchObject({ name: 'Renamed', description: 'about' })
    expect((await svc('spaces')).out).toMatch(new RegExp(`^Renamed\\s+owner\\s+active\\s+${space}$`, 'm'))
    expect((await svc('spaces', 'set', space)).err).toContain('give --name, --description or --icon')
    expect((await svc('spaces', 'settings', space)).out).toBe('(none)\n')
    expect(await svc('spaces', 'settings', space, '--set', 'notifyMode=mentions', '--set', 'pinned=true')).toMatchObject({ code: 0, out: 'settings updated\n' })
    expect((await svc('spaces', 'settings', space)).out).toMatch(/^KEY\s+VALUE\nnotifyMode\s+mentions\npinned\s+true\n$/)
    expect((await svc('spaces', 'settings', space, '--unset', 'pinned')).code).toBe(0)
    expect((await svc('spaces', 'get', space, '--json')).json().settings).toEqual({ notifyMode: 'mentions' })
    const both = await svc('spaces', 'settings', space, '--set', 'a=1', '--unset', 'a')
    expect(both.code).toBe(1)
    expect(both.err).toContain('400 request.invalid_field')
    expect((await svc('spaces', 'create', 'X', '--set', 'a=1')).err).toContain('--set is not an option of create')
  })
})

describe('svc push', () => {
  it('token and subscriptions: 409 push.disabled without a push node', async () => {
    for (const args of [
      ['push', 'token'],
      ['push', 'token', 'set', 'ab', '--platform', 'ios'],
      ['push', 'token', 'rm'],
      ['push', 'subscriptions'],
    ]) {
      const r = await svc(...args)
      expect({ args, code: r.code, err: r.err }).toEqual({ args, code: 1, err: expect.stringContaining('409 push.disabled') })
    }
  })

  it('token set, show, subscriptions and rm with a push node', async () => {
    const push = b.engine.account().services.of(pushModule)
    const { core, store } = coreWith()
    try {
      push.attach(wireLink((bytes) => core.handle('daemon', bytes), nobleProvider))
      expect(await svc('push', 'token')).toMatchObject({ code: 0, out: 'no token registered on this device\n' })
      expect((await svc('push', 'token', 'set', 'https://ntfy.example.org/up/1')).err).toContain('missing --platform')
      const bad = await svc('push', 'token', 'set', 'x', '--platform', 'symbian')
      expect(bad.code).toBe(1)
      expect(bad.err).toContain('400 request.invalid_field')
      expect(await svc('push', 'token', 'set', 'https://ntfy.example.org/up/1', '--platform', 'ntfy')).toMatchObject({ code: 0, out: 'registered a ntfy token\n' })
      expect((await svc('push', 'token')).out).toBe('registered (ntfy)\n')
      expect((await svc('push', 'token', '--json')).json()).toEqual({ registered: true, platform: 'ntfy' })
      await push.reconcile()
      const subs = await svc('push', 'subscriptions')
      expect(subs.out).toMatch(/^SPACE KEY\s+TOPIC$/m)
      expect(subs.out).toMatch(new RegExp(`\\s${b.accountId}$`, 'm'))
      expect(await svc('push', 'token', 'rm')).toMatchObject({ code: 0, out: 'removed the push token of this device\n' })
      expect((await svc('push', 'token')).out).toBe('no token registered on this device\n')
    } finally {
      push.detach()
      await store.close()
    }
  })

  it('settings: a space’s notify mode and a chat’s override, inherit unsets', async () => {
    const s2 = (await svc('spaces', 'create', 'Quiet')).out.trim()
    expect((await svc('catalog', 'setup', 'general-chat', s2)).code).toBe(0)
    const chat = bundleRootId(s2, 'system:general-chat/v1')
    expect((await svc('push', 'settings', s2)).out).toBe(`space: all (default)\nchat ${chat}: inherit (all)\n`)
    expect((await svc('push', 'settings', 'set', s2, 'none')).code).toBe(0)
    expect((await svc('push', 'settings', 'set', s2, 'mentions', '--chat', chat)).code).toBe(0)
    expect((await svc('push', 'settings', s2)).out).toBe(`space: none\nchat ${chat}: mentions\n`)
    expect((await svc('push', 'settings', s2, '--json')).json()).toEqual({ space: 'none', chat: { objectId: chat, notifyMode: 'mentions' } })
    expect((await svc('push', 'settings')).out).toMatch(new RegExp(`^Quiet\\s+none\\s+${s2}$`, 'm'))
    expect((await svc('push', 'settings', 'set', s2, 'inherit', '--chat', chat)).code).toBe(0)
    expect((await svc('push', 'settings', 'set', s2, 'inherit')).code).toBe(0)
    expect((await svc('push', 'settings', s2)).out).toBe(`space: all (default)\nchat ${chat}: inherit (all)\n`)
    expect((await svc('push', 'settings', 'set', s2, 'loud')).err).toContain('MODE is all, mentions, none or inherit')
    expect((await svc('push', 'settings', s2, '--chat', 'nope')).err).toContain('no object nope')
    const notChat = await svc('push', 'settings', 'set', s2, 'none', '--chat', (await svc('objects', 'create', s2, '--name', 'o')).out.trim())
    expect(notChat.code).toBe(1)
    expect(notChat.err).toContain('400 object.type_required')
  })
})
