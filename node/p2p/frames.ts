import { Uint8ArrayList } from 'uint8arraylist'

export class FrameTooLarge extends Error {}

/**
 * Decodes unsigned-varint length-prefixed frames (the framing it-length-prefixed writes) from
 * chunks as they arrive. Unlike @libp2p/utils' decoder it yields empty frames too, and it
 * refuses a frame announcing more than `maxFrameBytes` before buffering any of it.
 */
export class FrameDecoder {
  private readonly buf = new Uint8ArrayList()
  constructor(private readonly maxFrameBytes: number) {}

  *decode(chunk: Uint8Array | Uint8ArrayList): Generator<Uint8Array> {
    this.buf.append(chunk)
    for (;;) {
      let len = 0
      let shift = 0
      let i = 0
      let complete = false
      for (; i < this.buf.byteLength && i < 10; i++) {
        const b = this.buf.get(i)
        len += (b & 0x7f) * 2 ** shift
        shift += 7
        if ((b & 0x80) === 0) {
          complete = true
          i++
          break
        }
      }
      if (!complete) {
        if (this.buf.byteLength >= 10) throw new FrameTooLarge('malformed length prefix')
        return
      }
      if (len > this.maxFrameBytes) throw new FrameTooLarge(`frame of ${len} bytes`)
      if (this.buf.byteLength < i + len) return
      // A copy: the frame belongs to the handler, and a plain Uint8Array (not a Buffer).
      const frame = new Uint8Array(len)
      if (len) frame.set(this.buf.subarray(i, i + len))
      this.buf.consume(i + len)
      yield frame
    }
  }
}
