/**
 * The browser entry of svc's sync library (`npm run build:browser` bundles it into
 * dist/browser/svc.js; docs/browser.md shows how a web app embeds it).
 *
 * - `openBrowserAccount`: an account restored from its mnemonic, on IndexedDB.
 * - `account.account` (AccountEngine): spaces, objects, records, writes and reads, as the
 *   daemon's routes call them.
 * - `liveObjects` / `liveRecords` / `liveQuery`: windowed live queries.
 * - `BrowserSync`: head sync with daemons and hubs over libp2p WebSockets, and files' blocks
 *   fetched from them (`readFile`).
 * - `PushReceiver`: opens push payloads with the keys space rows carry (docs/push.md).
 */
export { openBrowserAccount, browserCryptoProvider, type BrowserAccount, type OpenAccountOptions } from './account.ts'
export { BrowserSync, BROWSER_INGEST_AHEAD, type BrowserSyncOptions, type BrowserHub } from './sync.ts'
export type { ReadFileOptions, ReadProgress } from './files.ts'
export type { FileInfo } from '../modules/files/service.ts'
export { liveQuery, liveObjects, liveRecords, type LiveQuery, type LiveQueryOptions } from './live.ts'
export { browserEnv, macrotask } from './env.ts'
export { verifyInWorkers, type VerifyWorkerOptions, type WorkerVerifier } from './verify-workers.ts'
export { runQuery, type QueryOptions, type QueryResult, type ChangesFrame } from '../query/index.ts'
export { IndexedDbStorageAdapter } from '../storage/indexeddb.ts'
export { newMnemonic, isValidMnemonic, accountKeyFromMnemonic, identityOf } from '../crypto/keys.ts'
export { AccountEngine } from '../space/account-engine.ts'
export { PushReceiver } from '../modules/push/receiver.ts'
export type { SpaceEngine } from '../space/space-engine.ts'
