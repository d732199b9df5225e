import { errField } from '../../sync/core/log.ts'
import { SvcError } from '../../sync/core/errors.ts'
import { variantId } from '../../sync/modules/files/cache.ts'
import { FILES } from '../../sync/modules/files/limits.ts'
import type { FileRecord } from '../../sync/modules/files/record.ts'
import type { FilesService } from '../../sync/modules/files/service.ts'
import { Slots } from './slots.ts'
import { runVariantProcess } from './variant-process.ts'

/**
 * Image variants (`?variant=w<width>`): the file resized to a width with sharp (libvips; its npm
 * packages ship prebuilt binaries, so nothing compiles here), in the source's format. A variant
 * is cached like content: kept in the block store under a local id, counted by `cache` size,
 * reclaimed by `free` and by the sweep once its file is gone. 400 `file.variant_invalid` for a
 * variant name outside the list, a file that is not an image sharp can read, or an image too
 * large to resize here (docs/files.md "Variants").
 *
 * Any member can attach the image and any reader's request makes this daemon decode it, so the
 * work is bounded (issue 33): each variant is made in a process of its own (variant-process.ts)
 * that checks the header against a pixel and a decoded-size budget before any pixel is decoded,
 * runs one libvips thread, is killed past FILES.variantTimeoutS or FILES.variantProcessRssMax,
 * and gives its memory back when it exits; at most FILES.variantConcurrency run at once, the
 * rest wait; requests for a variant being made share that one job; a refusal is remembered.
 */
export const VARIANTS = FILES.variantWidths.map((w) => `w${w}`)

/** The record's media type and the format the bytes must be in (a record saying png over jpeg bytes gets no variant). */
const FORMAT_OF_MIME: Record<string, string> = {
  'image/png': 'png',
  'image/jpeg': 'jpeg',
  'image/webp': 'webp',
  'image/gif': 'gif',
  'image/avif': 'heif',
  'image/tiff': 'tiff',
}

/** Where a variant's work is logged (Fastify's request logger, scoped by the caller). */
export interface VariantLog {
  debug(obj: object, msg: string): void
  info(obj: object, msg: string): void
  warn(obj: object, msg: string): void
}

const slots = new Slots(FILES.variantConcurrency)

interface Pending {
  jobs: Map<string, Promise<Uint8Array>>
  /**
   * What a file's first variant found out about its image, by `spaceId/fileId`: a record never
   * changes, so neither does the answer. 'ok' once one variant was made, else the refusal.
   */
  verdicts: Map<string, 'ok' | SvcError>
  /** The job finding that out, by file: the other widths wait for it instead of decoding the same header in parallel. */
  probes: Map<string, Promise<unknown>>
}
const VERDICTS_KEPT = 1024

function remember(pending: Pending, fileKey: string, verdict: 'ok' | SvcError): void {
  if (pending.verdicts.size >= VERDICTS_KEPT) pending.verdicts.delete(pending.verdicts.keys().next().value!)
  pending.verdicts.set(fileKey, verdict)
}
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

async function generate(files: FilesService, spaceId: string, rec: FileRecord, variant: string, width: number, pending: Pending, log: VariantLog | undefined): Promise<Uint8Array> {
  const id = variantId(rec.id, variant)
  // A job that waited for its slot may find the variant made by one that held it.
  const made = await files.store.get(spaceId, id)
  if (made) return made
  const known = pending.verdicts.get(`${spaceId}/${rec.id}`)
  if (known instanceof SvcError) throw known
  // Missing blocks are fetched (or fail with file.not_available) before any process starts.
  const { body } = await files.read(spaceId, rec.id, 0, rec.size - 1)
  const outcome = await runVariantProcess({
    source: body,
    size: rec.size,
    width,
    format: FORMAT_OF_MIME[rec.mime],
    pixelsMax: FILES.variantPixelsMax,
    decodeMax: FILES.variantDecodeMax,
    timeoutMs: FILES.variantTimeoutS * 1000,
    rssMax: FILES.variantProcessRssMax,
    outputMax: FILES.variantSourceMax,
  })
  if (outcome.kind === 'tooLarge' || outcome.kind === 'notImage') {
    const err = outcome.kind === 'tooLarge' ? tooLarge(variant) : notImage(variant)
    remember(pending, `${spaceId}/${rec.id}`, err)
    log?.info({ spaceId, fileId: rec.id, variant, reason: err.message }, 'variant refused')
    throw err
  }
  if (outcome.kind === 'failed') {
    log?.warn({ spaceId, fileId: rec.id, variant, reason: outcome.reason }, 'variant failed')
    throw notImage(variant)
  }
  await files.store.put(spaceId, [{ id, bytes: outcome.bytes }])
  remember(pending, `${spaceId}/${rec.id}`, 'ok')
  return outcome.bytes
}

export async function variantBytes(files: FilesService, spaceId: string, fileId: string, variant: string, log?: VariantLog): Promise<{ bytes: Uint8Array; mime: string }> {
  const width = variantWidth(variant)
  const rec = await files.record(spaceId, fileId)
  if (!(rec.mime in FORMAT_OF_MIME)) throw new SvcError('file.variant_invalid', 'variants exist only for images (png, jpeg, webp, gif, avif, tiff)', { variant })
  if (rec.size > FILES.variantSourceMax) throw tooLarge(variant)
  const cached = await files.store.get(spaceId, variantId(fileId, variant))
  if (cached) return { bytes: cached, mime: rec.mime }

  let pending = pendingOf.get(files)
  if (!pending) pendingOf.set(files, (pending = { jobs: new Map(), verdicts: new Map(), probes: new Map() }))
  const key = `${spaceId}/${fileId}/${variant}`
  let job = pending.jobs.get(key)
  if (!job) {
    job = startJob(files, pending, spaceId, rec, variant, width, log)
    const jobs = pending.jobs
    jobs.set(key, job)
    // Its failure reaches every caller through `await job`; this copy is only noted.
    void job.catch((err: unknown) => log?.debug({ spaceId, fileId: rec.id, variant, err: errField(err) }, 'a variant job failed')).finally(() => jobs.delete(key))
  }
  return { bytes: await job, mime: rec.mime }
}

async function startJob(files: FilesService, pending: Pending, spaceId: string, rec: FileRecord, variant: string, width: number, log: VariantLog | undefined): Promise<Uint8Array> {
  const fileKey = `${spaceId}/${rec.id}`
  // Six widths of a file nobody resized yet: one finds out whether it can be, the rest wait for
  // that (a bomb then costs one refused process, not one per slot).
  const probe = pending.probes.get(fileKey)
  // The probe's failure is its own caller's; here only its verdict counts.
  if (probe !== undefined && !pending.verdicts.has(fileKey))
    await probe.catch((err: unknown) => log?.debug({ spaceId, fileId: rec.id, err: errField(err) }, 'the probing variant job failed'))
  const known = pending.verdicts.get(fileKey)
  if (known instanceof SvcError) throw known
  const run = slots.run(() => generate(files, spaceId, rec, variant, width, pending, log))
  if (!pending.verdicts.has(fileKey) && !pending.probes.has(fileKey)) {
    pending.probes.set(fileKey, run)
    void run
      .catch((err: unknown) => log?.debug({ spaceId, fileId: rec.id, variant, err: errField(err) }, 'a probing variant job failed'))
      .finally(() => pending.probes.delete(fileKey))
  }
  return run
}
