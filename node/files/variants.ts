import sharp, { type Metadata } from 'sharp'
import { SvcError } from '../../sync/core/errors.ts'
import { variantId } from '../../sync/modules/files/cache.ts'
import { FILES } from '../../sync/modules/files/limits.ts'
import type { FileRecord } from '../../sync/modules/files/record.ts'
import type { FilesService } from '../../sync/modules/files/service.ts'
import { Slots } from './slots.ts'

/**
 * Image variants (`?variant=w<width>`): the file resized to a width with sharp (libvips; its npm
 * packages ship prebuilt binaries, so nothing compiles here), in the source's format. A variant
 * is cached like content: kept in the block store under a local id, counted by `cache` size,
 * reclaimed by `free` and by the sweep once its file is gone. 400 `file.variant_invalid` for a
 * variant name outside the list, a file that is not an image sharp can read, or an image too
 * large to resize here (docs/files.md "Variants").
 *
 * Any member can attach the image and any reader's request makes this daemon decode it, so the
 * work is bounded (issue 33): the header is read and checked against a pixel and a decoded-size
 * budget before any pixel is decoded; at most FILES.variantConcurrency variants are generated
 * at once, each on one libuv thread and one libvips thread, the rest wait; requests for a variant
 * being generated share that one job; each job is abandoned after FILES.variantTimeoutS.
 */
export const VARIANTS = FILES.variantWidths.map((w) => `w${w}`)

// Process-wide libvips settings, made once. One thread per image: the variant slots are the
// parallelism, so memory grows with them and not with the core count. No operation cache: it
// would keep decoded images of files nobody asks for again. Only the loaders of the formats we
// resize may run, so an SVG, PDF or anything else labelled as an image never reaches a parser
// beyond the format sniffing (librsvg and poppler are in the binary).
sharp.concurrency(1)
sharp.cache(false)
sharp.block({ operation: ['VipsForeignLoad'] })
sharp.unblock({
  operation: ['VipsForeignLoadPngBuffer', 'VipsForeignLoadJpegBuffer', 'VipsForeignLoadWebpBuffer', 'VipsForeignLoadNsgifBuffer', 'VipsForeignLoadGifBuffer', 'VipsForeignLoadHeifBuffer', 'VipsForeignLoadTiffBuffer'],
})

/** The record's media type and the format sharp must find in the bytes (a record saying png over jpeg bytes gets no variant). */
const FORMAT_OF_MIME: Record<string, string> = {
  'image/png': 'png',
  'image/jpeg': 'jpeg',
  'image/webp': 'webp',
  'image/gif': 'gif',
  'image/avif': 'heif',
  'image/tiff': 'tiff',
}

/** Formats libvips decodes whole before it can shrink them (PNG and JPEG too when interlaced or progressive). */
const WHOLE_DECODE = new Set(['webp', 'gif', 'heif'])

const BYTES_PER_SAMPLE: Record<string, number> = { uchar: 1, char: 1, ushort: 2, short: 2, uint: 4, int: 4, float: 4, complex: 8, double: 8, dpcomplex: 16 }

/** Where a variant's work is logged (Fastify's request logger, scoped by the caller). */
export interface VariantLog {
  info(obj: object, msg: string): void
  warn(obj: object, msg: string): void
}

/** Counters since start (tests and the bench read them; they also show what an attack cost). */
export const variantWork = { generated: 0, refused: 0, failed: 0, shared: 0, running: 0, waiting: 0, peakRunning: 0 }

const slots = new Slots(FILES.variantConcurrency)

interface Pending {
  jobs: Map<string, Promise<Uint8Array>>
  /** Files whose image was refused from its header: a record never changes, so neither does the answer. */
  refused: Map<string, SvcError>
}
const REFUSED_KEPT = 1024
const pendingOf = new WeakMap<FilesService, Pending>()

export function variantWidth(variant: string): number {
  const m = /^w(\d+)$/.exec(variant)
  const w = m ? Number(m[1]) : NaN
  if (!FILES.variantWidths.includes(w)) throw new SvcError('file.variant_invalid', `unknown variant; known: ${VARIANTS.join(', ')}`, { variant: variant.slice(0, 16) })
  return w
}

/** Variant names a file offers (none unless it is an image sharp resizes). */
export const variantsOf = (mime: string): string[] => (mime in FORMAT_OF_MIME ? [...VARIANTS] : [])

const tooLarge = (variant: string) => new SvcError('file.variant_invalid', 'the image is too large to resize here', { variant })
const notImage = (variant: string) => new SvcError('file.variant_invalid', 'the file is not an image that can be resized', { variant })

