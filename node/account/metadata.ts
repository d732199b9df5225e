import { SvcError } from '../../sync/core/errors.ts'

/**
 * Account metadata file (`account.json`, next to the wallet): public, device-local facts about
 * the account on this device. Profile data (name, icon) is synced by the engine, not kept here.
 */
export interface AccountMetadata {
  format: 'svc-account'
  version: 1
  accountId: string
  /** This device's id: base58 of the device public key (its libp2p peer id). */
  deviceId: string
  /** BIP39 derivation index the account key came from. */
  derivationIndex: number
  /** ISO 8601 UTC time the wallet was written on this device. */
  createdAt: string
  /** CRDT/change format version this account's data was last written with. */
  crdtVersion: number
}

export function encodeMetadata(m: AccountMetadata): string {
  return JSON.stringify(m, null, 2) + '\n'
}

export function decodeMetadata(text: string): AccountMetadata {
  let m: AccountMetadata
  try {
    m = JSON.parse(text) as AccountMetadata
  } catch {
    throw new SvcError('auth.device_key_corrupt', 'account metadata file is not readable')
  }
  if (
    m?.format !== 'svc-account' ||
    m.version !== 1 ||
    typeof m.accountId !== 'string' ||
    typeof m.deviceId !== 'string' ||
    !Number.isInteger(m.derivationIndex) ||
    !Number.isInteger(m.crdtVersion)
  ) {
    throw new SvcError('auth.device_key_corrupt', 'account metadata file is not readable')
  }
  return m
}
