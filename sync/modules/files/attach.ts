import { hmac } from '@noble/hashes/hmac.js'
import { concatBytes, utf8 } from '../../core/encoding.ts'
import { SvcError } from '../../core/errors.ts'
import { errField } from '../../core/log.ts'
import { toBase58 } from '../../core/ids.ts'
import type { JsonObject } from '../../crdt/ops.ts'
import { sha256 } from '../../crypto/hash.ts'
import type { CryptoProvider } from '../../crypto/provider.ts'
import type { SpaceEngine } from '../../space/space-engine.ts'
import { toBase64 } from '../../core/base64.ts'
import type { BlockCrypto, HeldBlock } from './block-crypto.ts'
import { filesSecret, rootContentId } from './blocks.ts'
import { chunks } from './chunker.ts'
import { FILES } from './limits.ts'
import type { BlockStore } from './stores.ts'

export interface AttachMeta {
  name: string
  mime: string
}

/** The record fields attach computed (the service adds id, creator and createdAt). */
export interface AttachedContent {
  fields: JsonObject
  size: number
  inline: boolean
  hash: string
  blockIds: string[]
}

/** Blocks written per storage batch: one commit per few MiB instead of one per block. */
const BATCH_BLOCKS = 8
/**
 * Batches being written while the next blocks are sealed: sealing (CPU) and writing (I/O)
 * overlap, and memory stays bounded at (WRITES_IN_FLIGHT + 1) batches.
 */
const WRITES_IN_FLIGHT = 2
/**
 * Blocks handed to the block crypto and not yet back: where it runs on another thread, the
 * next blocks are read from the body while these are sealed. Bounded, so memory is too.
 */
const SEALS_IN_FLIGHT = 8

/** The space's current files secret; 409 `file.not_available` while the space has no read key here. */
export function currentSecret(space: SpaceEngine): Uint8Array {
  const keyId = space.replica.acl.current().readKeyId
  const readKey = keyId === undefined ? undefined : space.replica.keyring.get(keyId)
  if (!readKey) throw new SvcError('file.not_available', 'this device holds no read key of the space yet')
  return filesSecret(readKey)
}

/**
 * Reads an attach body through: chunk, seal and store each block (a block already stored in
 * the space is not written again: dedup), or keep the bytes inline when the whole body fits
 * `inlineMax`. Memory stays at a few blocks whatever the body's size.
 */
export async function ingestContent(
  space: SpaceEngine,
  store: BlockStore,
  crypto: CryptoProvider,
  blockCrypto: BlockCrypto,
  body: AsyncIterable<Uint8Array>,
  blockSize = FILES.blockSize,
  max = FILES.attachMax,
): Promise<AttachedContent> {
  const secret = currentSecret(space)
  const hash = crypto.sha256 ?? sha256
  const ids: string[] = []
  const keys: string[] = []
  let size = 0
  let first: Uint8Array | undefined
  let pending: HeldBlock[] = []
  // A put of a block already stored is a no-op for every store (dedup), so no `has` first.
  const writing: Array<Promise<void>> = []
  let failed: Error | undefined
  const release = (blocks: readonly HeldBlock[]) => {
    for (const b of blocks) b.release?.()
  }
  const flush = async () => {
    if (pending.length > 0) {
      const batch = pending
      pending = []
      const w = store
        .put(
          space.spaceId,
          batch.map((b) => ({ id: b.id, bytes: b.bytes })),
        )
        .catch((err: unknown) => {
          failed ??= err instanceof Error ? err : new Error(String(err))
        })
        // Written (or failed): the bytes' memory goes back to the block crypto.
        .finally(() => release(batch))
      writing.push(w)
      void w.finally(() => writing.splice(writing.indexOf(w), 1))
    }
    while (writing.length >= WRITES_IN_FLIGHT) await Promise.race(writing)
    if (failed) throw failed
  }
  // Seals in body order; each settles into `ids`, `keys` and the write batch in that order.
  const sealing: Array<Promise<HeldBlock>> = []
  const settleOne = async () => {
    const b = await sealing.shift()!
    ids.push(b.id)
    keys.push(toBase58(b.key))
    pending.push(b)
    if (pending.length >= BATCH_BLOCKS) await flush()
  }
  const seal = async (plain: Uint8Array) => {
    const p = blockCrypto.seal(secret, plain)
    // Awaited in order below (the failure goes up from there); this only keeps it from being
    // unhandled while it waits its turn.
    p.catch((err: unknown) => space.log.debug('sealing a block of an attached file failed', { err: errField(err) }))
    sealing.push(p)
    while (sealing.length > SEALS_IN_FLIGHT) await settleOne()
  }
  // On a failure: seals still out settle (nothing of theirs is stored), and every block not
  // being written gives its memory back before the error goes up.
  const abandon = async () => {
    for (const r of await Promise.allSettled(sealing.splice(0))) if (r.status === 'fulfilled') r.value.release?.()
    release(pending.splice(0))
    await Promise.allSettled(writing)
  }
  const drain = async () => {
    while (sealing.length > 0) await settleOne()
    await flush()
    await Promise.all(writing)
    if (failed) throw failed
  }
  try {
    // One block buffer for the whole body: seal reads a chunk before it returns (BlockCrypto).
    for await (const chunk of chunks(body, blockSize, max, true)) {
      size += chunk.length
      // The first chunk waits: if it is the whole body and small, the file is inline.
      if (first === undefined && size === chunk.length) {
        first = chunk.slice()
        continue
      }
      if (first) {
        await seal(first)
        first = undefined
      }
      await seal(chunk)
      await space.env.yield?.()
    }
  } catch (err) {
    await abandon()
    throw err
  }
  if (first && first.length <= FILES.inlineMax) {
    const h = rootContentId(secret, hash(first))
    return { fields: { size, hash: h, inline: toBase64(first) }, size, inline: true, hash: h, blockIds: [] }
  }
  if (size === 0) {
    const h = rootContentId(secret, hash(new Uint8Array(0)))
    return { fields: { size: 0, hash: h, inline: '' }, size: 0, inline: true, hash: h, blockIds: [] }
  }
  try {
    if (first) await seal(first)
    await drain()
  } catch (err) {
    await abandon()
    throw err
  }
  // Equal plaintext gives equal block ids in one space, so the keyed root over them is equal too.
  const root = toBase58(hmac(sha256, secret, concatBytes(utf8('root-blocks'), utf8(ids.join('.')))))
  return { fields: { size, hash: root, blockSize, blocks: ids, keys }, size, inline: false, hash: root, blockIds: ids }
}
