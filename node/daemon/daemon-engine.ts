import { join } from 'node:path'
import { SvcError } from '../../sync/core/errors.ts'
import { systemEnv, type Env } from '../../sync/core/env.ts'
import { defaultCryptoProvider } from '../../sync/crypto/provider.ts'
import { identityOf } from '../../sync/crypto/keys.ts'
import { AccountEngine } from '../../sync/space/account-engine.ts'
import { SqliteStorageAdapter } from '../storage/sqlite.ts'
import type { BootedAccount, EngineHost, EngineHostOptions } from './engine-host.ts'
import { P2PService } from './p2p-service.ts'
import type { SchedulerOptions } from './sync-scheduler.ts'

export interface DaemonEngineOptions extends EngineHostOptions {
  /** libp2p listen multiaddrs; default all interfaces, random port (env SVC_P2P_LISTEN, comma-separated). */
  p2pListen?: string[]
  /** Off turns P2P off entirely (tests of the HTTP API alone). */
  p2p?: boolean
  scheduler?: SchedulerOptions
}

/** Where the engine keeps an account's data inside its directory. */
export const ENGINE_DB_FILE = 'svc.db'

/**
 * The daemon's engine: one AccountEngine over SQLite in the account directory, booted and torn
 * down by the account lifecycle. Routes reach it through `account()`.
 */
export class DaemonEngine implements EngineHost {
  private current?: { account: AccountEngine; storage: SqliteStorageAdapter; booted: BootedAccount; p2p?: P2PService }

  constructor(readonly options: DaemonEngineOptions, private readonly env: Env = systemEnv) {}

  async onBoot(booted: BootedAccount): Promise<void> {
    const storage = new SqliteStorageAdapter(join(booted.dir, ENGINE_DB_FILE))
    let account: AccountEngine | undefined
    try {
      const crypto = await defaultCryptoProvider()
      account = await AccountEngine.open({ storage, crypto, env: this.env, accountKey: booted.keys.account })
      await account.devices.register(identityOf(booted.keys.device.publicKey))
      const listen = this.options.p2pListen ?? process.env.SVC_P2P_LISTEN?.split(',').filter(Boolean)
      const p2p = this.options.p2p === false ? undefined : await P2PService.start({ account, keys: booted.keys, crypto, env: this.env, mdns: !this.options.noMdns && process.env.SVC_NO_MDNS !== '1', listen, scheduler: this.options.scheduler })
      this.current = { account, storage, booted, p2p }
    } catch (err) {
      await account?.close()
      await storage.close()
      throw err
    }
  }

  async onTeardown(): Promise<void> {
    const c = this.current
    this.current = undefined
    if (!c) return
    await c.p2p?.stop()
    await c.account.close()
    await c.storage.close()
  }

  /** The P2P side, when it runs. */
  p2p(): P2PService | undefined {
    return this.current?.p2p
  }

  /** `{S}/sync`: a round with every connected peer; resolves when all are done. */
  async syncNow(spaceId: string): Promise<void> {
    await this.current?.p2p?.syncNow(spaceId)
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

export const daemonEngineFactory = (opts: DaemonEngineOptions) => new DaemonEngine(opts)
