/**
 * Bytes known to be ASCII as one flat JS string. Ids and most CBOR text are built this way
 * on every ingested change, so it avoids the allocations of the obvious forms: a subarray
 * view per call, and a fresh array per call for String.fromCharCode.apply. Scratch arrays are
 * kept per length (JS is single-threaded, and apply copies its arguments out).
 */
const scratch: number[][] = []

export function asciiString(bytes: ArrayLike<number>, from: number, to: number): string {
  const n = to - from
  if (n === 0) return ''
  if (n > 128) {
    let s = ''
    for (let i = from; i < to; i += 128) s += asciiString(bytes, i, Math.min(to, i + 128))
    return s
  }
  let codes = scratch[n]
  if (!codes) scratch[n] = codes = new Array<number>(n).fill(0)
  for (let i = 0; i < n; i++) codes[i] = bytes[from + i]
  return String.fromCharCode.apply(null, codes)
}
