import { join } from 'node:path'
import { SvcError } from '../../sync/core/errors.ts'
import { systemEnv, type Env } from '../../sync/core/env.ts'
import { defaultCryptoProvider } from '../../sync/crypto/provider.ts'
import { AccountEngine } from '../../sync/space/account-engine.ts'
import { SqliteStorageAdapter } from '../storage/sqlite.ts'
import type { BootedAccount, EngineHost, EngineHostOptions } from './engine-host.ts'

/** Where the engine keeps an account's data inside its directory. */
export const ENGINE_DB_FILE = 'svc.db'

/**
 * The daemon's engine: one AccountEngine over SQLite in the account directory, booted and torn
 * down by the account lifecycle. Routes reach it through `account()`.
 */
export class DaemonEngine implements EngineHost {
  private current?: { account: AccountEngine; storage: SqliteStorageAdapter; booted: BootedAccount }

  constructor(readonly options: EngineHostOptions, private readonly env: Env = systemEnv) {}

  async onBoot(booted: BootedAccount): Promise<void> {
    const storage = new SqliteStorageAdapter(join(booted.dir, ENGINE_DB_FILE))
    try {
      const account = await AccountEngine.open({ storage, crypto: await defaultCryptoProvider(), env: this.env, accountKey: booted.keys.account })
      this.current = { account, storage, booted }
    } catch (err) {
      await storage.close()
      throw err
    }
  }

  async onTeardown(): Promise<void> {
    const c = this.current
    this.current = undefined
    if (!c) return
    await c.account.close()
    await c.storage.close()
  }

  /** The booted account's engine; routes run only when one is booted (the gate sees to it). */
  account(): AccountEngine {
    if (!this.current) throw new SvcError('auth.required', 'no account is booted')
    return this.current.account
  }

  /** The booted account's keys (device key = peer id). */
  booted(): BootedAccount | undefined {
    return this.current?.booted
  }
}

export const daemonEngineFactory = (opts: EngineHostOptions) => new DaemonEngine(opts)
