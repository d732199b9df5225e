import { createHash, timingSafeEqual } from 'node:crypto'
import type { Env } from '../../sync/core/env.ts'
import type { Logger } from '../../sync/core/log.ts'
import { SvcError } from '../../sync/core/errors.ts'
import { SerialQueue } from '../../sync/core/serial-queue.ts'
import { CHANGE_FORMAT_VERSION } from '../../sync/dag/change.ts'
import { accountKeyFromMnemonic, DEFAULT_DERIVATION_INDEX, identityOf, newDeviceKey, newMnemonic, type KeyPair } from '../../sync/crypto/keys.ts'
import type { WalletKeys } from '../../sync/crypto/wallet.ts'
import type { Durability } from '../account/files.ts'
import type { AccountLock } from '../account/lock.ts'
import type { AccountMetadata } from '../account/metadata.ts'
import { AccountStore } from '../account/store.ts'
import type { AccountHost } from './account-host.ts'

export type Mode = 'standalone' | 'managed'
export type TeardownReason = 'deauthorized' | 'server_shutdown'

/** Body of `POST /v1/auth` after schema validation. */
export interface AuthRequest {
  mnemonic?: string
  index?: number
  replace?: boolean
  accountId?: string
}

export interface AuthResult {
  accountId: string
  /** True when this call wrote a new wallet key file on this device. */
  created: boolean
  /** Only when this call generated the account; never stored. */
  mnemonic?: string
  alreadyAuthorized?: boolean
}

export interface AuthStatus {
  authorized: boolean
  accountId?: string
  mode: Mode
  capabilities: { deauthorize: boolean; switchAccount: boolean; shutdown: boolean }
  accounts: Array<{ id: string; default?: boolean }>
}

export interface CrdtVersion {
  supported: number
  stored: number | null
  newer: boolean
}

export interface AccountLifecycleOptions {
  dataRoot: string
  /** Where the account files' lock races are logged at debug (default: nowhere). */
  log?: Logger
  mode: Mode
  /** Required in managed mode: the value of `X-Svc-Control-Token` that authorizes control calls. */
  controlToken?: string
  /** Opens (and seals new) wallet key files. */
  passkey?: string
  /** Standalone: the account this server is configured for. */
  account?: string
  engine: AccountHost
  env: Env
  /** 'full': wallet and metadata writes also fsync their directory. */
  durability?: Durability
}

interface Running {
  accountId: string
  dir: string
  keys: WalletKeys
  lock: AccountLock
  meta: AccountMetadata | undefined
}

interface Opened extends Running {
  /** This call wrote the wallet key file. */
  created: boolean
  /** This call created the account directory (removed again if booting fails). */
  createdDir: boolean
}

const digest = (s: string) => createHash('sha256').update(s).digest()

const invalid = (field: string, message: string) => new SvcError('request.invalid_field', message, { field })

/**
 * The account lifecycle of one server process (spec Authentication): unauthorized start,
 * create / restore / select, deauthorize, switch, and the standalone / managed ownership rules.
 * At most one account is booted; operations are serialized.
 */
export class AccountLifecycle {
  readonly mode: Mode
  private readonly store: AccountStore
  private readonly opts: AccountLifecycleOptions
  private running: Running | undefined
  private readonly queue = new SerialQueue()
  private readonly teardownListeners = new Set<(reason: TeardownReason) => void | Promise<void>>()

  constructor(opts: AccountLifecycleOptions) {
    if (opts.mode === 'managed' && !opts.controlToken) throw new Error('managed mode needs a control token')
    this.opts = opts
    this.mode = opts.mode
    this.store = new AccountStore(opts.dataRoot, opts.env, opts.durability, opts.log)
  }

  get accountId(): string | undefined {
    return this.running?.accountId
  }

  get authorized(): boolean {
    return this.running !== undefined
  }

  /** Runs before every teardown, after the decision to tear down (the app closes streams here). */
  onTeardown(listener: (reason: TeardownReason) => void | Promise<void>): () => void {
    this.teardownListeners.add(listener)
    return () => this.teardownListeners.delete(listener)
  }

