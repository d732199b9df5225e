import { Emitter } from '../../core/emitter.ts'
import { errField, type Logger } from '../../core/log.ts'
import { SvcError } from '../../core/errors.ts'
import { writeRefusal } from '../../replica/write-refusal.ts'
import { toBase58 } from '../../core/ids.ts'
import type { JsonObject } from '../../crdt/ops.ts'
import type { WriteResult } from '../../replica/types.ts'
import type { AccountModuleContext } from '../../space/module.ts'
import { instant } from '../../space/rows.ts'
import type { SpaceEngine } from '../../space/space-engine.ts'
import { ingestContent, type AttachMeta } from './attach.ts'
import { inlineBlockCrypto, type BlockCrypto } from './block-crypto.ts'
import { Background } from './background.ts'
import { FileCache } from './cache.ts'
import { FileIndex } from './file-index.ts'
import { FILES } from './limits.ts'
import { LocalStates, type LocalFileState } from './local-state.ts'
import type { BlockSource, FileState, FileStatusFrame } from './network.ts'
import { BlockReader } from './reader.ts'
import { FILES_COLLECTION, parseFileRecord, type FileRecord } from './record.ts'
import type { BlockStore } from './stores.ts'

export interface FilesOptions {
  /** Grace before an unreferenced block goes at a sweep (default FILES.graceMs). */
  graceMs?: number
  /** Plaintext bytes per block of new files (default FILES.blockSize; tests use small blocks). */
  blockSize?: number
  /** Largest attach body (default FILES.attachMax; tests use a small one). */
  attachMax?: number
  /** `files.gcInterval`: a background sweep every this many ms; 0 or absent: only `POST /v1/files/cache/sweep` sweeps. */
  gcIntervalMs?: number
  /** Where block crypto runs (the daemon: a worker thread); default inline, with the account's crypto provider. */
  blockCrypto?: BlockCrypto
}

/** File info (`GET {S}/files/:fileId`): the record's fields without key material, and local facts. */
export interface FileInfo {
  id: string
  objectId: string
  spaceId: string
  uri: string
  name: string
  mime: string
  size: number
  creator: string
  createdAt: { $date: string }
  hash: string
  inline: boolean
  blocks: number
  cachedBlocks: number
  cached: boolean
  pinned: boolean
  state: FileState
  width?: number
  height?: number
  attempts?: number
  lastErr?: string
}

export interface FileStats {
  files: number
  inline: number
  bytes: number
  cachedFiles: number
  pinned: number
  durable: number
  inflight: number
  limited: number
  storedBytes: number
}

export interface FilesEvents {
  status: { spaceId: string; frame: FileStatusFrame }
}

/**
 * The account's files (spec core.md "Files", "Files cache"; docs/files.md): attach, read,
 * delete, and the local cache of blocks across every space. Records live in objects' `files`
 * collections (synced, merged, tombstoned like any record); blocks and device-local facts in
 * the account's storage. One per account (the module's account service), since the cache,
 * pins and the sweep span spaces.
 */
export class FilesService {
  readonly events: Emitter<FilesEvents>
  /** The account's logger, scoped `files`. */
  readonly log: Logger
  readonly store: BlockStore
  readonly local: LocalStates
  readonly reader: BlockReader
  readonly index: FileIndex
  readonly cache: FileCache
  readonly graceMs: number
  readonly blockSize: number
  readonly attachMax: number
  readonly blockCrypto: BlockCrypto
  /** Ids of every space the account opened (the sweep and `free` walk them). */
  readonly spaceIds = new Set<string>()
  closed = false
  readonly background: Background = new Background(this)
  private stopSweeps: () => void = () => undefined

  constructor(
    readonly account: AccountModuleContext,
    opts: FilesOptions = {},
  ) {
    this.log = account.log.child('files')
    this.events = new Emitter<FilesEvents>(this.log)
    this.graceMs = opts.graceMs ?? FILES.graceMs
    this.blockSize = opts.blockSize ?? FILES.blockSize
    this.attachMax = opts.attachMax ?? FILES.attachMax
    this.store = account.blocks
    this.local = new LocalStates(account.storage)
    const inline = inlineBlockCrypto(account.crypto)
    this.blockCrypto = opts.blockCrypto ?? inline
    this.reader = new BlockReader(this.store, this.blockCrypto, inline, this.log.child('reader'))
    this.index = new FileIndex((space, fileId, objectId, live) => {
      if (live)
        void this.announce(space, fileId).catch((err: unknown) =>
          this.log.debug("announcing a synced file's status failed", { spaceId: space.spaceId, fileId, err: errField(err) }),
        )
    }, this.log)
    this.cache = new FileCache(this)
    account.events.on('spacesOpened', (e) => {
      for (const id of e.spaceIds) this.spaceIds.add(id)
      // Pins and unconfirmed files of a space that was closed (spaces open on demand and close
      // when idle) resume as soon as it opens: a pass skips spaces not held.
      this.background.soon()
    })
    account.events.on('change', ({ space, change }) => this.index.onChange(space, change))
    if (opts.gcIntervalMs && opts.gcIntervalMs > 0) this.sweepEvery(opts.gcIntervalMs)
  }

