/**
 * The logger every component receives through its context, scoped to that component
 * (`p2p/headsync`, `agents/runner`, `push-node/queue`). sync/ defines only this interface and two
 * plain implementations, so the library logs the same way in a page, the daemon and the
 * simulator; the daemon hands in one backed by pino (node/log/pino-logger.ts), whose JSON lines
 * go to stderr at the level of `--log-level`.
 *
 * Rules the code follows (docs/operations.md "Logs"):
 * - a failure that is expected and harmless (a peer gone mid-send) is logged at debug, with what
 *   was being done, never dropped unseen;
 * - a failure a user should know about (a file that cannot be written, a push that keeps failing)
 *   is logged at warn; a bug or lost work at error;
 * - fields never carry key material, tokens or payloads, and errors go in as `errField(err)`.
 */
export type LogLevel = 'debug' | 'info' | 'warn' | 'error'
export const LOG_LEVELS: readonly LogLevel[] = ['debug', 'info', 'warn', 'error']
/** `silent` turns every line off (tests that assert on output, the simulator by default). */
export type LogThreshold = LogLevel | 'silent'

export type LogFields = Record<string, unknown>

export interface Logger {
  debug(msg: string, fields?: LogFields): void
  info(msg: string, fields?: LogFields): void
  warn(msg: string, fields?: LogFields): void
  error(msg: string, fields?: LogFields): void
  /** A logger for a part of this component: its scope is `parent/sub`. */
  child(scope: string): Logger
}

/** One line as a sink receives it. */
export interface LogLine extends LogFields {
  level: LogLevel
  scope: string
  msg: string
}
export type LogSink = (line: LogLine) => void

const rank = (l: LogThreshold): number => (l === 'silent' ? 99 : LOG_LEVELS.indexOf(l))

export const isLogThreshold = (v: unknown): v is LogThreshold => v === 'silent' || LOG_LEVELS.includes(v as LogLevel)

/**
 * A logger that hands each line at or above `threshold` to `sink`. A sink that throws is
 * ignored: a logger that throws would turn a logged failure into a crash of what logged it.
 */
export function sinkLogger(scope: string, sink: LogSink, threshold: LogThreshold = 'info'): Logger {
  const min = rank(threshold)
  const at = (level: LogLevel) =>
    rank(level) < min
      ? () => undefined
      : (msg: string, fields: LogFields = {}) => {
          try {
            sink({ ...fields, level, scope, msg })
          } catch {
            // See above: nothing to report to, and the caller must go on.
          }
        }
  return { debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error'), child: (sub) => sinkLogger(scope ? `${scope}/${sub}` : sub, sink, threshold) }
}

/** Logs nothing: the default where no logger was passed (a library user who did not ask for lines). */
export const silentLogger: Logger = sinkLogger('', () => undefined, 'silent')

/** A logger that keeps its lines, for tests that assert what was logged. */
export function memoryLogger(scope = 'test', threshold: LogThreshold = 'debug'): Logger & { lines: LogLine[] } {
  const lines: LogLine[] = []
  return Object.assign(
    sinkLogger(scope, (l) => lines.push(l), threshold),
    { lines },
  )
}

/** An error as a log field: its name and message, never a stack with paths in it. */
export const errField = (err: unknown): string => (err instanceof Error ? `${err.name}: ${err.message}` : String(err)).slice(0, 300)

/**
 * The handler for a promise whose failure is expected and changes nothing (a peer that left
 * mid-send, a close racing a close): the failure goes to `log` at debug with what was being
 * done, instead of vanishing. `promise.catch(logAt(log, 'redial', { peer }))`.
 */
export const logAt =
  (log: Logger, doing: string, fields?: LogFields, level: LogLevel = 'debug') =>
  (err: unknown): void =>
    log[level](`${doing} failed`, { ...fields, err: errField(err) })
