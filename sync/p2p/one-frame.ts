import type { Stream } from '@libp2p/interface'
import * as lp from 'it-length-prefixed'
import { FrameDecoder } from './frames.ts'

/**
 * One length-prefixed frame in, one out, per stream: the framing of the request/answer
 * protocols beside head sync (the push protocol, the hub's control protocol), on both sides and
 * in both runtimes (the daemon, the push node, the hub, a page). Reading stops at the first
 * whole frame, at `maxBytes` or at the deadline, whichever comes first; nothing a peer sends is
 * buffered past one frame.
 */
export function readOneFrame(stream: Stream, maxBytes: number, timeoutMs: number): Promise<Uint8Array> {
  return new Promise((resolve, reject) => {
    const decoder = new FrameDecoder(maxBytes)
    let done = false
    const finish = (err: Error | undefined, frame?: Uint8Array) => {
      if (done) return
      done = true
      clearTimeout(timer)
      stream.removeEventListener('message', onMessage)
      stream.removeEventListener('close', onClose)
      if (err) reject(err)
      else resolve(frame!)
    }
    const onMessage = (evt: { data: Uint8Array | { subarray(): Uint8Array } }) => {
      try {
        decoder.push(evt.data as Uint8Array)
        const frame = decoder.next()
        if (frame) finish(undefined, frame)
      } catch (err) {
        stream.abort(err as Error)
        finish(err as Error)
      }
    }
    const onClose = () => finish(new Error('stream closed before a frame'))
    const timer = setTimeout(() => {
      stream.abort(new Error('frame timeout'))
      finish(new Error('frame timeout'))
    }, timeoutMs)
    stream.addEventListener('message', onMessage)
    stream.addEventListener('close', onClose)
  })
}

export function writeFrame(stream: Stream, bytes: Uint8Array): void {
  stream.send(lp.encode.single(bytes))
}
