/**
 * xorshift32 byte stream: reproducible, not secure. For test data, benchmarks and the test
 * environment's randomness, never for keys.
 */
export function xorshiftBytes(seed: number): (n: number) => Uint8Array {
  let x = seed >>> 0 || 1
  return (n) => {
    const out = new Uint8Array(n)
    for (let i = 0; i < n; i++) {
      x ^= x << 13
      x ^= x >>> 17
      x ^= x << 5
      out[i] = x & 0xff
    }
    return out
  }
}

/** `n` reproducible bytes from `seed`. */
export const pattern = (n: number, seed = 1): Uint8Array => xorshiftBytes(seed)(n)
