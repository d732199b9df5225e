import { pino, type Logger as Pino } from 'pino'
import type { LogFields, Logger, LogThreshold } from '../../sync/core/log.ts'

/**
 * The daemon's loggers, all children of one pino root writing JSON lines to `stream` (stderr in
 * `svc serve`) at the level of `--log-level`: Fastify's request logger and every component's
 * scoped Logger (sync/core/log.ts) share it, so one flag and one format cover the process.
 * Each line carries `scope` (`daemon/head-sync`, `http`, `agents/runner`).
 */
export function daemonLoggers(level: LogThreshold, stream: { write(line: string): unknown }): { root: Pino; log: Logger } {
  const root = pino({ level, base: undefined, timestamp: pino.stdTimeFunctions.isoTime }, stream)
  return { root, log: fromPino(root, 'daemon') }
}

/** A scoped Logger over the root: `child('x')` logs with scope `parent/x` (each a child of the root, so a line has one scope). */
export function fromPino(root: Pino, scope: string): Logger {
  const p = root.child({ scope })
  const at =
    (level: 'debug' | 'info' | 'warn' | 'error') =>
    (msg: string, fields?: LogFields): void => {
      if (fields) p[level](fields, msg)
      else p[level](msg)
    }
  return {
    debug: at('debug'),
    info: at('info'),
    warn: at('warn'),
    error: at('error'),
    child: (sub) => fromPino(root, `${scope}/${sub}`),
  }
}
