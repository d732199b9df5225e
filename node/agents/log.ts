/**
 * The agents component's logger: every line carries the `[agents]` scope. The daemon writes
 * it to stderr; a test passes its own to see what was logged.
 */
export interface AgentsLog {
  warn(message: string, details?: Record<string, unknown>): void
  error(message: string, err?: unknown, details?: Record<string, unknown>): void
}

const detailText = (d: Record<string, unknown> | undefined) => (d && Object.keys(d).length ? ` ${JSON.stringify(d)}` : '')

export const consoleAgentsLog: AgentsLog = {
  warn: (message, details) => console.warn(`[agents] ${message}${detailText(details)}`),
  error: (message, err, details) => console.error(`[agents] ${message}${detailText(details)}`, ...(err === undefined ? [] : [err])),
}
