import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { SvcError } from '../../sync/core/errors.ts'
import { accountKeyFromMnemonic, identityOf } from '../../sync/crypto/keys.ts'
import { decodeWallet, walletNeedsPasskey } from '../../sync/crypto/wallet.ts'
import { cleanup, createAccount, expectError, makeApp, MNEMONIC, post, TOKEN } from './helpers.ts'

afterEach(cleanup)

const idOf = (mnemonic: string, index = 1) => identityOf(accountKeyFromMnemonic(mnemonic, index).publicKey)
const walletPath = (root: string, id: string) => join(root, 'accounts', id, 'wallet.json')
const control = { 'x-svc-control-token': TOKEN }

describe('unauthorized start', () => {
  it('gates every route but health, shutdown, openapi and auth with 401 auth.required', async () => {
    const { app } = makeApp()
    expectError(await app.inject({ url: '/v1/identities/subscribe' }), 401, 'auth.required')
    expect((await app.inject({ url: '/v1/health' })).statusCode).toBe(200)
    expect((await app.inject({ url: '/v1/openapi.json' })).statusCode).toBe(200)
    expect((await app.inject({ url: '/v1/auth' })).statusCode).toBe(200)
    // shutdown answers its own rule, not 401
    expectError(await post(app, '/v1/shutdown', undefined), 403, 'shutdown.not_managed')
  })

  it('health reports an empty account and the CRDT versions', async () => {
    const { app } = makeApp()
    const h = (await app.inject({ url: '/v1/health' })).json()
    expect(h).toMatchObject({ status: 'ok', account: '', bootstrapping: false, crdtVersion: { supported: 1, stored: null, newer: false } })
    expect(h.version).toMatch(/^\d+\.\d+\.\d+/)
    expect(Number.isNaN(Date.parse(h.startedAt.$date))).toBe(false)
  })

  it('GET /v1/auth describes a standalone server', async () => {
    const { app } = makeApp()
    expect((await app.inject({ url: '/v1/auth' })).json()).toEqual({
      authorized: false,
      mode: 'standalone',
      capabilities: { deauthorize: false, switchAccount: false, shutdown: false },
      accounts: [],
    })
  })
})