/**
 * The checks made on the header alone. Pixels bound the work of every format; formats decoded
 * whole also bound the memory one job holds (width x height x bands x sample size; a progressive
 * JPEG keeps 16-bit coefficients for every pixel).
 */
function admit(meta: Metadata, expected: string, variant: string): void {
  if (meta.format !== expected) throw notImage(variant)
  const width = meta.width ?? 0
  const height = meta.pageHeight ?? meta.height ?? 0
  if (width <= 0 || height <= 0) throw notImage(variant)
  const pixels = width * height
  if (pixels > FILES.variantPixelsMax) throw tooLarge(variant)
  const whole = WHOLE_DECODE.has(meta.format) || meta.isProgressive === true
  if (!whole) return
  const sample = Math.max(BYTES_PER_SAMPLE[meta.depth ?? 'uchar'] ?? 1, meta.format === 'jpeg' ? 2 : 1)
  if (pixels * Math.max(meta.channels ?? 4, 3) * sample > FILES.variantDecodeMax) throw tooLarge(variant)
}

async function readWhole(files: FilesService, spaceId: string, rec: FileRecord): Promise<Buffer> {
  const parts: Uint8Array[] = []
  for await (const p of (await files.read(spaceId, rec.id, 0, rec.size - 1)).body) parts.push(p)
  return Buffer.concat(parts)
}

async function generate(files: FilesService, spaceId: string, rec: FileRecord, variant: string, width: number, pending: Pending, log: VariantLog | undefined): Promise<Uint8Array> {
  const id = variantId(rec.id, variant)
  // A job that waited for its slot may find the variant made by one that held it.
  const made = await files.store.get(spaceId, id)
  if (made) return made
  const known = pending.refused.get(`${spaceId}/${rec.id}`)
  if (known) throw known
  const source = await readWhole(files, spaceId, rec)
  try {
    let meta: Metadata
    try {
      // The header only; sharp's own pixel limit would fail this read without saying why.
      meta = await sharp(source, { limitInputPixels: false }).metadata()
    } catch {
      throw notImage(variant)
    }
    admit(meta, FORMAT_OF_MIME[rec.mime]!, variant)
  } catch (err) {
    variantWork.refused++
    if (pending.refused.size >= REFUSED_KEPT) pending.refused.delete(pending.refused.keys().next().value!)
    pending.refused.set(`${spaceId}/${rec.id}`, err as SvcError)
    log?.info({ spaceId, fileId: rec.id, variant, reason: (err as Error).message }, 'variant refused')
    throw err
  }
  let out: Buffer
  try {
    out = await sharp(source, { limitInputPixels: FILES.variantPixelsMax, sequentialRead: true })
      .resize({ width, withoutEnlargement: true }).timeout({ seconds: FILES.variantTimeoutS }).toBuffer()
  } catch (err) {
    variantWork.failed++
    log?.warn({ spaceId, fileId: rec.id, variant, err: (err as Error).message }, 'variant failed')
    throw notImage(variant)
  }
  const bytes = new Uint8Array(out.buffer, out.byteOffset, out.byteLength)
  await files.store.put(spaceId, [{ id, bytes }])
  variantWork.generated++
  return bytes
}

export async function variantBytes(files: FilesService, spaceId: string, fileId: string, variant: string, log?: VariantLog): Promise<{ bytes: Uint8Array; mime: string }> {
  const width = variantWidth(variant)
  const rec = await files.record(spaceId, fileId)
  if (!(rec.mime in FORMAT_OF_MIME)) throw new SvcError('file.variant_invalid', 'variants exist only for images (png, jpeg, webp, gif, avif, tiff)', { variant })
  if (rec.size > FILES.variantSourceMax) throw tooLarge(variant)
  const cached = await files.store.get(spaceId, variantId(fileId, variant))
  if (cached) return { bytes: cached, mime: rec.mime }

  let pending = pendingOf.get(files)
  if (!pending) pendingOf.set(files, (pending = { jobs: new Map(), refused: new Map() }))
  const key = `${spaceId}/${fileId}/${variant}`
  let job = pending.jobs.get(key)
  if (job) variantWork.shared++
  else {
    const jobs = pending.jobs
    const p = pending
    variantWork.waiting++
    job = slots
      .run(async () => {
        variantWork.waiting--
        variantWork.running++
        variantWork.peakRunning = Math.max(variantWork.peakRunning, variantWork.running)
        try {
          return await generate(files, spaceId, rec, variant, width, p, log)
        } finally {
          variantWork.running--
        }
      })
      .finally(() => jobs.delete(key))
    jobs.set(key, job)
  }
  return { bytes: await job, mime: rec.mime }
}
