import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import { CHANGE_FORMAT_VERSION } from '../../sync/dag/change.ts'
import type { Env } from '../../sync/core/env.ts'
import { SvcError } from '../../sync/core/errors.ts'
import type { Logger } from '../../sync/core/log.ts'
import { identityOf } from '../../sync/crypto/keys.ts'
import { decodeWallet, encodeWallet, type WalletKeys } from '../../sync/crypto/wallet.ts'
import { fsyncDir, writeFileAtomic, type Durability } from './files.ts'
import { accountDir, accountsDir, isAccountId, METADATA_FILE, WALLET_FILE } from './layout.ts'
import { acquireLock, processWarningLog, type AccountLock } from './lock.ts'
import { decodeMetadata, encodeMetadata, type AccountMetadata } from './metadata.ts'

const DIR_MODE = 0o700
const SECRET_MODE = 0o600

/** The accounts of one data root on disk (layout in layout.ts). */
export class AccountStore {
  constructor(
    readonly dataRoot: string,
    private readonly env: Env,
    private readonly durability: Durability = 'normal',
    /** Lock-file races go here at debug (a takeover warning stays a process warning). */
    private readonly log?: Logger,
  ) {}

  dir(accountId: string): string {
    return accountDir(this.dataRoot, accountId)
  }

  /** Account ids with a wallet key file, sorted. */
  list(): string[] {
    let names: string[]
    try {
      names = readdirSync(accountsDir(this.dataRoot))
    } catch {
      return []
    }
    return names.filter((n) => isAccountId(n) && this.has(n)).sort()
  }

  has(accountId: string): boolean {
    return isAccountId(accountId) && existsSync(join(this.dir(accountId), WALLET_FILE))
  }

  /**
   * Reads and opens the wallet key file. 400 `auth.passkey_required` when encrypted and the
   * passkey is missing or wrong; 500 `auth.device_key_corrupt` when unreadable or when it holds
   * another account's key.
   */
  readWallet(accountId: string, passkey: string | undefined): WalletKeys {
    let text: string
    try {
      text = readFileSync(join(this.dir(accountId), WALLET_FILE), 'utf8')
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') {
        throw new SvcError('auth.account_not_found', 'no such account on this device', { accountId })
      }
      throw new SvcError('auth.device_key_corrupt', 'wallet key file is not readable')
    }
    const keys = decodeWallet(text, passkey)
    if (identityOf(keys.account.publicKey) !== accountId) {
      throw new SvcError('auth.device_key_corrupt', 'wallet key file holds another account')
    }
    return keys
  }

  readMetadata(accountId: string): AccountMetadata | undefined {
    let text: string
    try {
      text = readFileSync(join(this.dir(accountId), METADATA_FILE), 'utf8')
    } catch {
      return undefined
    }
    return decodeMetadata(text)
  }

  /** Creates the account directory (mode 0700) if missing; true when this call created it. */
  ensureDir(accountId: string): boolean {
    const dir = this.dir(accountId)
    if (existsSync(dir)) return false
    mkdirSync(accountsDir(this.dataRoot), { recursive: true, mode: DIR_MODE })
    mkdirSync(dir, { mode: DIR_MODE })
    if (this.durability === 'full') fsyncDir(accountsDir(this.dataRoot))
    return true
  }

  lock(accountId: string): AccountLock {
    const log = this.log
    return acquireLock(this.dir(accountId), log ? { warn: (obj, msg) => processWarningLog.warn(obj, msg), debug: (obj, msg) => log.debug(msg, { ...obj }) } : processWarningLog)
  }

  /** Writes the wallet key file (0600, sealed with `passkey` when given) and the metadata file. */
  writeAccount(keys: WalletKeys, passkey: string | undefined): AccountMetadata {
    const accountId = identityOf(keys.account.publicKey)
    const dir = this.dir(accountId)
    writeFileAtomic(join(dir, WALLET_FILE), encodeWallet(this.env, keys, passkey), SECRET_MODE, this.durability)
    const meta: AccountMetadata = {
      format: 'svc-account',
      version: 1,
      accountId,
      deviceId: identityOf(keys.device.publicKey),
      derivationIndex: keys.index,
      createdAt: new Date(this.env.now()).toISOString(),
      crdtVersion: CHANGE_FORMAT_VERSION,
    }
    writeFileAtomic(join(dir, METADATA_FILE), encodeMetadata(meta), SECRET_MODE, this.durability)
    return meta
  }

  /** Removes an account directory this process created and failed to boot (rollback only). */
  remove(accountId: string): void {
    rmSync(this.dir(accountId), { recursive: true, force: true })
  }
}
