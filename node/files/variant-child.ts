/**
 * One image variant, in a process of its own (started by variant-process.ts; erasable
 * TypeScript, run by Node without tsx). Reads the source image on stdin, writes the resized
 * image on stdout, and says how it went with its exit code. Everything it decodes goes with it
 * when it exits: libvips' buffers, held in glibc's per-thread arenas, would otherwise stay in
 * the daemon's resident memory for good.
 *
 * argv: source bytes, width, format the record claims (sharp's name), pixel cap, decoded-bytes cap.
 */
import sharp, { type Metadata } from 'sharp'
import { VARIANT_EXIT } from './variant-exit.ts'

type Exit = (typeof VARIANT_EXIT)[keyof typeof VARIANT_EXIT]

/** Formats libvips decodes whole before it can shrink them (PNG and JPEG too when interlaced or progressive). */
const WHOLE_DECODE = new Set(['webp', 'gif', 'heif'])
const BYTES_PER_SAMPLE: Record<string, number> = { uchar: 1, char: 1, ushort: 2, short: 2, uint: 4, int: 4, float: 4, complex: 8, double: 8, dpcomplex: 16 }

/**
 * The checks made on the header alone, before any pixel is decoded. Pixels bound the work of
 * every format; formats decoded whole also bound the memory (width x height x bands x sample
 * size; a progressive JPEG keeps 16-bit coefficients for every pixel). A format other than the
 * one the record claims is refused: the variant is served with the record's type.
 */
function admit(meta: Metadata, expected: string, pixelsMax: number, decodeMax: number): Exit {
  if (meta.format !== expected) return VARIANT_EXIT.notImage
  const width = meta.width ?? 0
  const height = meta.pageHeight ?? meta.height ?? 0
  if (width <= 0 || height <= 0) return VARIANT_EXIT.notImage
  const pixels = width * height
  if (pixels > pixelsMax) return VARIANT_EXIT.tooLarge
  if (!WHOLE_DECODE.has(meta.format) && !meta.isProgressive) return VARIANT_EXIT.ok
  const sample = Math.max(BYTES_PER_SAMPLE[meta.depth ?? 'uchar'] ?? 1, meta.format === 'jpeg' ? 2 : 1)
  return pixels * Math.max(meta.channels ?? 4, 3) * sample > decodeMax ? VARIANT_EXIT.tooLarge : VARIANT_EXIT.ok
}

async function main(): Promise<number> {
  const [size, width, expected, pixelsMax, decodeMax] = process.argv.slice(2)
  // One libvips thread, no operation cache; only the loaders of the formats resized here may
  // run, so an SVG or PDF never reaches librsvg or poppler, which the binary carries.
  sharp.concurrency(1)
  sharp.cache(false)
  sharp.block({ operation: ['VipsForeignLoad'] })
  sharp.unblock({
    operation: [
      'VipsForeignLoadPngBuffer',
      'VipsForeignLoadJpegBuffer',
      'VipsForeignLoadWebpBuffer',
      'VipsForeignLoadNsgifBuffer',
      'VipsForeignLoadGifBuffer',
      'VipsForeignLoadHeifBuffer',
      'VipsForeignLoadTiffBuffer',
    ],
  })

  // Into one buffer of the announced size: collecting chunks and joining them would hold the
  // source twice at the moment it is largest.
  const source = Buffer.allocUnsafe(Number(size))
  let at = 0
  for await (const p of process.stdin as AsyncIterable<Buffer>) {
    if (at + p.length > source.length) return VARIANT_EXIT.notImage
    source.set(p, at)
    at += p.length
  }
  if (at !== source.length) return VARIANT_EXIT.notImage
  let meta: Metadata
  try {
    // The header only; sharp's own pixel limit would fail this read without saying why.
    meta = await sharp(source, { limitInputPixels: false }).metadata()
  } catch {
    return VARIANT_EXIT.notImage
  }
  const verdict = admit(meta, expected, Number(pixelsMax), Number(decodeMax))
  if (verdict !== VARIANT_EXIT.ok) return verdict
  const out = await sharp(source, { limitInputPixels: Number(pixelsMax), sequentialRead: true })
    .resize({ width: Number(width), withoutEnlargement: true })
    .toBuffer()
  await new Promise<void>((resolve, reject) => process.stdout.write(out, (err) => (err ? reject(err) : resolve())))
  return VARIANT_EXIT.ok
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    process.stderr.write((err instanceof Error ? err.message : String(err)).slice(0, 500))
    process.exit(1)
  },
)
