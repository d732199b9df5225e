import type { Stream } from '@libp2p/interface'
import * as lp from 'it-length-prefixed'

/**
 * One length-prefixed frame in, one out, per stream: the push protocol's framing on both sides
 * (the daemon's client and the push node), and the hub's control protocol's on the hub. The
 * reader is the one a page uses too (sync/p2p/one-frame.ts): it stops at the first whole frame,
 * at `maxBytes` or at the deadline, whichever comes first.
 */
export { readOneFrame } from '../../sync/p2p/one-frame.ts'

export function writeFrame(stream: Stream, bytes: Uint8Array): void {
  stream.send(lp.encode.single(bytes))
}
