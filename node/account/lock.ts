import { closeSync, linkSync, openSync, readFileSync, renameSync, statSync, unlinkSync, writeSync } from 'node:fs'
import { randomUUID } from 'node:crypto'
import { join } from 'node:path'
import { SvcError } from '../../sync/core/errors.ts'
import { errField } from '../../sync/core/log.ts'
import { LOCK_FILE } from './layout.ts'

/**
 * Exclusive lock on an account directory: a file created with O_EXCL holding the owner's pid,
 * that process's start time and the boot id (Linux), and a nonce. A lock is live only when its
 * owner is: this process holding it (a lock in our own pid we do not hold was left by an
 * earlier process that had our pid, common in containers, where every start gets the same
 * pid), or another running process whose start time still matches (a reused pid belongs to a
 * process started later), in this boot. A lock of the older format (pid and nonce only) is
 * judged by when the named process started and what it runs (`oldFormatVerdict`). A live lock
 * fails the boot with 409 `auth.account_in_use` (`details.pid`); any other is stale and gets
 * taken over.
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

/** Seconds since the epoch at which this machine booted (`btime` in /proc/stat). */
function bootTimeS(): number | undefined {
  const m = /^btime (\d+)$/m.exec(readText('/proc/stat') ?? '')
  return m ? Number(m[1]) : undefined
}

/** Clock ticks per second of /proc's start times: USER_HZ, 100 on every Linux we run on (checked below). */
const TICKS_PER_S = 100

/** Wall-clock time a process started, in ms, from its /proc start time and the boot time. */
export function processStartedAtMs(pid: number): number | undefined {
  const ticks = Number(processStartTime(pid))
  const boot = bootTimeS()
  return Number.isFinite(ticks) && boot !== undefined ? boot * 1000 + (ticks / TICKS_PER_S) * 1000 : undefined
}

/**
 * Whether processStartedAtMs can be compared with file times here: our own start computed that
 * way must match the start Node knows (a different USER_HZ, or a clock stepped since boot, would
 * make every comparison wrong, and then none is made).
 */
let startTimesComparable: boolean | undefined
function canCompareStartTimes(): boolean {
  if (startTimesComparable === undefined) {
    const computed = processStartedAtMs(process.pid)
    startTimesComparable = computed !== undefined && Math.abs(computed - (Date.now() - process.uptime() * 1000)) < 2_000
  }
  return startTimesComparable
}

/** The command line of a process (arguments joined by spaces), where /proc has it. */
function commandLine(pid: number): string | undefined {
  const raw = readText(`/proc/${pid}/cmdline`)
  return raw === undefined ? undefined : raw.split('\0').join(' ').trim()
}

/**
 * Slack when comparing a lock's modification time with a process's start: the boot time is
 * whole seconds and a clock may drift after boot. A pid reused within it is left to the
 * command line check.
 */
const START_SLACK_MS = 2_000

/** Only a Node process (the daemon under node or tsx, or the `svc` launcher) can have written a lock. */
const MAY_BE_DAEMON = /node|svc/i

interface Verdict {
  alive: boolean
  /** Why an old-format lock naming a running process was judged stale (logged on takeover). */
  staleBecause?: string
}

/**
 * A lock written before locks carried start times names a pid and nothing else, and a running
 * process with that pid is not proof: after a crash or a container restart the pid is often
 * reused by something else, and that lock would block the account until that process ends.
 * Such a lock is stale when the named process started after the lock was written (it cannot
 * have written it), or when its command line shows it is not Node. Otherwise it is live: when
 * in doubt two daemons on one database is the worse failure.
 */
function oldFormatVerdict(pid: number, lockWrittenMs: number | undefined): Verdict {
  if (lockWrittenMs !== undefined && canCompareStartTimes()) {
    const started = processStartedAtMs(pid)
    if (started !== undefined && started > lockWrittenMs + START_SLACK_MS) return { alive: false, staleBecause: 'the process with its pid started after the lock was written' }
  }
  const cmd = commandLine(pid)
  if (cmd !== undefined && !MAY_BE_DAEMON.test(cmd)) return { alive: false, staleBecause: 'the process with its pid is not a Node process' }
  return { alive: true }
}

/** Whether the process that wrote this lock still runs. */
function ownerVerdict(text: string, owner: LockOwner, path: string): Verdict {
  if (heldHere.has(text)) return { alive: true }
  // Our own pid on a lock we do not hold: an earlier process that had our pid.
  if (owner.pid === process.pid) return { alive: false }
  const boot = bootId()
  if (owner.boot !== undefined && boot !== undefined && owner.boot !== boot) return { alive: false }
  if (!isPidAlive(owner.pid)) return { alive: false }
  if (owner.start === undefined) return oldFormatVerdict(owner.pid, modifiedMs(path))
  const start = processStartTime(owner.pid)
  return { alive: start === undefined || owner.start === start }
}

function modifiedMs(path: string): number | undefined {
  try {
    return statSync(path).mtimeMs
  } catch {
    return undefined
  }
}

function ageMs(path: string): number {
  const m = modifiedMs(path)
  return m === undefined ? 0 : Date.now() - m
}

/** Where a lock takeover worth knowing about is reported. */
export interface LockLog {
  warn(obj: object, msg: string): void
  /** Expected races on the lock file (one already gone, a newer one in place); optional. */
  debug?(obj: object, msg: string): void
}

/** Node's process warnings (stderr unless the embedder listens), under a code of their own. */
export const processWarningLog: LockLog = {
  warn: (obj, msg) => process.emitWarning(`${msg} ${JSON.stringify(obj)}`, { code: 'SVC_ACCOUNT_LOCK' }),
}

const inUse = (pid: number | undefined) => new SvcError('auth.account_in_use', 'the account is served by another process', pid === undefined ? undefined : { pid })

/**
 * Moves a stale lock out of the way without clobbering a lock another process created in the
 * meantime: rename to a private name, then check that what we moved is the stale lock we saw.
 */
function removeStale(path: string, staleText: string | undefined, log: LockLog): void {
  const aside = `${path}.stale-${process.pid}-${Date.now()}`
  try {
    renameSync(path, aside)
  } catch {
    return // someone else removed it first
  }
  const movedText = readText(aside)
  const moved = parseOwner(movedText)
  if (movedText !== staleText && moved !== undefined && ownerVerdict(movedText!, moved, aside).alive) {
    // We moved a fresh lock: put it back unless yet another one appeared.
    try {
      linkSync(aside, path)
    } catch (err) {
      // A newer lock exists; the moved one's owner will find it gone at release.
      log.debug?.({ path, err: errField(err) }, 'a fresh lock moved aside was not put back: a newer one is in place')
    }
  }
  try {
    unlinkSync(aside)
  } catch (err) {
    log.debug?.({ path: aside, err: errField(err) }, 'removing a moved-aside lock file failed (already gone)')
  }
}

export function acquireLock(dir: string, log: LockLog = processWarningLog): AccountLock {
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
      const verdict = owner === undefined ? undefined : ownerVerdict(text!, owner, path)
      if (verdict?.alive) throw inUse(owner!.pid)
      if (owner === undefined && ageMs(path) < UNREADABLE_GRACE_MS) throw inUse(undefined)
      if (verdict?.staleBecause !== undefined) log.warn({ dir, pid: owner!.pid }, `taking over an old-format account lock: ${verdict.staleBecause}`)
      removeStale(path, text, log)
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
          } catch (err) {
            log.debug?.({ path, err: errField(err) }, 'removing our lock file at release failed (already gone)')
          }
        }
      },
    }
  }
  throw inUse(readPid(path))
}
