import { closeSync, fsyncSync, openSync, renameSync, unlinkSync, writeSync } from 'node:fs'

/** Writes a file atomically (temp file, fsync, rename) with the given mode (0600 for secrets). */
export function writeFileAtomic(path: string, text: string, mode: number): void {
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
}
