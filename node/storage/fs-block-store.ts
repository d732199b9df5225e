import { randomBytes } from 'node:crypto'
import { mkdir, readdir, readFile, rename, rm, stat, unlink, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import type { BlockStore } from '../../sync/storage/block-store.ts'
import { errField, silentLogger, type Logger } from '../../sync/core/log.ts'

/**
 * Names a block file may have: base58 addresses, `variant.<file>.<width>` cache entries, test
 * ids. Never a separator, never a leading dot (so never `.` or `..`), never a temporary's mark.
 */
const NAME = /^[A-Za-z0-9_-][A-Za-z0-9_.-]{0,199}$/
const TMP_MARK = '.tmp-'
const safeName = (n: string) => NAME.test(n) && !n.includes(TMP_MARK)
/**
 * Owner-only, like the account's database (0600): blocks are sealed, but the image variants the
 * cache keeps beside them are not, and even sealed blocks show sizes and timing.
 */
const FILE_MODE = 0o600
const DIR_MODE = 0o700

/**
 * The daemon's BlockStore: one file per block, `<root>/<spaceId>/<first two chars>/<id>`.
 * Why files and not SQLite rows: a 1 MiB block in a row goes through the WAL and then the
 * database (written twice), a commit per block holds the event loop while SQLite copies it,
 * and freeing a gigabyte rewrites hundreds of thousands of pages. A file is written once, read
 * with one `read`, and freed with one `unlink`.
 *
 * Crash safety: each block is written to a temporary name in its directory and renamed into
 * place, so a block file is either whole or absent (blocks are content-addressed: a whole
 * file is the right file). Like the SQLite adapter's default ('normal'), nothing is fsynced:
 * a block survives the process dying at any point, only an OS crash or power loss can lose
 * the last ones written, and the files module then finds them missing (`has` is false) and
 * fetches them again; a file's record is never acknowledged durable from a block count alone
 * (docs/files.md "Durability"). Temporaries a crash left are removed when the store opens a
 * space's directory.
 *
 * `legacy` is the store an older daemon kept blocks in (SQLite rows): it is read through and
 * deleted through, never written, so blocks stored before the upgrade stay readable until
 * they are freed.
 */
export class FsBlockStore implements BlockStore {
  private total?: number
  private counting?: Promise<void>
  private readonly swept = new Set<string>()
  /** Directories made (or found) since open: a put of many blocks makes each one once. Nothing here removes one. */
  private readonly made = new Set<string>()

  constructor(
    private readonly root: string,
    private readonly legacy?: BlockStore,
    private readonly log: Logger = silentLogger,
  ) {}

  /**
   * A `stat` or `unlink` that fails reads as "no such file", as it always did: ENOENT is that
   * answer, anything else (permissions, a disk error) is logged at debug first.
   */
  private readonly noFile = (err: unknown): undefined => {
    if ((err as { code?: unknown } | null)?.code !== 'ENOENT') this.log.debug('a block file could not be read', { err: errField(err) })
    return undefined
  }

  /** A `readdir` that fails reads as an empty folder, as `noFile` says. */
  private readonly noDir = (err: unknown): string[] => {
    if ((err as { code?: unknown } | null)?.code !== 'ENOENT') this.log.debug('a blocks folder could not be read', { err: errField(err) })
    return []
  }

  private spaceDir(spaceId: string) {
    if (!safeName(spaceId)) throw new Error(`block store: bad space id ${JSON.stringify(spaceId)}`)
    return join(this.root, spaceId)
  }

  private path(spaceId: string, id: string) {
    if (!safeName(id)) throw new Error(`block store: bad block id ${JSON.stringify(id)}`)
    return join(this.spaceDir(spaceId), id.slice(0, 2), id)
  }

  /** Removes temporaries an interrupted put left in a space's directory (once per open). */
  private async sweep(spaceId: string) {
    if (this.swept.has(spaceId)) return
    this.swept.add(spaceId)
    const dir = this.spaceDir(spaceId)
    for (const sub of await readdir(dir).catch(this.noDir)) {
      for (const f of await readdir(join(dir, sub)).catch(this.noDir)) {
        if (f.includes(TMP_MARK)) await unlink(join(dir, sub, f)).catch(this.noFile)
      }
    }
  }

  async put(spaceId: string, blocks: ReadonlyArray<{ id: string; bytes: Uint8Array }>) {
    if (blocks.length === 0) return
    await this.sweep(spaceId)
    await this.size()
    const inLegacy = this.legacy
      ? await this.legacy.has(
          spaceId,
          blocks.map((b) => b.id),
        )
      : []
    await Promise.all(
      blocks.map(async (b, i) => {
        if (inLegacy[i]) return
        const path = this.path(spaceId, b.id)
        const before = await stat(path).catch(this.noFile)
        if (before?.size === b.bytes.length) return
        const dir = join(this.spaceDir(spaceId), b.id.slice(0, 2))
        if (!this.made.has(dir)) {
          await mkdir(dir, { recursive: true, mode: DIR_MODE })
          this.made.add(dir)
        }
        const tmp = `${path}${TMP_MARK}${randomBytes(6).toString('hex')}`
        await writeFile(tmp, b.bytes, { mode: FILE_MODE })
        await rename(tmp, path)
        this.total! += b.bytes.length - (before?.size ?? 0)
      }),
    )
  }

  async get(spaceId: string, id: string) {
    try {
      const buf = await readFile(this.path(spaceId, id))
      return new Uint8Array(buf.buffer, buf.byteOffset, buf.byteLength)
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err
      return this.legacy?.get(spaceId, id)
    }
  }

  async has(spaceId: string, ids: readonly string[]) {
    const here = await Promise.all(
      ids.map((id) =>
        stat(this.path(spaceId, id)).then(
          () => true,
          () => false,
        ),
      ),
    )
    if (!this.legacy || here.every(Boolean)) return here
    const rest = ids.filter((_, i) => !here[i])
    const old = await this.legacy.has(spaceId, rest)
    let j = 0
    return here.map((h) => h || old[j++])
  }

  async delete(spaceId: string, ids: readonly string[]) {
    if (ids.length === 0) return 0
    await this.size()
    let freed = 0
    await Promise.all(
      ids.map(async (id) => {
        const path = this.path(spaceId, id)
        const st = await stat(path).catch(this.noFile)
        if (!st) return
        await unlink(path).then(
          () => {
            freed += st.size
            this.total! -= st.size
          },
          () => undefined,
        )
      }),
    )
    const old = this.legacy ? await this.legacy.delete(spaceId, ids) : 0
    return freed + old
  }

  async list(spaceId: string) {
    const out = await this.listFiles(spaceId)
    if (this.legacy) for (const b of await this.legacy.list(spaceId)) if (!out.has(b.id)) out.set(b.id, b.size)
    return [...out].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([id, size]) => ({ id, size }))
  }

  private async listFiles(spaceId: string) {
    const dir = this.spaceDir(spaceId)
    const out = new Map<string, number>()
    for (const sub of await readdir(dir).catch(this.noDir)) {
      for (const f of await readdir(join(dir, sub)).catch(this.noDir)) {
        if (f.includes(TMP_MARK)) continue
        const st = await stat(join(dir, sub, f)).catch(this.noFile)
        if (st?.isFile()) out.set(f, st.size)
      }
    }
    return out
  }

  /** Counted once by walking the tree (one walk however many callers), then kept current by put and delete. */
  async size() {
    this.counting ??= (async () => {
      let total = 0
      for (const space of await readdir(this.root).catch(this.noDir)) {
        if (!safeName(space)) continue
        for (const size of (await this.listFiles(space)).values()) total += size
      }
      this.total = total
    })()
    await this.counting
    const old = this.legacy ? await this.legacy.size() : 0
    return this.total! + old
  }

  /** Deletes every block file (tests). */
  async destroy() {
    await rm(this.root, { recursive: true, force: true })
    this.total = 0
  }
}