  /** The background sweep (`files.gcInterval`): one sweep per interval, never two at once. */
  private sweepEvery(ms: number): void {
    const tick = () => {
      this.stopSweeps = this.account.env.setTimer(ms, () => {
        if (this.closed) return
        void this.cache
          .sweep()
          .catch((err: unknown) => this.log.warn('sweeping the files cache failed', { err: errField(err) }))
          .finally(() => !this.closed && tick())
      })
    }
    tick()
  }

  /** The network half (node/files), or undefined when it stops. Resumes pins and durability checks. */
  attachNetwork(source: BlockSource | undefined): void {
    this.reader.source = source
    this.background.restart()
  }

  close(): void {
    this.closed = true
    this.background.stop()
    this.stopSweeps()
    this.reader.source = undefined
  }

  space(spaceId: string): SpaceEngine {
    const s = this.account.space(spaceId)
    this.spaceIds.add(spaceId)
    return s
  }

  // ------------------------------------------------------------------ records

  /** A live file of the space, parsed and checked; 404 `file.not_found`. */
  async record(spaceId: string, fileId: string): Promise<FileRecord> {
    const space = this.space(spaceId)
    await this.index.settled(spaceId)
    const objectId = await this.index.objectOf(space, fileId)
    const doc = objectId === undefined ? undefined : await space.recordDoc(objectId, FILES_COLLECTION, fileId)
    if (!doc || objectId === undefined) throw new SvcError('file.not_found', 'no such file in this space', { fileId })
    return parseFileRecord(objectId, doc)
  }

  /** Every live file of the space (or of one object), in file id order; malformed records are left out. */
  async records(spaceId: string, objectId?: string): Promise<FileRecord[]> {
    const space = this.space(spaceId)
    await this.index.settled(spaceId)
    const entries = [...(await this.index.of(space))].filter(([, o]) => objectId === undefined || o === objectId).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    const out: FileRecord[] = []
    for (const [fileId, o] of entries) {
      const doc = await space.recordDoc(o, FILES_COLLECTION, fileId)
      if (!doc) continue
      try {
        out.push(parseFileRecord(o, doc))
      } catch (err) {
        // A member's malformed record: listed nowhere, answered 409 by the routes that name it.
        this.log.debug('a malformed file record is left out', { spaceId, fileId, err: errField(err) })
      }
    }
    return out
  }

  // ------------------------------------------------------------------ attach, delete

  /** Attach: the body's bytes become blocks (or inline bytes) and one record on the object. */
  async attach(
    spaceId: string,
    objectId: string,
    meta: AttachMeta,
    body: AsyncIterable<Uint8Array>,
  ): Promise<WriteResult & { fileId: string; size: number; inline: boolean; hash: string }> {
    const space = this.space(spaceId)
    space.requireObject(objectId)
    checkMeta(meta)
    // Before any block is stored: a guest's or removed member's body is refused unread.
    if (!space.replica.acl.current().canWrite(space.replica.me)) throw writeRefusal(space.replica.acl.current(), space.replica.me)
    const content = await ingestContent(space, this.store, this.account.crypto, this.blockCrypto, body, this.blockSize, this.attachMax)
    const fileId = toBase58(space.env.randomBytes(16))
    const value: JsonObject = { name: meta.name, mime: meta.mime, ...content.fields, creator: space.replica.me, createdAt: instant(space.env.now()) }
    await this.local.update(spaceId, fileId, { origin: true, lastAccess: space.env.now(), ...(content.inline ? { durable: true } : {}) })
    const res = await space.write(objectId, [{ op: 'set', ds: FILES_COLLECTION, id: fileId, path: '', value }])
    if (!content.inline) this.background.soon()
    return { ...res, recordIds: [fileId], fileId, size: content.size, inline: content.inline, hash: content.hash }
  }

  /** Delete: tombstones the record; its bytes go at the next sweep past grace (cache.ts). */
  async remove(spaceId: string, fileId: string): Promise<WriteResult> {
    const rec = await this.record(spaceId, fileId)
    const res = await this.space(spaceId).write(rec.objectId, [{ op: 'delete', ds: FILES_COLLECTION, id: fileId }])
    return { ...res, recordIds: [fileId] }
  }

  // ------------------------------------------------------------------ reads

  /** Bytes `[start, end]` of a file; blocks missing here are fetched from peers first. */
  async read(spaceId: string, fileId: string, start: number, end: number): Promise<{ record: FileRecord; body: AsyncIterable<Uint8Array> }> {
    const record = await this.record(spaceId, fileId)
    const body = await this.reader.range(spaceId, record, start, end)
    // LRU needs minutes, not milliseconds: a read writes the access time at most once a minute.
    const now = this.account.env.now()
    if (now - ((await this.local.get(spaceId, fileId)).lastAccess ?? 0) > ACCESS_RESOLUTION_MS) await this.local.update(spaceId, fileId, { lastAccess: now })
    return { record, body }
  }

