import sharp from 'sharp'
import { SvcError } from '../../sync/core/errors.ts'
import { variantId } from '../../sync/modules/files/cache.ts'
import { FILES } from '../../sync/modules/files/limits.ts'
import type { FilesService } from '../../sync/modules/files/service.ts'

/**
 * Image variants (`?variant=w<width>`): the file resized to a width with sharp (libvips; its npm
 * packages ship prebuilt binaries, so nothing compiles here), in the source's format. A variant
 * is cached like content: kept in the block store under a local id, counted by `cache` size,
 * reclaimed by `free` and by the sweep once its file is gone. 400 `file.variant_invalid` for a
 * variant name outside the list, or a file that is not an image sharp can read.
 */
export const VARIANTS = FILES.variantWidths.map((w) => `w${w}`)

export function variantWidth(variant: string): number {
  const m = /^w(\d+)$/.exec(variant)
  const w = m ? Number(m[1]) : NaN
  if (!FILES.variantWidths.includes(w)) throw new SvcError('file.variant_invalid', `unknown variant; known: ${VARIANTS.join(', ')}`, { variant: variant.slice(0, 16) })
  return w
}

const RESIZABLE = /^image\/(png|jpeg|webp|gif|avif|tiff)$/

/** Variant names a file offers (none unless it is an image sharp resizes). */
export const variantsOf = (mime: string): string[] => (RESIZABLE.test(mime) ? [...VARIANTS] : [])

export async function variantBytes(files: FilesService, spaceId: string, fileId: string, variant: string): Promise<{ bytes: Uint8Array; mime: string }> {
  const width = variantWidth(variant)
  const rec = await files.record(spaceId, fileId)
  if (!RESIZABLE.test(rec.mime)) throw new SvcError('file.variant_invalid', 'variants exist only for images (png, jpeg, webp, gif, avif, tiff)', { variant })
  if (rec.size > FILES.variantSourceMax) throw new SvcError('file.variant_invalid', 'the image is too large to resize here', { variant })
  const id = variantId(fileId, variant)
  const cached = await files.store.get(spaceId, id)
  if (cached) return { bytes: cached, mime: rec.mime }
  const parts: Uint8Array[] = []
  for await (const p of (await files.read(spaceId, fileId, 0, rec.size - 1)).body) parts.push(p)
  let out: Buffer
  try {
    out = await sharp(Buffer.concat(parts), { limitInputPixels: 100_000_000 }).resize({ width, withoutEnlargement: true }).toBuffer()
  } catch {
    throw new SvcError('file.variant_invalid', 'the file is not an image that can be resized', { variant })
  }
  const bytes = new Uint8Array(out.buffer, out.byteOffset, out.byteLength)
  await files.store.put(spaceId, [{ id, bytes }])
  return { bytes, mime: rec.mime }
}
