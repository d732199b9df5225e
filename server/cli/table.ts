/** Plain-text tables for the CLI's human output (`--json` prints the API's JSON instead). */

/**
 * Text safe for a terminal: names, xKeys and documents come from other members of a space, and
 * a control sequence (ESC [ ..., OSC 52, a bare CR) printed raw could rewrite the screen, the
 * title or the clipboard. Control characters show as `\u001b` instead; `keep` lists the ones
 * kept (a document's line breaks and tabs).
 */
export function terminalSafe(text: string, keep = ''): string {
  // eslint-disable-next-line no-control-regex -- control characters are what it escapes
  return text.replace(/[\u0000-\u001f\u007f-\u009f\u2028\u2029]/g, (c) => (keep.includes(c) ? c : `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`))
}

const cell = (v: unknown): string => {
  if (v === undefined || v === null) return ''
  if (typeof v === 'string') return terminalSafe(v)
  if (typeof v === 'object' && v !== null && '$date' in v) return terminalSafe(String(v.$date))
  return terminalSafe(JSON.stringify(v))
}

/** Columns padded to their widest cell; an empty table prints `(none)`. */
export function table(headers: string[], rows: unknown[][]): string {
  if (rows.length === 0) return '(none)\n'
  const text = [headers, ...rows.map((r) => r.map(cell))]
  const widths = headers.map((_, i) => Math.max(...text.map((r) => (r[i] ?? '').length)))
  return (
    text
      .map((r) =>
        r
          .map((c, i) => (i === r.length - 1 ? c : (c ?? '').padEnd(widths[i])))
          .join('  ')
          .trimEnd(),
      )
      .join('\n') + '\n'
  )
}
