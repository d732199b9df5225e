/**
 * Standard base64 (the space row's `push` fields and the provider envelope). `btoa`/`atob` exist
 * in browsers, React Native's Hermes and Node, so the receiver helper runs everywhere.
 */
export function toBase64(bytes: Uint8Array): string {
  let s = ''
  for (let i = 0; i < bytes.length; i += 0x8000) s += String.fromCharCode(...bytes.subarray(i, i + 0x8000))
  return btoa(s)
}

/** Throws on text that is not base64. */
export function fromBase64(text: string): Uint8Array {
  const s = atob(text)
  const out = new Uint8Array(s.length)
  for (let i = 0; i < s.length; i++) out[i] = s.charCodeAt(i)
  return out
}
