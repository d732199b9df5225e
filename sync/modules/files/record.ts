import { SvcError } from '../../core/errors.ts'
import { fromBase58, isBase58 } from '../../core/ids.ts'
import type { JsonObject } from '../../crdt/ops.ts'
import { fromBase64 } from '../../core/base64.ts'
import { FILES } from './limits.ts'

/** The files dataset kind and its one collection: file records live in an object's tree. */
export const FILES_KIND = 'files'
export const FILES_COLLECTION = 'files'

/**
 * A file record (docs/files.md "Record"), as written by attach and read back after merge. Every
 * field is create-only: attach writes the whole record in one set, delete tombstones it.
 */
export interface FileRecord {
  id: string
  objectId: string
  name: string
  mime: string
  size: number
  creator: string
  createdAt: { $date: string }
  /** Keyed root content id (blocks.ts rootContentId). */
  hash: string
  /** Inline files: the bytes, base64. */
  inline?: Uint8Array
  /** Blocked files: plaintext bytes per block, block addresses and keys in order. */
  blockSize?: number
  blocks?: string[]
  keys?: Uint8Array[]
  /** Image dimensions when attach recognised an image. */
  width?: number
  height?: number
}

const bad = (id: string, why: string) => new SvcError('file.not_available', `the file record is malformed (${why})`, { fileId: id })

/**
 * Checks a record a peer may have written: a member can write anything into the collection, so
 * nothing here trusts shapes or lengths (a block list that does not cover `size` exactly, a key
 * that is not 32 bytes, an address that is not base58 of 32 bytes is refused).
 */
export function parseFileRecord(objectId: string, doc: JsonObject): FileRecord {
  // eslint-disable-next-line @typescript-eslint/no-base-to-string -- a record's id as text, whatever a peer stored
  const id = String(doc.id)
  const { name, mime, size, creator, createdAt, hash } = doc
  if (typeof name !== 'string' || typeof mime !== 'string' || typeof creator !== 'string' || typeof hash !== 'string') throw bad(id, 'fields')
  if (typeof size !== 'number' || !Number.isSafeInteger(size) || size < 0 || size > FILES.attachMax) throw bad(id, 'size')
  const rec: FileRecord = { id, objectId, name, mime, size, creator, hash, createdAt: (createdAt as { $date: string }) ?? { $date: new Date(0).toISOString() } }
  if (typeof doc.width === 'number') rec.width = doc.width
  if (typeof doc.height === 'number') rec.height = doc.height
  if (typeof doc.inline === 'string') {
    const bytes = fromBase64(doc.inline)
    if (bytes.length !== size) throw bad(id, 'inline length')
    rec.inline = bytes
    return rec
  }
  const { blockSize, blocks, keys } = doc
  if (typeof blockSize !== 'number' || !Number.isSafeInteger(blockSize) || blockSize < 1024 || blockSize > FILES.blockSize) throw bad(id, 'blockSize')
  if (!Array.isArray(blocks) || !Array.isArray(keys) || blocks.length !== keys.length || blocks.length !== Math.ceil(size / blockSize)) throw bad(id, 'block list')
  const ks: Uint8Array[] = []
  for (let i = 0; i < blocks.length; i++) {
    const b = blocks[i]
    const k = keys[i]
    if (!isBase58(b) || b.length > 50 || !isBase58(k) || k.length > 50) throw bad(id, 'block entry')
    const key = fromBase58(k)
    if (key.length !== 32) throw bad(id, 'key length')
    ks.push(key)
  }
  rec.blockSize = blockSize
  rec.blocks = blocks as string[]
  rec.keys = ks
  return rec
}

/** Plaintext length of block `i` of a blocked file. */
export const blockLength = (rec: FileRecord, i: number): number => Math.min(rec.blockSize!, rec.size - i * rec.blockSize!)
