import { errField, sinkLogger, type Logger, type LogSink, type LogThreshold } from '../../sync/core/log.ts'

/**
 * The push node's logger: the Logger of sync/core/log.ts, one JSON line per event on stderr,
 * each tagged with its scope (`push-node/queue`, `push-node/sweep`, ...). Tokens and payloads
 * never go in a line: a token is a secret of its device. Tests pass a sink to read what was logged.
 */
export { errField, type Logger, type LogSink }

const stderrSink: LogSink = ({ level, scope, msg, ...fields }) => process.stderr.write(`${JSON.stringify({ t: new Date().toISOString(), level, scope, msg, ...fields })}\n`)

export function scopedLogger(scope: string, sink: LogSink = stderrSink, threshold: LogThreshold = 'info'): Logger {
  return sinkLogger(scope, sink, threshold)
}
