import { SvcError } from '../../core/errors.ts'

/**
 * Cuts a byte stream into fixed-size chunks (the last one shorter), copying only where a chunk
 * spans input pieces. Refuses with 413 `file.too_large` as soon as more than `max` bytes came,
 * so an endless body costs at most one chunk of memory.
 *
 * With `reuse`, every chunk is a view of one buffer the next chunk overwrites: the consumer
 * must be done with a chunk before it asks for the next (attach is: block crypto reads a block
 * before it returns), and a 1 GiB body then allocates one buffer instead of a thousand.
 * Without it each chunk is the consumer's own.
 */
export async function* chunks(input: AsyncIterable<Uint8Array>, size: number, max: number, reuse = false): AsyncGenerator<Uint8Array> {
  let buf = new Uint8Array(size)
  let fill = 0
  let total = 0
  for await (const piece of input) {
    total += piece.length
    if (total > max) throw new SvcError('file.too_large', `a file may hold at most ${max} bytes`, { limit: max })
    let off = 0
    while (off < piece.length) {
      if (fill === 0 && piece.length - off >= size) {
        yield reuse ? piece.subarray(off, off + size) : piece.slice(off, off + size)
        off += size
        continue
      }
      const n = Math.min(size - fill, piece.length - off)
      buf.set(piece.subarray(off, off + n), fill)
      fill += n
      off += n
      if (fill === size) {
        yield buf
        if (!reuse) buf = new Uint8Array(size)
        fill = 0
      }
    }
  }
  if (fill > 0) yield buf.subarray(0, fill)
}
