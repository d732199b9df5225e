/**
 * Node-only: imported by the CLI and the tests, never by the runner (sim/ otherwise runs on
 * sync/ alone). The simulator runs one event at a time, so it verifies inline rather than on
 * the thread pool (node/crypto/node-provider.ts says why the node:crypto path is used at all).
 */
import type { CryptoProvider } from '../sync/crypto/provider.ts'
import { nodeCryptoProvider } from '../node/crypto/node-provider.ts'

export function nodeSyncCryptoProvider(): CryptoProvider {
  return nodeCryptoProvider({ verify: 'sync' })
}
