import { spawn } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { VARIANT_EXIT } from './variant-exit.ts'

/**
 * Runs one variant in a process of its own (variant-child.ts). In the daemon, libvips' buffers
 * land in glibc's per-thread malloc arenas and stay resident after the work ends: six widths
 * of a 49-megapixel PNG left the daemon 250 MB larger for good. A process gives all of it back
 * when it exits, and can be bounded from outside: killed past its time, or past its memory
 * (sampled from /proc where there is one).
 */
const CHILD = fileURLToPath(new URL('./variant-child.ts', import.meta.url))

export interface VariantJob {
  source: AsyncIterable<Uint8Array>
  /** Bytes of the source, so the child reads it into one buffer of the right size. */
  size: number
  width: number
  /** sharp's name for the format the record claims. */
  format: string
  pixelsMax: number
  decodeMax: number
  timeoutMs: number
  /** Resident memory past which the process is killed. */
  rssMax: number
  /** Output past which the process is killed. */
  outputMax: number
}

export type VariantOutcome = { kind: 'ok'; bytes: Uint8Array } | { kind: 'tooLarge' } | { kind: 'notImage' } | { kind: 'failed'; reason: string }

const RSS_EVERY_MS = 50

function rssOf(pid: number): number | undefined {
  try {
    const m = /^VmRSS:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))
    return m ? Number(m[1]) * 1024 : undefined
  } catch {
    return undefined
  }
}

export function runVariantProcess(job: VariantJob): Promise<VariantOutcome> {
  return new Promise((resolve) => {
    const child = spawn(
      process.execPath,
      ['--disable-warning=ExperimentalWarning', CHILD, String(job.size), String(job.width), job.format, String(job.pixelsMax), String(job.decodeMax)],
      {
        stdio: ['pipe', 'pipe', 'pipe'],
        // Two arenas instead of one per thread: the child's own peak stays near what it decodes.
        // Nothing else of the daemon's environment: the child decodes a peer's bytes and needs
        // none of it (and no NODE_OPTIONS loader).
        env: { MALLOC_ARENA_MAX: '2' },
      },
    )
    let failure: string | undefined
    const stop = (reason: string) => {
      failure ??= reason
      child.kill('SIGKILL')
    }
    const out: Buffer[] = []
    let outBytes = 0
    let err = ''
    child.stdout.on('data', (b: Buffer) => {
      outBytes += b.length
      if (outBytes > job.outputMax) stop('output too large')
      else out.push(b)
    })
    child.stderr.on('data', (b: Buffer) => {
      if (err.length < 1000) err += b.toString('utf8')
    })
    // A killed child closes its stdin under us: that is not a failure of its own.
    child.stdin.on('error', () => undefined)
    const timer = setTimeout(() => stop(`no result within ${job.timeoutMs} ms`), job.timeoutMs)
    const watch = setInterval(() => {
      const rss = child.pid === undefined ? undefined : rssOf(child.pid)
      if (rss !== undefined && rss > job.rssMax) stop(`over ${Math.round(job.rssMax / 1048576)} MiB of memory`)
    }, RSS_EVERY_MS)
    const done = (outcome: VariantOutcome) => {
      clearTimeout(timer)
      clearInterval(watch)
      resolve(outcome)
    }
    child.on('error', (e) => {
      failure ??= e.message
    })
    child.on('close', (code) => {
      if (failure !== undefined) {
        done({ kind: 'failed', reason: failure })
        return
      }
      if (code === VARIANT_EXIT.ok) {
        const b = Buffer.concat(out)
        done({ kind: 'ok', bytes: new Uint8Array(b.buffer, b.byteOffset, b.byteLength) })
        return
      }
      if (code === VARIANT_EXIT.tooLarge) {
        done({ kind: 'tooLarge' })
        return
      }
      if (code === VARIANT_EXIT.notImage) {
        done({ kind: 'notImage' })
        return
      }
      done({ kind: 'failed', reason: err.trim() || `exit code ${code}` })
    })
    void (async () => {
      try {
        for await (const part of job.source) {
          if (!child.stdin.write(part)) await new Promise<void>((r) => child.stdin.once('drain', () => r()).once('close', () => r()))
          if (child.stdin.destroyed) return
        }
        child.stdin.end()
      } catch (e) {
        stop(`reading the source: ${(e as Error).message}`)
      }
    })()
  })
}
