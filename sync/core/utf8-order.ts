/**
 * Compares strings by UTF-8 byte order (= Unicode code point order), the order SQLite's BINARY
 * collation and the StorageAdapter spec use.
 */
export function compareUtf8(a: string, b: string): number {
  // UTF-16 code unit order equals UTF-8 byte order except for surrogates vs U+E000..U+FFFF.
  const n = Math.min(a.length, b.length)
  for (let i = 0; i < n; i++) {
    let x = a.charCodeAt(i)
    let y = b.charCodeAt(i)
    if (x === y) continue
    if (x >= 0xd800 && x <= 0xdfff) x += 0x2000
    else if (x >= 0xe000) x -= 0x800
    if (y >= 0xd800 && y <= 0xdfff) y += 0x2000
    else if (y >= 0xe000) y -= 0x800
    return x - y
  }
  return a.length - b.length
}
