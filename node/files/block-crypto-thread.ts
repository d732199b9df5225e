import { parentPort } from 'node:worker_threads'
import { isBlock, openBlock, sealBlock } from '../../sync/modules/files/blocks.ts'
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

parentPort!.on('message', (req: BlockCryptoRequest) => {
  let reply: BlockCryptoReply
  const transfer: ArrayBuffer[] = []
  try {
    if (req.op === 'seal') {
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
