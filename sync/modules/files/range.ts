/**
 * An HTTP `Range` header against a file of `size` bytes (RFC 9110 14.1.2, single ranges only):
 * undefined when there is none (the whole file, 200), an inclusive `{start, end}` to serve as
 * 206, or 'invalid' (416 with `Content-Range: bytes * /size`) for a malformed header, several
 * ranges, or a range that starts past the end.
 */
export function parseRange(header: string | undefined, size: number): { start: number; end: number } | 'invalid' | undefined {
  if (header === undefined) return undefined
  const m = /^bytes=(\d*)-(\d*)$/.exec(header.trim())
  if (!m || (m[1] === '' && m[2] === '')) return 'invalid'
  if (m[1] === '') {
    // Suffix: the last n bytes (all of a shorter file); zero bytes cannot be served.
    const n = Number(m[2])
    if (!Number.isSafeInteger(n) || n === 0 || size === 0) return 'invalid'
    return { start: Math.max(0, size - n), end: size - 1 }
  }
  const start = Number(m[1])
  const end = m[2] === '' ? size - 1 : Math.min(Number(m[2]), size - 1)
  if (!Number.isSafeInteger(start) || !Number.isSafeInteger(end) || start >= size || start > end) return 'invalid'
  return { start, end }
}
