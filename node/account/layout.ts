import { join } from 'node:path'

/**
 * Data root layout (one data root may hold many accounts; one server process serves one):
 *
 *   <dataRoot>/accounts/<accountId>/wallet.json   wallet key file, mode 0600 (sync/crypto/wallet.ts)
 *   <dataRoot>/accounts/<accountId>/account.json  account metadata (see metadata.ts)
 *   <dataRoot>/accounts/<accountId>/lock          exclusive lock: the pid of the serving process
 *
 * The engine keeps its own files under the account directory too (it gets `dir` on boot).
 */
export const ACCOUNTS_DIR = 'accounts'
export const WALLET_FILE = 'wallet.json'
export const METADATA_FILE = 'account.json'
export const LOCK_FILE = 'lock'

/** Account ids are base58 Ed25519 public keys (32 bytes: 43 or 44 characters, rarely fewer). */
export const ACCOUNT_ID_PATTERN = '^[1-9A-HJ-NP-Za-km-z]{32,44}$'
const accountIdRe = new RegExp(ACCOUNT_ID_PATTERN)

export const isAccountId = (s: string): boolean => accountIdRe.test(s)

export const accountsDir = (dataRoot: string): string => join(dataRoot, ACCOUNTS_DIR)

export function accountDir(dataRoot: string, accountId: string): string {
  // The pattern excludes '/', '.' and every other character that could leave the folder.
  if (!isAccountId(accountId)) throw new Error('not an account id')
  return join(accountsDir(dataRoot), accountId)
}
