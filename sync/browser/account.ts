import { SvcError } from '../core/errors.ts'
import type { Env } from '../core/env.ts'
import { errField, silentLogger, type Logger } from '../core/log.ts'
import { accountKeyFromMnemonic, identityOf, keyPairFromSeed, newDeviceKey, DEFAULT_DERIVATION_INDEX } from '../crypto/keys.ts'
import type { WalletKeys } from '../crypto/wallet.ts'
import { defaultCryptoProvider, type CryptoProvider } from '../crypto/provider.ts'
import { sha256 as nobleSha256 } from '@noble/hashes/sha2.js'
import { createSHA256 } from 'hash-wasm'
import { IndexedDbStorageAdapter } from '../storage/indexeddb.ts'
import type { StorageAdapter } from '../storage/adapter.ts'
import { AccountEngine } from '../space/account-engine.ts'
import type { AnyModule } from '../space/module.ts'
import { DEFAULT_MODULES } from '../modules/index.ts'
import { browserEnv } from './env.ts'
import { verifyInWorkers, type WorkerVerifier } from './verify-workers.ts'

/** Where the page keeps what is its own and not the account's: this device's key. */
const DEVICE_STORE = 'browser-device'
const DEVICE_KEY = 'key'

export interface OpenAccountOptions {
  /** The account's BIP39 phrase; the account key is derived from it in the page. */
  mnemonic: string
  /** Derivation index (default 1, as the daemon's). */
  index?: number
  /** IndexedDB database of this account (default `svc-<accountId>`). */
  dbName?: string
  /** Shown in the account's device list (default `browser <short id>`). */
  deviceName?: string
  /** The modules every space runs (default the release's, as the daemon's). */
  modules?: readonly AnyModule[]
  /** Tests and benchmarks pass their own; default the best this browser has. */
  crypto?: CryptoProvider
  env?: Env
  /** Default a fresh IndexedDB adapter on `dbName`. */
  storage?: StorageAdapter
  /** Where the account logs (default: nowhere). */
  log?: Logger
}

/** An account opened in the page: the engine, its keys and the storage under it. */
export interface BrowserAccount {
  readonly account: AccountEngine
  readonly keys: WalletKeys
  /** This browser's device id (its libp2p peer id's key), listed in `GET /v1/devices`. */
  readonly deviceId: string
  readonly storage: StorageAdapter
  readonly crypto: CryptoProvider
  readonly env: Env
  close(): Promise<void>
}

/**
 * The page's crypto: WebCrypto Ed25519 when this browser has it (probed with a real sign and
 * verify, sync/crypto/provider.ts), noble otherwise; the payload cipher is noble's (WebCrypto
 * has no ChaCha20-Poly1305). SHA-256 (every received change's id) is hash-wasm's WebAssembly
 * one, about twice noble's speed on change-sized inputs, checked against noble once here;
 * noble's when WebAssembly is unavailable (WebCrypto's digest is only asynchronous).
 */
export async function browserCryptoProvider(log: Logger = silentLogger): Promise<CryptoProvider> {
  const p = await defaultCryptoProvider()
  const wasm = p.sha256
    ? undefined
    : await wasmSha256().catch((err: unknown) => {
        log.debug('WebAssembly SHA-256 unavailable, using noble', { err: errField(err) })
        return undefined
      })
  return { ...p, name: `browser-${p.name}`, sha256: p.sha256 ?? wasm ?? ((b) => nobleSha256(b)) }
}

async function wasmSha256(): Promise<(bytes: Uint8Array) => Uint8Array> {
  const hasher = await createSHA256()
  // One hasher, reused: safe because the digest is computed synchronously in one call.
  const hash = (bytes: Uint8Array) => hasher.init().update(bytes).digest('binary')
  const probe = new Uint8Array(300).map((_, i) => i * 31)
  const a = hash(probe)
  const b = nobleSha256(probe)
  if (a.length !== 32 || a.some((x, i) => x !== b[i])) throw new Error('hash-wasm SHA-256 disagrees with noble')
  return hash
}

/**
 * Restores an account from its mnemonic in the page: the account key is derived here, this
 * browser's device key is made once and kept in the account's IndexedDB database (so a reload
 * is the same device), the engine opens on IndexedDB, and the device records itself in the
 * tech space's device list, which reaches the account's other devices with the next sync.
 */
export async function openBrowserAccount(o: OpenAccountOptions): Promise<BrowserAccount> {
  const env = o.env ?? browserEnv
  const log = o.log ?? silentLogger
  const accountKey = accountKeyFromMnemonic(o.mnemonic, o.index ?? DEFAULT_DERIVATION_INDEX)
  const accountId = identityOf(accountKey.publicKey)
  const storage = o.storage ?? new IndexedDbStorageAdapter({ dbName: o.dbName ?? `svc-${accountId}` })
  let account: AccountEngine | undefined
  let ownWorkers: WorkerVerifier | undefined
  try {
    const device = await deviceKey(storage, env, accountId)
    // Signatures of received changes verify in workers, off the page's thread (verify-workers.ts).
    if (!o.crypto) ownWorkers = verifyInWorkers(await browserCryptoProvider(log))
    const crypto = o.crypto ?? ownWorkers!
    const workers = ownWorkers
    account = await AccountEngine.open({ storage, crypto, env, accountKey, modules: o.modules ?? DEFAULT_MODULES, log })
    const deviceId = identityOf(device.publicKey)
    await account.devices.register(deviceId, o.deviceName ?? `browser ${deviceId.slice(-6)}`)
    const engine = account
    const keys: WalletKeys = { account: accountKey, device, index: o.index ?? DEFAULT_DERIVATION_INDEX }
    return {
      account: engine,
      keys,
      deviceId,
      storage,
      crypto,
      env,
      async close() {
        await engine.close()
        await storage.close()
        workers?.close()
      },
    }
  } catch (err) {
    // The open's own error goes up; these only clean up after it.
    await account?.close().catch((e: unknown) => log.debug('closing the account after a failed open failed', { err: errField(e) }))
    await storage.close().catch((e: unknown) => log.debug('closing storage after a failed open failed', { err: errField(e) }))
    ownWorkers?.close()
    throw err
  }
}

/**
 * This browser's device key for the account: read from the database, or made and stored on
 * first use. A database that holds another account's device is refused rather than mixed.
 */
async function deviceKey(storage: StorageAdapter, env: Env, accountId: string) {
  const stored = await storage.get(DEVICE_STORE, DEVICE_KEY)
  if (stored) {
    if (stored.length !== 32 + accountId.length || new TextDecoder().decode(stored.subarray(32)) !== accountId) {
      throw new SvcError('auth.device_key_corrupt', 'this database belongs to another account')
    }
    return keyPairFromSeed(stored.slice(0, 32))
  }
  const key = newDeviceKey(env)
  const tag = new TextEncoder().encode(accountId)
  const value = new Uint8Array(32 + tag.length)
  value.set(key.privateKey)
  value.set(tag, 32)
  await storage.commit({ puts: [{ store: DEVICE_STORE, key: DEVICE_KEY, value }], dels: [] })
  return key
}