describe('POST /v1/auth: create', () => {
  it('generates an account, returns the mnemonic once, writes a 0600 wallet, boots the engine', async () => {
    const { app, dataRoot, engine } = makeApp()
    const { accountId, mnemonic, created } = await createAccount(app)
    expect(created).toBe(true)
    expect(mnemonic.split(' ')).toHaveLength(12)
    expect(idOf(mnemonic)).toBe(accountId)

    const wallet = walletPath(dataRoot, accountId)
    expect(statSync(wallet).mode & 0o777).toBe(0o600)
    expect(walletNeedsPasskey(readFileSync(wallet, 'utf8'))).toBe(false)
    // the mnemonic is stored nowhere
    for (const f of readdirSync(join(dataRoot, 'accounts', accountId))) {
      expect(readFileSync(join(dataRoot, 'accounts', accountId, f), 'utf8')).not.toContain(mnemonic.split(' ').slice(0, 3).join(' '))
    }
    const meta = JSON.parse(readFileSync(join(dataRoot, 'accounts', accountId, 'account.json'), 'utf8'))
    expect(meta).toMatchObject({ format: 'svc-account', accountId, derivationIndex: 1, crdtVersion: 1 })

    expect(engine.booted).toHaveLength(1)
    expect(engine.booted[0]).toMatchObject({ accountId, dir: join(dataRoot, 'accounts', accountId) })
    expect(identityOf(engine.booted[0].keys.account.publicKey)).toBe(accountId)
    expect(meta.deviceId).toBe(identityOf(engine.booted[0].keys.device.publicKey))

    const health = (await app.inject({ url: '/v1/health' })).json()
    expect(health).toMatchObject({ account: accountId, crdtVersion: { stored: 1, newer: false } })
    expect((await app.inject({ url: '/v1/auth' })).json()).toMatchObject({ authorized: true, accountId, accounts: [{ id: accountId, default: true }] })
  })

  it('seals a new wallet with the configured passkey', async () => {
    const { app, dataRoot } = makeApp({ passkey: 'hunter2' })
    const { accountId } = await createAccount(app)
    const text = readFileSync(walletPath(dataRoot, accountId), 'utf8')
    expect(walletNeedsPasskey(text)).toBe(true)
    expect(identityOf(decodeWallet(text, 'hunter2').account.publicKey)).toBe(accountId)
  })

  it('answers the running account with 200 alreadyAuthorized', async () => {
    const { app } = makeApp()
    const res = await post(app, '/v1/auth', { mnemonic: MNEMONIC })
    expect(res.statusCode).toBe(201)
    const again = await post(app, '/v1/auth', { mnemonic: MNEMONIC })
    expect(again.statusCode).toBe(200)
    expect(again.json()).toEqual({ accountId: idOf(MNEMONIC), created: false, alreadyAuthorized: true })
    const byId = await post(app, '/v1/auth', { accountId: idOf(MNEMONIC) })
    expect(byId.json()).toMatchObject({ alreadyAuthorized: true })
  })

  it('refuses switching accounts on a standalone server with 403 auth.not_managed', async () => {
    const { app } = makeApp()
    await post(app, '/v1/auth', { mnemonic: MNEMONIC })
    expectError(await post(app, '/v1/auth', { mnemonic: MNEMONIC, index: 2 }), 403, 'auth.not_managed')
  })

  it('{} on a running standalone server answers 200 alreadyAuthorized with the running account, creating nothing', async () => {
    const first = makeApp()
    const { accountId } = await createAccount(first.app)
    expect((await post(first.app, '/v1/auth', {})).json()).toEqual({ accountId, created: false, alreadyAuthorized: true })
    await first.app.close()
    // A restarted server boots the account itself; the client's launch-time `{}` must not fail.
    const { app, session, dataRoot } = makeApp({ dataRoot: first.dataRoot })
    expect(await session.bootAtStart()).toBe(accountId)
    const res = await post(app, '/v1/auth', {})
    expect(res.statusCode).toBe(200)
    expect(res.json()).toEqual({ accountId, created: false, alreadyAuthorized: true })
    expect(readdirSync(join(dataRoot, 'accounts'))).toEqual([accountId])
  })

  it('{} on a running managed server answers 200 alreadyAuthorized too (it names no account to switch to)', async () => {
    const { app } = makeApp({ mode: 'managed' })
    const { accountId } = await createAccount(app, control)
    const res = await post(app, '/v1/auth', {}, control)
    expect(res.statusCode).toBe(200)
    expect(res.json()).toEqual({ accountId, created: false, alreadyAuthorized: true })
  })
})

describe('POST /v1/auth: restore and select', () => {
  it('restores from a mnemonic (index defaults to 1) without returning it', async () => {
    const { app, dataRoot } = makeApp()
    const res = await post(app, '/v1/auth', { mnemonic: `  ${MNEMONIC.toUpperCase()} ` })
    expect(res.statusCode).toBe(201)
    expect(res.json()).toEqual({ accountId: idOf(MNEMONIC, 1), created: true })
    expect(existsSync(walletPath(dataRoot, idOf(MNEMONIC, 1)))).toBe(true)
  })

  it('uses the given derivation index', async () => {
    const { app } = makeApp()
    const res = await post(app, '/v1/auth', { mnemonic: MNEMONIC, index: 7 })
    expect(res.json().accountId).toBe(idOf(MNEMONIC, 7))
    expect(idOf(MNEMONIC, 7)).not.toBe(idOf(MNEMONIC, 1))
  })

  it('restoring an account already on disk reuses its wallet (same device key)', async () => {
    const first = makeApp()
    await post(first.app, '/v1/auth', { mnemonic: MNEMONIC })
    const device = first.engine.booted[0].keys.device.publicKey
    await first.app.close()

    const second = makeApp({ dataRoot: first.dataRoot })
    // exactly one account on disk: it is the default
    expect((await second.app.inject({ url: '/v1/auth' })).json().accounts).toEqual([{ id: idOf(MNEMONIC), default: true }])
    const res = await post(second.app, '/v1/auth', { mnemonic: MNEMONIC })
    expect(res.statusCode).toBe(200)
    expect(res.json()).toEqual({ accountId: idOf(MNEMONIC), created: false })
    expect(second.engine.booted[0].keys.device.publicKey).toEqual(device)
  })

  it('selects an account on disk by id; lists accounts without a default when several', async () => {
    const first = makeApp()
    const a = await createAccount(first.app)
    await first.app.close()
    const second = makeApp({ dataRoot: first.dataRoot })
    await post(second.app, '/v1/auth', { mnemonic: MNEMONIC })
    await second.app.close()

    const { app } = makeApp({ dataRoot: first.dataRoot })
    const listed = (await app.inject({ url: '/v1/auth' })).json().accounts
    expect(listed).toEqual([{ id: a.accountId }, { id: idOf(MNEMONIC) }].sort((x, y) => (x.id < y.id ? -1 : 1)))
    const res = await post(app, '/v1/auth', { accountId: a.accountId })
    expect(res.statusCode).toBe(200)
    expect(res.json()).toEqual({ accountId: a.accountId, created: false })
  })

  it('404 auth.account_not_found for an unknown account id', async () => {
    const { app } = makeApp()
    const details = expectError(await post(app, '/v1/auth', { accountId: idOf(MNEMONIC) }), 404, 'auth.account_not_found')
    expect(details).toEqual({ accountId: idOf(MNEMONIC) })
  })

  it('400 auth.bad_mnemonic for a phrase that is not BIP39', async () => {
    const { app } = makeApp()
    expectError(await post(app, '/v1/auth', { mnemonic: 'correct horse battery staple' }), 400, 'auth.bad_mnemonic')
    // wrong checksum: valid words, invalid phrase
    expectError(await post(app, '/v1/auth', { mnemonic: MNEMONIC.replace('yellow', 'wave') }), 400, 'auth.bad_mnemonic')
  })
})

