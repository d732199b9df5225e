import { describe, expect, it } from 'vitest'
import * as lp from 'it-length-prefixed'
import { FrameDecoder, FrameError } from '../../sync/p2p/frames.ts'

const framed = (...frames: Uint8Array[]) => {
  const parts = frames.map((f) => lp.encode.single(f).subarray())
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0))
  let o = 0
  for (const p of parts) {
    out.set(p, o)
    o += p.length
  }
  return out
}
const reasonOf = (fn: () => unknown) => {
  try {
    fn()
  } catch (err) {
    return err instanceof FrameError ? err.reason : 'other'
  }
  return undefined
}

describe('FrameDecoder', () => {
  it('hands out one frame per call, across chunk boundaries, and keeps the rest as bytes', () => {
    const d = new FrameDecoder(1024)
    const bytes = framed(new Uint8Array([1, 2, 3]), new Uint8Array(300).fill(7), new Uint8Array([9]))
    d.push(bytes.subarray(0, 5))
    expect(d.next()).toEqual(new Uint8Array([1, 2, 3]))
    expect(d.next()).toBeUndefined()
    d.push(bytes.subarray(5))
    expect(d.bufferedBytes).toBe(bytes.length - 4)
    expect(d.next()).toEqual(new Uint8Array(300).fill(7))
    expect(d.next()).toEqual(new Uint8Array([9]))
    expect(d.next()).toBeUndefined()
    expect(d.bufferedBytes).toBe(0)
  })

  it('a frame arriving in many pieces is one plain Uint8Array of its own, byte for byte', () => {
    const d = new FrameDecoder(1 << 20)
    const body = new Uint8Array(200_000).map((_, i) => (i * 7) & 255)
    const bytes = framed(body, new Uint8Array([5]))
    for (let o = 0; o < bytes.length; o += 999) d.push(Buffer.from(bytes.subarray(o, Math.min(bytes.length, o + 999))))
    const frame = d.next()!
    expect(Object.getPrototypeOf(frame)).toBe(Uint8Array.prototype)
    expect(frame.byteOffset).toBe(0)
    expect(frame.buffer.byteLength).toBe(body.length)
    expect(Buffer.from(frame).equals(Buffer.from(body))).toBe(true)
    expect(d.next()).toEqual(new Uint8Array([5]))
  })

  it('a chunk of a million tiny frames materializes only the frames pulled', () => {
    const d = new FrameDecoder(4 * 1024 * 1024)
    const chunk = new Uint8Array(2_000_000)
    for (let i = 0; i < chunk.length; i += 2) {
      chunk[i] = 1
      chunk[i + 1] = 0xaa
    }
    d.push(chunk)
    for (let i = 0; i < 64; i++) expect(d.next()).toEqual(new Uint8Array([0xaa]))
    expect(d.bufferedBytes).toBe(chunk.length - 128)
  })

  it('refuses an empty frame, a frame over the limit before its body arrives, and a prefix of more than 10 bytes', () => {
    const empty = new FrameDecoder(4 * 1024 * 1024)
    empty.push(new Uint8Array(4 * 1024))
    expect(reasonOf(() => empty.next())).toBe('empty_frame')
    const big = new FrameDecoder(1024)
    big.push(lp.encode.single(new Uint8Array(1025)).subarray(0, 3))
    expect(reasonOf(() => big.next())).toBe('frame_too_large')
    const prefix = new FrameDecoder(1024)
    prefix.push(new Uint8Array(10).fill(0x80))
    expect(reasonOf(() => prefix.next())).toBe('malformed_prefix')
  })

  it('refuses to buffer more than its bound of unread bytes', () => {
    const d = new FrameDecoder(1024)
    expect(d.maxBufferedBytes).toBe(2 * (1024 + 16))
    d.push(new Uint8Array(2000).fill(1))
    expect(reasonOf(() => d.push(new Uint8Array(100)))).toBe('read_buffer_full')
  })
})
