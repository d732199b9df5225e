import { closeSync, linkSync, openSync, readFileSync, renameSync, statSync, unlinkSync, writeSync } from 'node:fs'
import { randomUUID } from 'node:crypto'
import { join } from 'node:path'
import { SvcError } from '../../sync/core/errors.ts'
import { LOCK_FILE } from './layout.ts'

/**
 * Exclusive lock on an account directory: a file created with O_EXCL holding the owner's pid.
 * A lock whose pid is no longer alive is stale and gets taken over; a live one fails the boot
 * with 409 `auth.account_in_use` (`details.pid`).
 */
export interface AccountLock {
  readonly path: string
  release(): void
}

/** A lock file that is empty or unreadable this long after its creation counts as stale. */
const UNREADABLE_GRACE_MS = 5_000

export function isPidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch (err) {
    // EPERM: the process exists but belongs to another user.
    return (err as NodeJS.ErrnoException).code === 'EPERM'
  }
}

function readText(path: string): string | undefined {
  try {
    return readFileSync(path, 'utf8')
  } catch {
    return undefined
  }
}

function readPid(path: string): number | undefined {
  const pid = Number.parseInt(readText(path)?.trim() ?? '', 10)
  return Number.isInteger(pid) && pid > 0 ? pid : undefined
}

function ageMs(path: string): number {
  try {
    return Date.now() - statSync(path).mtimeMs
  } catch {
    return 0
  }
}

const inUse = (pid: number | undefined) =>
  new SvcError('auth.account_in_use', 'the account is served by another process', pid === undefined ? undefined : { pid })

/**
 * Moves a stale lock out of the way without clobbering a lock another process created in the
 * meantime: rename to a private name, then check that what we moved is the stale lock we saw.
 */
function removeStale(path: string, stalePid: number | undefined): void {
  const aside = `${path}.stale-${process.pid}-${Date.now()}`
  try {
    renameSync(path, aside)
  } catch {
    return // someone else removed it first
  }
  const moved = readPid(aside)
  if (moved !== stalePid && moved !== undefined && isPidAlive(moved)) {
    // We moved a fresh lock: put it back unless yet another one appeared.
    try {
      linkSync(aside, path)
    } catch {
      /* a newer lock exists; the moved one's owner will find it gone at release */
    }
  }
  try {
    unlinkSync(aside)
  } catch {
    /* already gone */
  }
}

export function acquireLock(dir: string): AccountLock {
  const path = join(dir, LOCK_FILE)
  // The pid first (what other processes read), then a nonce so a release never removes a lock
  // another holder in this same process took over.
  const token = `${process.pid} ${randomUUID()}\n`
  for (let attempt = 0; attempt < 5; attempt++) {
    let fd: number
    try {
      fd = openSync(path, 'wx', 0o600)
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err
      const pid = readPid(path)
      if (pid !== undefined && isPidAlive(pid)) throw inUse(pid)
      if (pid === undefined && ageMs(path) < UNREADABLE_GRACE_MS) throw inUse(undefined)
      removeStale(path, pid)
      continue
    }
    try {
      writeSync(fd, token)
    } finally {
      closeSync(fd)
    }
    let released = false
    return {
      path,
      release() {
        if (released) return
        released = true
        // Only remove the file if it is still ours.
        if (readText(path) === token) {
          try {
            unlinkSync(path)
          } catch {
            /* already gone */
          }
        }
      },
    }
  }
  throw inUse(readPid(path))
}