  status(): AuthStatus {
    const managed = this.mode === 'managed'
    const def = this.defaultAccount()
    return {
      authorized: this.authorized,
      ...(this.running ? { accountId: this.running.accountId } : {}),
      mode: this.mode,
      capabilities: { deauthorize: managed, switchAccount: managed, shutdown: managed },
      accounts: managed ? [] : this.store.list().map((id) => (id === def ? { id, default: true } : { id })),
    }
  }

  bootstrapping(): boolean {
    return this.running !== undefined && (this.opts.engine.bootstrapping?.() ?? false)
  }

  crdtVersion(): CrdtVersion {
    const stored = this.running?.meta?.crdtVersion ?? null
    return { supported: CHANGE_FORMAT_VERSION, stored, newer: stored !== null && stored > CHANGE_FORMAT_VERSION }
  }

  /** 403 `control.forbidden` unless `token` is this managed server's control token. */
  checkControl(token: string | undefined): void {
    const expected = this.opts.controlToken
    if (expected === undefined || token === undefined || !timingSafeEqual(digest(token), digest(expected))) {
      throw new SvcError('control.forbidden', 'a valid X-Svc-Control-Token header is required')
    }
  }

  /** Gate of `POST /v1/shutdown`: 403 `shutdown.not_managed` on standalone, else the token. */
  checkShutdown(token: string | undefined): void {
    if (this.mode !== 'managed') throw new SvcError('shutdown.not_managed', 'a standalone server is stopped by its owner, not over HTTP')
    this.checkControl(token)
  }

  /** `POST /v1/auth`. */
  authorize(req: AuthRequest, token: string | undefined): Promise<AuthResult> {
    if (this.mode === 'managed') this.checkControl(token)
    this.checkBodyRules(req)
    return this.exclusive(() => this.authorizeNow(req))
  }

  /** `DELETE /v1/auth`: managed only; the server stays up unauthorized. */
  deauthorize(token: string | undefined): Promise<void> {
    if (this.mode !== 'managed') throw new SvcError('auth.not_managed', 'a standalone server cannot sign out over HTTP')
    this.checkControl(token)
    return this.exclusive(() => this.teardown('deauthorized'))
  }

  /**
   * Standalone start: boots the configured account, or the only account on disk. Returns the
   * booted id, or undefined when there is nothing to boot. Throws when booting fails.
   */
  bootAtStart(): Promise<string | undefined> {
    const id = this.mode === 'standalone' ? this.defaultAccount() : undefined
    if (id === undefined) return Promise.resolve(undefined)
    return this.exclusive(async () => {
      if (!this.store.has(id)) throw new SvcError('auth.account_not_found', 'no such account on this device', { accountId: id })
      await this.boot(this.openExisting(id))
      return id
    })
  }

  /** Tears the running account down (streams get `server_shutdown`) and releases its lock. */
  close(): Promise<void> {
    return this.exclusive(() => this.teardown('server_shutdown'))
  }

  private defaultAccount(): string | undefined {
    if (this.opts.account !== undefined) return this.opts.account
    const ids = this.store.list()
    return ids.length === 1 ? ids[0] : undefined
  }

  /** Spec Authentication 4; all 400 `request.invalid_field`. */
  private checkBodyRules(req: AuthRequest): void {
    const hasMnemonic = req.mnemonic !== undefined
    const hasAccount = req.accountId !== undefined
    if (hasMnemonic && hasAccount) throw invalid('accountId', 'mnemonic and accountId cannot be combined')
    if (req.index !== undefined && !hasMnemonic) throw invalid('index', 'index needs a mnemonic')
    if (req.replace !== undefined && !hasMnemonic && !hasAccount) throw invalid('replace', 'replace needs a mnemonic or an accountId')
    if (hasAccount && this.mode === 'managed') throw invalid('accountId', 'a managed server takes an account by mnemonic only')
  }

