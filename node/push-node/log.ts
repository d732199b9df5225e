/**
 * The push node's logger: one JSON line per event on stderr, each tagged with its scope
 * (`push-node/queue`, `push-node/sweep`, ...). Tokens and payloads never go in a line: a token
 * is a secret of its device. Tests pass a sink to read what was logged.
 */
export type LogLevel = 'info' | 'warn' | 'error'
export type LogSink = (line: { level: LogLevel; scope: string; msg: string; [k: string]: unknown }) => void

export interface Logger {
  info(msg: string, fields?: Record<string, unknown>): void
  warn(msg: string, fields?: Record<string, unknown>): void
  error(msg: string, fields?: Record<string, unknown>): void
  child(scope: string): Logger
}

const stderrSink: LogSink = (line) => process.stderr.write(`${JSON.stringify({ t: new Date().toISOString(), ...line })}\n`)

export function scopedLogger(scope: string, sink: LogSink = stderrSink): Logger {
  const at = (level: LogLevel) => (msg: string, fields: Record<string, unknown> = {}) => {
    try {
      sink({ level, scope, msg, ...fields })
    } catch {
      // A logger that throws would turn a logged failure into a crash of what logged it.
    }
  }
  return { info: at('info'), warn: at('warn'), error: at('error'), child: (sub) => scopedLogger(`${scope}/${sub}`, sink) }
}

/** An error as a log field: its name and message, never a stack with paths in it. */
export const errField = (err: unknown): string => (err instanceof Error ? `${err.name}: ${err.message}` : String(err)).slice(0, 300)
