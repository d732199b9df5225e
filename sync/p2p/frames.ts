import { Uint8ArrayList } from 'uint8arraylist'

/** Why a peer's framing was refused; the stream is reset and the reason counted. */
export type FrameFault = 'frame_too_large' | 'malformed_prefix' | 'empty_frame' | 'read_buffer_full'

export class FrameError extends Error {
  constructor(
    readonly reason: FrameFault,
    detail: string,
  ) {
    super(`${reason}: ${detail}`)
    this.name = 'FrameError'
  }
}

/**
 * Decodes unsigned-varint length-prefixed frames (the framing it-length-prefixed writes) from
 * chunks as they arrive, one frame per `next()` call: the reader pulls only as many frames as
 * it has room for, and the rest stay here as bytes (at most `maxBufferedBytes`), so a chunk of
 * tiny frames never turns into millions of objects at once. A frame announcing more than
 * `maxFrameBytes` is refused before any of it is buffered; an empty frame is refused too (no
 * message is empty, and empty frames are what made a 4 MiB chunk cost millions of handler
 * calls).
 */
export class FrameDecoder {
  private readonly buf = new Uint8ArrayList()
  readonly maxBufferedBytes: number

  constructor(
    private readonly maxFrameBytes: number,
    maxBufferedBytes?: number,
  ) {
    // A partial largest frame with its prefix, and one more read of the same size. The
    // transport passes its real bound (a read is as large as the stream window).
    this.maxBufferedBytes = maxBufferedBytes ?? 2 * (maxFrameBytes + 16)
  }

  /** Bytes received and not yet handed out as frames. */
  get bufferedBytes(): number {
    return this.buf.byteLength
  }

  /** Adds a chunk; throws `read_buffer_full` when the unread bytes would pass the bound. */
  push(chunk: Uint8Array | Uint8ArrayList): void {
    if (this.buf.byteLength + chunk.byteLength > this.maxBufferedBytes) {
      throw new FrameError('read_buffer_full', `${this.buf.byteLength + chunk.byteLength} unread bytes`)
    }
    this.buf.append(chunk)
  }

  /** The next complete frame, or undefined until more bytes arrive. Throws a FrameError. */
  next(): Uint8Array | undefined {
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
      if (this.buf.byteLength >= 10) throw new FrameError('malformed_prefix', 'length prefix longer than 10 bytes')
      return undefined
    }
    if (len === 0) throw new FrameError('empty_frame', 'zero-length frame')
    if (len > this.maxFrameBytes) throw new FrameError('frame_too_large', `frame of ${len} bytes`)
    if (this.buf.byteLength < i + len) return undefined
    // A copy: the frame belongs to the handler, and a plain Uint8Array (not a Buffer). Piece
    // by piece: `subarray` of a frame spanning chunks would concatenate them first, a second
    // copy of every large frame (a 1 MiB block arrives in many chunks).
    const frame = new Uint8Array(len)
    let at = 0
    for (const piece of this.buf.sublist(i, i + len)) {
      frame.set(piece, at)
      at += piece.length
    }
    this.buf.consume(i + len)
    return frame
  }

  /** Drops everything buffered (the stream is gone). */
  clear(): void {
    this.buf.consume(this.buf.byteLength)
  }
}
