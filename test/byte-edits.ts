import fc from 'fast-check'

/** Up to `max` single-byte edits (overwrite, insert or delete at a position), for fuzzing decoders. */
export type ByteEdit = [at: number, byte: number, kind: 'set' | 'insert' | 'delete']

export const byteEdits = (max: number): fc.Arbitrary<ByteEdit[]> =>
  fc.array(fc.tuple(fc.nat(), fc.integer({ min: 0, max: 255 }), fc.constantFrom('set' as const, 'insert' as const, 'delete' as const)), { minLength: 1, maxLength: max })

/** `bytes` with the edits applied in order (positions wrap around the current length). */
export function applyByteEdits(bytes: Uint8Array, edits: ByteEdit[]): Uint8Array {
  const b = Array.from(bytes)
  for (const [at, byte, kind] of edits) {
    const i = at % (b.length + 1)
    if (kind === 'set' && i < b.length) b[i] = byte
    else if (kind === 'insert') b.splice(i, 0, byte)
    else if (kind === 'delete' && i < b.length) b.splice(i, 1)
  }
  return Uint8Array.from(b)
}