describe('POST /v1/auth: body rules (spec Authentication 4)', () => {
  it.each([
    [{ mnemonic: MNEMONIC, accountId: idOf(MNEMONIC) }, 'accountId'],
    [{ index: 2 }, 'index'],
    [{ replace: true }, 'replace'],
    [{ replace: false }, 'replace'],
  ])('%j is 400 request.invalid_field', async (body, field) => {
    const { app } = makeApp()
    expect(expectError(await post(app, '/v1/auth', body), 400, 'request.invalid_field')).toEqual({ field })
  })

  it('accountId on a managed server is 400 request.invalid_field', async () => {
    const { app } = makeApp({ mode: 'managed' })
    expect(expectError(await post(app, '/v1/auth', { accountId: idOf(MNEMONIC) }, control), 400, 'request.invalid_field')).toEqual({ field: 'accountId' })
  })

  it('schema errors: unknown key, wrong type, bad id pattern, negative index', async () => {
    const { app } = makeApp()
    expect(expectError(await post(app, '/v1/auth', { mnemonic: MNEMONIC, passkey: 'x' }), 400, 'request.unknown_field')).toEqual({
      fields: ['passkey'],
      accepted: ['mnemonic', 'index', 'replace', 'accountId'],
    })
    expect(expectError(await post(app, '/v1/auth', { mnemonic: 12 }), 400, 'request.invalid_field')).toEqual({ field: 'mnemonic' })
    expect(expectError(await post(app, '/v1/auth', { accountId: '../../etc' }), 400, 'request.invalid_field')).toEqual({ field: 'accountId' })
    expect(expectError(await post(app, '/v1/auth', { mnemonic: MNEMONIC, index: -1 }), 400, 'request.invalid_field')).toEqual({ field: 'index' })
  })
})

describe('wallet passkey and corruption', () => {
  async function encryptedAccount() {
    const first = makeApp({ passkey: 'pass-1' })
    const { accountId } = await createAccount(first.app)
    await first.app.close()
    return { root: first.dataRoot, accountId }
  }

  it('400 auth.passkey_required without the passkey or with a wrong one; boots with the right one', async () => {
    const { root, accountId } = await encryptedAccount()
    const none = makeApp({ dataRoot: root })
    expectError(await post(none.app, '/v1/auth', { accountId }), 400, 'auth.passkey_required')
    await none.app.close()
    const wrong = makeApp({ dataRoot: root, passkey: 'nope' })
    expectError(await post(wrong.app, '/v1/auth', { accountId }), 400, 'auth.passkey_required')
    await wrong.app.close()
    // the failed attempts released the lock
    const right = makeApp({ dataRoot: root, passkey: 'pass-1' })
    expect((await post(right.app, '/v1/auth', { accountId })).statusCode).toBe(200)
  })

  it('500 auth.device_key_corrupt for an unreadable wallet, without leaking paths', async () => {
    const first = makeApp()
    const { accountId } = await createAccount(first.app)
    await first.app.close()
    writeFileSync(walletPath(first.dataRoot, accountId), '{"format":"svc-wallet","version":1,"kdf":null,"data":"AAAA"}')
    const { app } = makeApp({ dataRoot: first.dataRoot })
    const res = await post(app, '/v1/auth', { accountId })
    expectError(res, 500, 'auth.device_key_corrupt')
    expect(res.body).not.toContain(first.dataRoot)
  })
})