  async info(spaceId: string, fileId: string): Promise<FileInfo> {
    return this.infoOf(spaceId, await this.record(spaceId, fileId))
  }

  async list(spaceId: string, objectId?: string): Promise<FileInfo[]> {
    const out: FileInfo[] = []
    for (const r of await this.records(spaceId, objectId)) out.push(await this.infoOf(spaceId, r))
    return out
  }

  async infoOf(spaceId: string, rec: FileRecord): Promise<FileInfo> {
    const present = await this.reader.present(spaceId, rec)
    const cachedBlocks = present.filter(Boolean).length
    const st = await this.local.get(spaceId, rec.id)
    const cached = rec.inline !== undefined || cachedBlocks === present.length
    const info: FileInfo = {
      id: rec.id,
      objectId: rec.objectId,
      spaceId,
      uri: `svc://f/${spaceId}/${rec.id}`,
      name: rec.name,
      mime: rec.mime,
      size: rec.size,
      creator: rec.creator,
      createdAt: rec.createdAt,
      hash: rec.hash,
      inline: rec.inline !== undefined,
      blocks: present.length,
      cachedBlocks,
      cached,
      pinned: st.pinned === true,
      state: stateOf(rec, st, cached),
    }
    if (rec.width !== undefined) info.width = rec.width
    if (rec.height !== undefined) info.height = rec.height
    if (st.attempts) info.attempts = st.attempts
    if (st.lastErr) info.lastErr = st.lastErr
    return info
  }

  /** `GET {S}/files/stats`: counts by state, plaintext bytes, and the encrypted bytes stored here. */
  async stats(spaceId: string): Promise<FileStats> {
    const out: FileStats = { files: 0, inline: 0, bytes: 0, cachedFiles: 0, pinned: 0, durable: 0, inflight: 0, limited: 0, storedBytes: 0 }
    for (const info of await this.list(spaceId)) {
      out.files++
      out.bytes += info.size
      if (info.inline) out.inline++
      if (info.cached) out.cachedFiles++
      if (info.pinned) out.pinned++
      out[info.state]++
    }
    for (const b of await this.store.list(spaceId)) out.storedBytes += b.size
    return out
  }

  async status(spaceId: string, fileId: string): Promise<FileStatusFrame> {
    return frameOf(await this.info(spaceId, fileId))
  }

  /** Announces a file's status to `{S}/files/subscribe` (local transitions only). */
  async announce(space: SpaceEngine | string, fileId: string): Promise<void> {
    const spaceId = typeof space === 'string' ? space : space.spaceId
    if (this.events.count('status') === 0) return
    this.events.emit('status', { spaceId, frame: await this.status(spaceId, fileId) })
  }

  // ------------------------------------------------------------------ pins and durability

  async pin(spaceId: string, fileId: string): Promise<void> {
    const rec = await this.record(spaceId, fileId)
    await this.local.update(spaceId, fileId, { pinned: true, lastAccess: this.account.env.now() })
    if (rec.inline === undefined) this.background.soon()
  }

  async offload(spaceId: string, fileId: string): Promise<void> {
    const rec = await this.record(spaceId, fileId)
    if (rec.inline !== undefined) return
    const info = await this.infoOf(spaceId, rec)
    if (info.state !== 'durable')
      throw new SvcError('file.not_durable', 'the bytes on this device are the only copy known; offload waits until another device stores them', { fileId })
    await this.local.update(spaceId, fileId, { pinned: false })
    await this.cache.dropContent(spaceId, rec)
    await this.announce(spaceId, fileId)
  }
}

const ACCESS_RESOLUTION_MS = 60_000

function checkMeta(meta: AttachMeta) {
  if (meta.name.length === 0 || meta.name.length > FILES.nameMax) throw new SvcError('request.invalid_field', `name must be 1 to ${FILES.nameMax} characters`, { field: 'name' })
  if (meta.mime.length > FILES.mimeMax || !/^[\w.+-]+\/[\w.+-]+$/.test(meta.mime))
    throw new SvcError('request.invalid_field', 'mime must be a media type such as image/png', { field: 'mime' })
}

/**
 * docs/files.md "States": inline is durable (its bytes are the record); a device that fetched
 * every block, or whose copy a peer confirmed, holds one of two copies: durable; the device a
 * file was attached on is inflight until confirmed; limited when fetches keep failing.
 */
function stateOf(rec: FileRecord, st: LocalFileState, cached: boolean): FileState {
  if (rec.inline !== undefined || st.durable) return 'durable'
  if (st.limited) return 'limited'
  if (!st.origin && cached) return 'durable'
  return 'inflight'
}

export function frameOf(info: FileInfo): FileStatusFrame {
  const f: FileStatusFrame = { fileId: info.id, objectId: info.objectId, state: info.state, cached: info.cached }
  if (info.attempts !== undefined) f.attempts = info.attempts
  if (info.lastErr !== undefined) f.lastErr = info.lastErr
  return f
}
