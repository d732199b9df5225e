import { backoffDelay } from '../../core/backoff.ts'
import { SvcError } from '../../core/errors.ts'
import { errField } from '../../core/log.ts'
import { FILES } from './limits.ts'
import type { LocalFileState } from './local-state.ts'
import type { FileRecord } from './record.ts'
import type { FilesService } from './service.ts'

/**
 * Background passes (pins, durability confirmations) retry after 2 s while work is left,
 * doubling up to 30 s while nothing settles; new work runs a pass after 200 ms.
 */
const BACKGROUND_RETRY_MS = 2000
const BACKGROUND_MAX_RETRY_MS = 30_000
const BACKGROUND_DEBOUNCE_MS = 200

/**
 * The files service's background work while a network is attached: pinned files fetched in
 * full (resumed after a restart: pins are device-local state), and files only known here
 * offered for confirmation to peers that may read their space, until one says it stores every
 * block (docs/files.md "States").
 */
export class Background {
  private stopTimer: () => void = () => undefined
  /** When the armed pass is due, whether one runs, whether another was asked meanwhile, the retry delay. */
  private due = Infinity
  private running = false
  private rerun = false
  /** Passes in a row that left work: the next one waits backoffDelay(retries). */
  private retries = 0

  constructor(private readonly files: FilesService) {}

  /** The network came or went: pending work restarts at once (or stops). */
  restart(): void {
    this.stop()
    this.retries = 0
    this.schedule(0)
  }

  stop(): void {
    this.stopTimer()
    this.stopTimer = () => undefined
    this.due = Infinity
  }

  /** New work (an attach, a pin): a pass shortly, however long the retry delay had grown. */
  soon(): void {
    this.retries = 0
    if (this.running) this.rerun = true
    else this.schedule(BACKGROUND_DEBOUNCE_MS)
  }

  /**
   * Arms one pass `ms` from now unless one is due sooner or running (then it reruns after). A
   * burst of attaches thus costs one pass, and passes that find nothing to settle back off.
   */
  schedule(ms: number): void {
    if (this.files.closed || !this.files.reader.source) return
    if (this.running) {
      this.rerun = true
      return
    }
    const due = this.files.account.env.now() + ms
    if (due >= this.due) return
    this.stopTimer()
    this.due = due
    this.stopTimer = this.files.account.env.setTimer(ms, () => void this.pass())
  }

  private async pass(): Promise<void> {
    this.due = Infinity
    this.running = true
    let more = true
    try {
      more = await this.run()
    } catch (err) {
      // A failed pass is retried like one that left work.
      this.files.log.debug('a background pass over pinned and unconfirmed files failed', { err: errField(err) })
    }
    this.running = false
    if (this.rerun) {
      this.rerun = false
      this.schedule(BACKGROUND_DEBOUNCE_MS)
    } else if (more) {
      this.schedule(backoffDelay(this.retries++, BACKGROUND_RETRY_MS, BACKGROUND_MAX_RETRY_MS))
    } else this.retries = 0
  }

  /**
   * One background pass: fetch pinned files in full, ask peers to confirm files whose only
   * known copy is here. Answers whether something is left to do (then it runs again later).
   */
  private async run(): Promise<boolean> {
    let more = false
    for (const [spaceId, fileId, st] of await this.files.local.all()) {
      if (this.files.closed || !this.files.reader.source) return false
      if (!this.files.account.held(spaceId)) continue
      let rec: FileRecord
      try {
        rec = await this.files.record(spaceId, fileId)
      } catch {
        continue
      }
      if (rec.inline !== undefined) continue
      if (st.pinned) more = (await this.fetchAll(spaceId, rec, st)) || more
      if (!st.durable) more = (await this.confirm(spaceId, rec)) || more
    }
    return more
  }

  /** A pinned file's full fetch; answers whether it must be retried. */
  private async fetchAll(spaceId: string, rec: FileRecord, st: LocalFileState): Promise<boolean> {
    const present = await this.files.reader.present(spaceId, rec)
    if (present.every(Boolean)) return false
    try {
      await this.files.reader.ensure(spaceId, rec, 0, rec.blocks!.length - 1)
      // Fetched from a peer that stores every block: two copies exist.
      await this.files.local.update(spaceId, rec.id, { durable: true, attempts: undefined, lastErr: undefined, limited: undefined })
      await this.files.announce(spaceId, rec.id)
      return false
    } catch (err) {
      const attempts = (st.attempts ?? 0) + 1
      await this.files.local.update(spaceId, rec.id, { attempts, lastErr: err instanceof SvcError ? err.code : 'internal', limited: attempts >= FILES.pinAttempts })
      await this.files.announce(spaceId, rec.id)
      return true
    }
  }

  /** Asks peers whether one stores every block of a file only known here; answers whether to ask again. */
  private async confirm(spaceId: string, rec: FileRecord): Promise<boolean> {
    const present = await this.files.reader.present(spaceId, rec)
    if (!present.every(Boolean)) return false
    const by = await this.files.reader.source?.confirm(spaceId, [...new Set(rec.blocks)]).catch((err: unknown) => {
      // Asked again on a later pass.
      this.files.log.debug("asking peers to confirm a file's blocks failed", { spaceId, fileId: rec.id, err: errField(err) })
      return undefined
    })
    if (!by) return true
    await this.files.local.update(spaceId, rec.id, { durable: true, confirmedBy: by })
    await this.files.announce(spaceId, rec.id)
    return false
  }
}