  private async authorizeNow(req: AuthRequest): Promise<AuthResult> {
    // `{}` names no account: clients send it on every launch to mean "make sure one runs", so a
    // running account is the answer (spec: 200 alreadyAuthorized), never a switch to a new one.
    const running = this.running
    if (running && req.mnemonic === undefined && req.accountId === undefined) {
      return { accountId: running.accountId, created: false, alreadyAuthorized: true }
    }
    let mnemonic: string | undefined
    let accountKey: KeyPair | undefined
    let index = DEFAULT_DERIVATION_INDEX
    if (req.mnemonic !== undefined) {
      index = req.index ?? DEFAULT_DERIVATION_INDEX
      accountKey = accountKeyFromMnemonic(req.mnemonic, index) // 400 auth.bad_mnemonic
    } else if (req.accountId === undefined) {
      mnemonic = newMnemonic(this.opts.env)
      accountKey = accountKeyFromMnemonic(mnemonic, index)
    }
    const target = accountKey ? identityOf(accountKey.publicKey) : (req.accountId as string)

    const configured = this.opts.account
    if (configured !== undefined && target !== configured) {
      if (req.mnemonic !== undefined) throw new SvcError('auth.mnemonic_mismatch', 'the mnemonic belongs to another account than the one this server is configured for')
      throw new SvcError('auth.account_mismatch', 'this server is configured for another account', req.accountId ? { accountId: req.accountId } : undefined)
    }

    const current = this.running
    if (current) {
      if (current.accountId === target) return { accountId: target, created: false, alreadyAuthorized: true }
      if (this.mode === 'standalone') throw new SvcError('auth.not_managed', 'a standalone server cannot switch accounts')
      if (req.replace !== true) throw new SvcError('auth.already_authorized', 'another account is running; send replace: true to switch')
    }

    const opened = accountKey ? this.openFromKey(accountKey, index) : this.openExisting(target)
    if (current) {
      try {
        await this.teardown('deauthorized')
      } catch (err) {
        this.discard(opened)
        throw err
      }
    }
    await this.boot(opened)
    return { accountId: target, created: opened.created, ...(mnemonic !== undefined ? { mnemonic } : {}) }
  }

  /** Locks an account on disk and opens its wallet (`{accountId}`). */
  private openExisting(accountId: string): Opened {
    if (!this.store.has(accountId)) throw new SvcError('auth.account_not_found', 'no such account on this device', { accountId })
    const lock = this.store.lock(accountId)
    try {
      const keys = this.store.readWallet(accountId, this.opts.passkey)
      return { accountId, dir: this.store.dir(accountId), keys, lock, meta: this.readMetadata(accountId), created: false, createdDir: false }
    } catch (err) {
      lock.release()
      throw err
    }
  }

  /** Restore or create: reuses this device's wallet for the account, or writes a new one. */
  private openFromKey(account: KeyPair, index: number): Opened {
    const accountId = identityOf(account.publicKey)
    // readWallet checks that the stored account key is the one the mnemonic derives.
    if (this.store.has(accountId)) return this.openExisting(accountId)
    const createdDir = this.store.ensureDir(accountId)
    // A racing process may hold the lock of the directory we just made: leave it alone then.
    const lock = this.store.lock(accountId)
    try {
      const keys: WalletKeys = { account, device: newDeviceKey(this.opts.env), index }
      const meta = this.store.writeAccount(keys, this.opts.passkey)
      return { accountId, dir: this.store.dir(accountId), keys, lock, meta, created: true, createdDir }
    } catch (err) {
      this.discard({ accountId, lock, createdDir })
      throw err
    }
  }

  /** Gives up an opened account: removes the directory this call created, then unlocks. */
  private discard(opened: Pick<Opened, 'accountId' | 'lock' | 'createdDir'>): void {
    if (opened.createdDir) this.store.remove(opened.accountId)
    opened.lock.release()
  }

  private readMetadata(accountId: string): AccountMetadata | undefined {
    try {
      return this.store.readMetadata(accountId)
    } catch {
      return undefined // health then reports `stored: null`
    }
  }

  private async boot(opened: Opened): Promise<void> {
    const { accountId, dir, keys, lock, meta } = opened
    try {
      await this.opts.engine.onBoot({ accountId, dir, keys })
    } catch (err) {
      this.discard(opened)
      throw err
    }
    this.running = { accountId, dir, keys, lock, meta }
  }

  private async teardown(reason: TeardownReason): Promise<void> {
    const current = this.running
    if (!current) return
    this.running = undefined
    try {
      for (const listener of this.teardownListeners) await listener(reason)
    } finally {
      try {
        await this.opts.engine.onTeardown()
      } finally {
        current.lock.release()
      }
    }
  }

  private exclusive<T>(fn: () => Promise<T>): Promise<T> {
    return this.queue.run(fn)
  }
}
