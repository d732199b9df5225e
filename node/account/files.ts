import { closeSync, fsyncSync, openSync, renameSync, unlinkSync, writeSync } from 'node:fs'
import { dirname } from 'node:path'

/**
 * How hard the daemon works to keep what it acknowledged across a power cut (`--durability`).
 * 'normal': committed data survives the process dying at any point; an OS crash or power loss
 * may roll back the last commits (never corrupting anything). 'full': SQLite fsyncs every
 * commit (`synchronous=FULL`) and an atomic file write also fsyncs its directory, so the
 * rename itself is on disk before the write returns.
 */
export type Durability = 'normal' | 'full'

/** Directory fsyncs done since start (what the durability test checks was really done). */
export const fileSyncStats = { dirSyncs: 0 }

/** fsync of a directory: makes a rename or a new entry in it durable. */
export function fsyncDir(dir: string): void {
  const fd = openSync(dir, 'r')
  try {
    fsyncSync(fd)
    fileSyncStats.dirSyncs++
  } finally {
    closeSync(fd)
  }
}

/**
 * Writes a file atomically (temp file, fsync, rename) with the given mode (0600 for secrets);
 * with durability 'full' the directory is fsynced after the rename.
 */
export function writeFileAtomic(path: string, text: string, mode: number, durability: Durability = 'normal'): void {
  const tmp = `${path}.tmp-${process.pid}-${Date.now()}`
  const fd = openSync(tmp, 'wx', mode)
  try {
    writeSync(fd, text)
    fsyncSync(fd)
  } catch (err) {
    closeSync(fd)
    unlinkSync(tmp)
    throw err
  }
  closeSync(fd)
  renameSync(tmp, path)
  if (durability === 'full') fsyncDir(dirname(path))
}