describe('account lock', () => {
  it('a second server on the same account gets 409 auth.account_in_use with details.pid', async () => {
    const first = makeApp()
    const { accountId } = await createAccount(first.app)
    const lock = join(first.dataRoot, 'accounts', accountId, 'lock')
    expect(readFileSync(lock, 'utf8').split(' ')[0]).toBe(String(process.pid))

    const second = makeApp({ dataRoot: first.dataRoot })
    expect(expectError(await post(second.app, '/v1/auth', { accountId }), 409, 'auth.account_in_use')).toEqual({ pid: process.pid })
    // a different account on the same data root is fine
    expect((await post(second.app, '/v1/auth', { mnemonic: MNEMONIC })).statusCode).toBe(201)

    await first.app.close()
    expect(existsSync(lock)).toBe(false)
  })

  it('takes over a stale lock left by a dead process', async () => {
    const first = makeApp()
    const { accountId } = await createAccount(first.app)
    await first.app.close()
    const lock = join(first.dataRoot, 'accounts', accountId, 'lock')
    writeFileSync(lock, '2147483646 stale\n') // no such pid
    const { app } = makeApp({ dataRoot: first.dataRoot })
    expect((await post(app, '/v1/auth', { accountId })).statusCode).toBe(200)
    expect(readFileSync(lock, 'utf8').split(' ')[0]).toBe(String(process.pid))
  })
})

describe('configured account (standalone)', () => {
  it('409 auth.account_mismatch / auth.mnemonic_mismatch for another account', async () => {
    const first = makeApp()
    const { accountId } = await createAccount(first.app)
    await first.app.close()
    const other = idOf(MNEMONIC)
    const { app } = makeApp({ dataRoot: first.dataRoot, account: accountId })
    expectError(await post(app, '/v1/auth', { accountId: other }), 409, 'auth.account_mismatch')
    expectError(await post(app, '/v1/auth', {}), 409, 'auth.account_mismatch')
    expectError(await post(app, '/v1/auth', { mnemonic: MNEMONIC }), 409, 'auth.mnemonic_mismatch')
    expect((await app.inject({ url: '/v1/auth' })).json().accounts).toEqual([{ id: accountId, default: true }])
    expect((await post(app, '/v1/auth', { accountId })).statusCode).toBe(200)
  })
})

describe('boot at start', () => {
  it('boots the only account on disk; boots nothing when there are none', async () => {
    const empty = makeApp()
    expect(await empty.session.bootAtStart()).toBeUndefined()
    const first = makeApp()
    const { accountId } = await createAccount(first.app)
    await first.app.close()
    const { app, session } = makeApp({ dataRoot: first.dataRoot })
    expect(await session.bootAtStart()).toBe(accountId)
    expect((await app.inject({ url: '/v1/health' })).json().account).toBe(accountId)
  })

  it('a managed server never boots at start', async () => {
    const first = makeApp()
    await createAccount(first.app)
    await first.app.close()
    const { session } = makeApp({ dataRoot: first.dataRoot, mode: 'managed' })
    expect(await session.bootAtStart()).toBeUndefined()
    expect(session.authorized).toBe(false)
  })
})

describe('engine hook failures', () => {
  it('an onBoot SvcError reaches the caller; the new account is rolled back and unlocked', async () => {
    const { app, engine, dataRoot } = makeApp()
    engine.failBoot = new SvcError('sdk.crdt_version_newer', 'written by a newer release', { stored: 9, supported: 1 })
    expectError(await post(app, '/v1/auth', { mnemonic: MNEMONIC }), 409, 'sdk.crdt_version_newer')
    expect(existsSync(join(dataRoot, 'accounts', idOf(MNEMONIC)))).toBe(false)
    engine.failBoot = undefined
    expect((await post(app, '/v1/auth', { mnemonic: MNEMONIC })).statusCode).toBe(201)
  })

  it('any other onBoot failure is 500 internal with a generic message', async () => {
    const { app, engine } = makeApp()
    engine.failBoot = new Error('ENOENT: /secret/path/engine.db')
    const res = await post(app, '/v1/auth', {})
    expectError(res, 500, 'internal')
    expect(res.body).not.toContain('/secret/path')
    expect((await app.inject({ url: '/v1/auth' })).json().authorized).toBe(false)
  })
})

