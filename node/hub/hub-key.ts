import { randomBytes } from 'node:crypto'
import { mkdirSync, readFileSync } from 'node:fs'
import { dirname } from 'node:path'
import { keyPairFromSeed, type KeyPair } from '../../sync/crypto/keys.ts'
import { writeFileAtomic } from '../account/files.ts'

/**
 * The hub's key: a 32-byte seed in hex in a file of mode 0600, made on first start. It is the
 * hub's libp2p peer id and the identity it proves on head sync and signs admission tokens with;
 * hub processes behind one address share it (docs/hub.md "Two processes behind one address").
 */
export function loadOrCreateHubKey(file: string, create = true): KeyPair {
  let hex: string | undefined
  try {
    hex = readFileSync(file, 'utf8').trim()
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT' || !create) throw err
  }
  if (hex === undefined) {
    hex = randomBytes(32).toString('hex')
    mkdirSync(dirname(file), { recursive: true, mode: 0o700 })
    writeFileAtomic(file, `${hex}\n`, 0o600, 'full')
  }
  if (!/^[0-9a-f]{64}$/.test(hex)) throw new Error(`${file} does not hold a hub key (64 hex digits)`)
  return keyPairFromSeed(Buffer.from(hex, 'hex'))
}
