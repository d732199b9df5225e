import { SerialQueue } from '../../core/serial-queue.ts'
import { errField, silentLogger, type Logger } from '../../core/log.ts'
import type { SpaceChange, SpaceEngine } from '../../space/space-engine.ts'
import { FILES_COLLECTION } from './record.ts'

type Entries = Map<string, string>

/**
 * Which object holds each live file of a space (fileId -> objectId): a file is addressed by
 * `svc://f/<spaceId>/<fileId>`, so routes find it without its object. Built on first use from
 * every object's `files` collection, then kept current from the space's commits (a record set
 * or tombstoned, an object deleted or reloaded) in commit order.
 */
export class FileIndex {
  private readonly spaces = new Map<string, { entries: Promise<Entries>; queue: SerialQueue }>()

  /** Listeners hear a file appear, change or go (status frames of files synced in). */
  constructor(
    private readonly moved: (space: SpaceEngine, fileId: string, objectId: string, live: boolean) => void,
    private readonly log: Logger = silentLogger,
  ) {}

  of(space: SpaceEngine): Promise<Entries> {
    let s = this.spaces.get(space.spaceId)
    if (!s) {
      const queue = new SerialQueue()
      s = { entries: queue.run(() => build(space)), queue }
      this.spaces.set(space.spaceId, s)
    }
    return s.entries
  }

  async objectOf(space: SpaceEngine, fileId: string): Promise<string | undefined> {
    return (await this.of(space)).get(fileId)
  }

  /** Brings a built index up to date with one commit (called for every change of every space). */
  onChange(space: SpaceEngine, change: SpaceChange): void {
    const s = this.spaces.get(space.spaceId)
    if (!s) return
    s.queue
      .run(async () => {
        const entries = await s.entries
        for (const objectId of change.reloaded) await this.rescan(space, entries, objectId)
        for (const objectId of change.objects) {
          if (space.objectDoc(objectId)) continue
          for (const [fileId, o] of entries) if (o === objectId) this.drop(space, entries, fileId, o)
        }
        for (const [objectId, perDs] of change.records) {
          const touched = perDs.get(FILES_COLLECTION)
          if (!touched || change.reloaded.has(objectId)) continue
          for (const fileId of touched.keys()) {
            const live =
              space.objectDoc(objectId) !== undefined &&
              (await space.replica.getRecord(objectId, FILES_COLLECTION, fileId).then((r) => r !== undefined && !r.deleted && r.value !== undefined))
            if (live) {
              entries.set(fileId, objectId)
              this.moved(space, fileId, objectId, true)
            } else if (entries.get(fileId) === objectId) this.drop(space, entries, fileId, objectId)
          }
        }
      })
      .catch((err: unknown) => this.log.warn('updating the file index after a commit failed', { spaceId: space.spaceId, err: errField(err) }))
  }

  /** Settles once every queued update of a space ran (tests, and reads right after a write). */
  async settled(spaceId: string): Promise<void> {
    await this.spaces.get(spaceId)?.queue.drained()
  }

  forget(spaceId: string): void {
    this.spaces.delete(spaceId)
  }

  private drop(space: SpaceEngine, entries: Entries, fileId: string, objectId: string) {
    entries.delete(fileId)
    this.moved(space, fileId, objectId, false)
  }

  private async rescan(space: SpaceEngine, entries: Entries, objectId: string) {
    for (const [fileId, o] of entries) if (o === objectId) entries.delete(fileId)
    if (!space.objectDoc(objectId)) return
    for (const r of await space.replica.listRecords(objectId, FILES_COLLECTION)) if (!r.deleted && r.value !== undefined) entries.set(r.id, objectId)
  }
}

async function build(space: SpaceEngine): Promise<Entries> {
  const entries: Entries = new Map()
  for (const row of space.objectDocs()) {
    const objectId = String(row.id)
    for (const r of await space.replica.listRecords(objectId, FILES_COLLECTION)) if (!r.deleted && r.value !== undefined) entries.set(r.id, objectId)
  }
  return entries
}
