/**
 * Standard base64, the one module for it: inline file bytes in a record, the space row's push
 * fields and the push provider envelope. `btoa`/`atob` exist in browsers, React Native's Hermes
 * and Node, so the code that uses it runs everywhere.
 */
export function toBase64(bytes: Uint8Array): string {
  let s = ''
  // fromCharCode takes its characters as arguments: in slices, below every engine's argument limit.
  for (let i = 0; i < bytes.length; i += 0x8000) s += String.fromCharCode(...bytes.subarray(i, i + 0x8000))
  return btoa(s)
}

/** Throws on text that is not base64 (atob is strict where Node's Buffer is lenient). */
export function fromBase64(text: string): Uint8Array {
  const s = atob(text)
  const out = new Uint8Array(s.length)
  for (let i = 0; i < s.length; i++) out[i] = s.charCodeAt(i)
  return out
}
