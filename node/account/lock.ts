import { closeSync, linkSync, openSync, readFileSync, renameSync, statSync, unlinkSync, writeSync } from 'node:fs'
import { randomUUID } from 'node:crypto'
import { join } from 'node:path'
import { SvcError } from '../../sync/core/errors.ts'
import { LOCK_FILE } from './layout.ts'

/**
 * Exclusive lock on an account directory: a file created with O_EXCL holding the owner's pid,
 * that process's start time and the boot id (Linux), and a nonce. A lock is live only when its
 * owner is: this process holding it (a lock in our own pid we do not hold was left by an
 * earlier process that had our pid, common in containers, where every start gets the same
 * pid), or another running process whose start time still matches (a reused pid belongs to a
 * process started later), in this boot. A live lock fails the boot with 409
 * `auth.account_in_use` (`details.pid`); any other is stale and gets taken over.
 */
export interface AccountLock {
  readonly path: string
  release(): void
}

/** A lock file that is empty or unreadable this long after its creation counts as stale. */
const UNREADABLE_GRACE_MS = 5_000

/** Tokens of the locks this process holds now. */
const heldHere = new Set<string>()

export function isPidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch (err) {
    // EPERM: the process exists but belongs to another user.
    return (err as NodeJS.ErrnoException).code === 'EPERM'
  }
}

/** The kernel's start time of a process (clock ticks since boot), where /proc has it. */
export function processStartTime(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    // Field 22; the command name (field 2) may hold spaces, so count from its closing paren.
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19]
  } catch {
    return undefined
  }
}

function bootId(): string | undefined {
  try {
    return readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim()
  } catch {
    return undefined
  }
}

function readText(path: string): string | undefined {
  try {
    return readFileSync(path, 'utf8')
  } catch {
    return undefined
  }
}

/** `pid start=<ticks> boot=<id> <nonce>`; a lock written before start and boot has pid and nonce only. */
interface LockOwner {
  pid: number
  start?: string
  boot?: string
}

function parseOwner(text: string | undefined): LockOwner | undefined {
  const words = text?.trim().split(/\s+/) ?? []
  const pid = Number.parseInt(words[0] ?? '', 10)
  if (!Number.isInteger(pid) || pid <= 0) return undefined
  const field = (k: string) => words.find((w) => w.startsWith(`${k}=`))?.slice(k.length + 1)
  return { pid, start: field('start'), boot: field('boot') }
}

function readPid(path: string): number | undefined {
  return parseOwner(readText(path))?.pid
}

/** Whether the process that wrote this lock still runs. */
function ownerAlive(text: string, owner: LockOwner): boolean {
  if (heldHere.has(text)) return true
  // Our own pid on a lock we do not hold: an earlier process that had our pid.
  if (owner.pid === process.pid) return false
  const boot = bootId()
  if (owner.boot !== undefined && boot !== undefined && owner.boot !== boot) return false
  if (!isPidAlive(owner.pid)) return false
  const start = processStartTime(owner.pid)
  return owner.start === undefined || start === undefined || owner.start === start
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
function removeStale(path: string, staleText: string | undefined): void {
  const aside = `${path}.stale-${process.pid}-${Date.now()}`
  try {
    renameSync(path, aside)
  } catch {
    return // someone else removed it first
  }
  const movedText = readText(aside)
  const moved = parseOwner(movedText)
  if (movedText !== staleText && moved !== undefined && ownerAlive(movedText!, moved)) {
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
  const start = processStartTime(process.pid)
  const boot = bootId()
  const token = `${process.pid}${start ? ` start=${start}` : ''}${boot ? ` boot=${boot}` : ''} ${randomUUID()}\n`
  for (let attempt = 0; attempt < 5; attempt++) {
    let fd: number
    try {
      fd = openSync(path, 'wx', 0o600)
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err
      const text = readText(path)
      const owner = parseOwner(text)
      if (owner !== undefined && ownerAlive(text!, owner)) throw inUse(owner.pid)
      if (owner === undefined && ageMs(path) < UNREADABLE_GRACE_MS) throw inUse(undefined)
      removeStale(path, text)
      continue
    }
    try {
      writeSync(fd, token)
    } finally {
      closeSync(fd)
    }
    heldHere.add(token)
    let released = false
    return {
      path,
      release() {
        if (released) return
        released = true
        heldHere.delete(token)
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
