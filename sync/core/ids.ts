import bs58 from 'bs58'

export const toBase58 = (bytes: Uint8Array): string => bs58.encode(bytes)
export const fromBase58 = (s: string): Uint8Array => bs58.decode(s)

const BASE58 = /^[1-9A-HJ-NP-Za-km-z]+$/
export const isBase58 = (s: unknown): s is string => typeof s === 'string' && s.length > 0 && BASE58.test(s)
