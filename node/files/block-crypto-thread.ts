import { parentPort } from 'node:worker_threads'
import { isBlock, openBlock, sealBlock, sealBlockInto } from '../../sync/modules/files/blocks.ts'
import { nodeAead, nodeCryptoProvider } from '../crypto/node-provider.ts'
import type { BlockCryptoReply, BlockCryptoRequest } from './worker-block-crypto.ts'

/**
 * The block crypto thread's side (started by worker-block-crypto.ts): the same functions the
 * inline block crypto runs, on the daemon's native primitives. Results travel back by
 * transfer, so a sealed or opened block is never copied between threads.
 */
const hash = nodeCryptoProvider({ verify: 'sync' }).sha256!

/** A buffer that may be transferred: the whole of its own ArrayBuffer (a small Buffer can be a view into Node's shared pool). */
const own = (b: Uint8Array): Uint8Array => (b.byteOffset === 0 && b.byteLength === b.buffer.byteLength ? b : b.slice())

/** The slots the daemon shares (worker-block-crypto.ts), sent before any request that uses them. */
let slots: { buffer: SharedArrayBuffer; slotBytes: number } | undefined

parentPort!.on('message', (req: BlockCryptoRequest) => {
  if (req.op === 'slots') {
    slots = { buffer: req.buffer, slotBytes: req.slotBytes }
    return
  }
  let reply: BlockCryptoReply
  const transfer: ArrayBuffer[] = []
  try {
    if (req.op === 'sealSlot') {
      // The ciphertext (plaintext + tag) goes over the plaintext in the same slot.
      const at = req.slot * slots!.slotBytes
      const b = sealBlockInto(req.secret, new Uint8Array(slots!.buffer, at, req.length), nodeAead, hash, new Uint8Array(slots!.buffer, at, slots!.slotBytes))
      reply = { n: req.n, ok: true, id: b.id, key: b.key, length: b.bytes.length }
    } else if (req.op === 'seal') {
      const b = sealBlock(req.secret, req.bytes, nodeAead, hash)
      const bytes = own(b.bytes)
      transfer.push(bytes.buffer as ArrayBuffer)
      reply = { n: req.n, ok: true, id: b.id, key: b.key, bytes }
    } else if (req.op === 'open') {
      const bytes = own(openBlock(req.key, req.bytes, nodeAead))
      transfer.push(bytes.buffer as ArrayBuffer)
      reply = { n: req.n, ok: true, bytes }
    } else {
      // The bytes came by transfer and go back the same way (the caller keeps them).
      transfer.push(req.bytes.buffer as ArrayBuffer)
      reply = { n: req.n, ok: true, is: isBlock(req.id, req.bytes, hash), bytes: req.bytes }
    }
  } catch (err) {
    reply = { n: req.n, ok: false, message: (err as Error).message }
  }
  parentPort!.postMessage(reply, transfer)
})