describe('standalone control routes', () => {
  it('DELETE /v1/auth is 403 auth.not_managed, POST /v1/shutdown 403 shutdown.not_managed, even with a token', async () => {
    const t = makeApp()
    await createAccount(t.app)
    expectError(await t.app.inject({ method: 'DELETE', url: '/v1/auth', headers: control }), 403, 'auth.not_managed')
    expectError(await post(t.app, '/v1/shutdown', undefined, control), 403, 'shutdown.not_managed')
    expect(t.shutdowns).toBe(0)
    expect(t.session.authorized).toBe(true)
  })
})

describe('managed mode', () => {
  it('GET /v1/auth lists no accounts and full capabilities', async () => {
    const first = makeApp()
    await createAccount(first.app)
    await first.app.close()
    const { app } = makeApp({ dataRoot: first.dataRoot, mode: 'managed' })
    expect((await app.inject({ url: '/v1/auth' })).json()).toEqual({
      authorized: false,
      mode: 'managed',
      capabilities: { deauthorize: true, switchAccount: true, shutdown: true },
      accounts: [],
    })
  })

  it('POST /v1/auth needs the control token (403 control.forbidden)', async () => {
    const { app } = makeApp({ mode: 'managed' })
    expectError(await post(app, '/v1/auth', {}), 403, 'control.forbidden')
    expectError(await post(app, '/v1/auth', {}, { 'x-svc-control-token': 'wrong' }), 403, 'control.forbidden')
    expect((await post(app, '/v1/auth', {}, control)).statusCode).toBe(201)
  })

  it('409 auth.already_authorized without replace; replace: true switches and tears the old account down', async () => {
    const { app, engine, dataRoot } = makeApp({ mode: 'managed' })
    const a = await createAccount(app, control)
    expectError(await post(app, '/v1/auth', { mnemonic: MNEMONIC }, control), 409, 'auth.already_authorized')
    const res = await post(app, '/v1/auth', { mnemonic: MNEMONIC, replace: true }, control)
    expect(res.statusCode).toBe(201)
    expect(res.json().accountId).toBe(idOf(MNEMONIC))
    expect(engine.teardowns).toBe(1)
    expect(engine.booted.map((b) => b.accountId)).toEqual([a.accountId, idOf(MNEMONIC)])
    expect(existsSync(join(dataRoot, 'accounts', a.accountId, 'lock'))).toBe(false)
  })

  it('DELETE /v1/auth with the token signs out and stays up; without it 403', async () => {
    const { app, engine, dataRoot } = makeApp({ mode: 'managed' })
    const { accountId } = await createAccount(app, control)
    expectError(await app.inject({ method: 'DELETE', url: '/v1/auth' }), 403, 'control.forbidden')
    const res = await app.inject({ method: 'DELETE', url: '/v1/auth', headers: control })
    expect(res.statusCode).toBe(204)
    expect(res.body).toBe('')
    expect(engine.teardowns).toBe(1)
    expect(existsSync(join(dataRoot, 'accounts', accountId, 'lock'))).toBe(false)
    expect((await app.inject({ url: '/v1/health' })).json().account).toBe('')
    expectError(await app.inject({ url: '/v1/identities/subscribe' }), 401, 'auth.required')
  })

  it('POST /v1/shutdown needs the token, then answers 204 and requests shutdown', async () => {
    const t = makeApp({ mode: 'managed' })
    expectError(await post(t.app, '/v1/shutdown', undefined), 403, 'control.forbidden')
    expect(t.shutdowns).toBe(0)
    const res = await post(t.app, '/v1/shutdown', undefined, control)
    expect(res.statusCode).toBe(204)
    await new Promise((r) => setImmediate(r))
    expect(t.shutdowns).toBe(1)
  })
})
