import type { CryptoProvider } from '../../crypto/provider.ts'
import { sha256 } from '../../crypto/hash.ts'
import { isBlock, openBlock, sealBlock, type SealedBlock } from './blocks.ts'

/**
 * A sealed block whose bytes may sit in memory the block crypto lends (the daemon's buffers
 * shared with its thread): they stay valid until `release`, which the holder calls once it is
 * done with them (written). Without `release` the bytes are the holder's.
 */
export type HeldBlock = SealedBlock & { release?: () => void }

/**
 * The byte work files do on whole blocks: seal a plaintext block (attach), check a fetched
 * block against its address and open a stored one (download). It is most of the CPU an attach
 * or a transfer costs, so a host with threads runs it off the event loop
 * (node/files/worker-block-crypto.ts); the browser and tests run it inline. Both compute the
 * same bytes (blocks.ts), so where a block was sealed never shows.
 *
 * Inputs are either read by the time the call returns its promise (a worker gets a copy, made
 * as the request is posted), so the caller may reuse them at once (attach reads the whole body
 * through one block buffer), or given: `isBlock` always takes its bytes and hands them back,
 * `open` takes them when told they are the caller's to give. A given buffer may move to the
 * worker whole (no copy either way); the caller must not touch it after the call.
 */
export interface BlockCrypto {
  seal(secret: Uint8Array, plain: Uint8Array): Promise<HeldBlock>
  /**
   * The plaintext; rejects when the key does not open the bytes. With `give`, the bytes are
   * the caller's own (a store's `get` answers such bytes) and it is done with them.
   */
  open(key: Uint8Array, bytes: Uint8Array, give?: boolean): Promise<Uint8Array>
  /** The same bytes back (maybe a new view of them) when they are the block `id` names, else undefined. */
  isBlock(id: string, bytes: Uint8Array): Promise<Uint8Array | undefined>
}

/** Block crypto on the calling thread, with the account's crypto provider. */
export function inlineBlockCrypto(crypto: CryptoProvider): BlockCrypto {
  const hash = crypto.sha256 ?? sha256
  return {
    seal: async (secret, plain) => sealBlock(secret, plain, crypto.aead, hash),
    open: async (key, bytes) => openBlock(key, bytes, crypto.aead),
    isBlock: async (id, bytes) => (isBlock(id, bytes, hash) ? bytes : undefined),
  }
}
