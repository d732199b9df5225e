import type { WalletKeys } from '../../sync/crypto/wallet.ts'
import type { Durability } from '../account/files.ts'

/**
 * The seam between the daemon's account lifecycle and the engine (spaces, objects, sync).
 *
 * The daemon owns the account directory, its lock and the wallet; the engine owns everything
 * it keeps under `dir`. Calls never overlap: `onBoot` runs after the lock is held and the wallet
 * is open; `onTeardown` runs before the lock is released (logout, account switch, shutdown),
 * after every live stream was closed with `deauthorized` or `server_shutdown`.
 */
export interface BootedAccount {
  /** base58 of the account's Ed25519 public key. */
  readonly accountId: string
  /** `<dataRoot>/accounts/<accountId>/`: the engine may create files and folders under it. */
  readonly dir: string
  /** Account key, this device's key (its peer id) and the derivation index. */
  readonly keys: WalletKeys
}

export interface AccountHost {
  /**
   * Boot the engine for `account`. A thrown SvcError reaches the caller of `POST /v1/auth` as
   * is (through the status table); anything else becomes 500 `internal`. After a throw the
   * daemon stays unauthorized and releases the lock; `onTeardown` is not called.
   */
  onBoot(account: BootedAccount): Promise<void>
  /** Stop everything `onBoot` started and flush to disk. Must not throw for a clean stop. */
  onTeardown(): Promise<void>
  /** True while the background catch-up pass runs (reported by `GET /v1/health`). */
  bootstrapping?(): boolean
}

/** What `svc serve` passes to the factory of the engine host. */
export interface AccountHostOptions {
  readonly dataRoot: string
  /** `--no-mdns`: do not announce or discover peers over multicast DNS. */
  readonly noMdns: boolean
  /** `--durability`: 'full' makes SQLite fsync every commit (default 'normal'). */
  readonly durability?: Durability
}

export type AccountHostFactory = (opts: AccountHostOptions) => AccountHost

/** The host used until the engine exists: boots and tears down nothing. */
export const idleAccountHost = (): AccountHost => ({
  async onBoot() {},
  async onTeardown() {},
})
