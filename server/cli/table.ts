/** Plain-text tables for the CLI's human output (`--json` prints the API's JSON instead). */

const cell = (v: unknown): string => {
  if (v === undefined || v === null) return ''
  if (typeof v === 'string') return v
  if (typeof v === 'object' && v !== null && '$date' in v) return String((v as { $date: unknown }).$date)
  return JSON.stringify(v)
}

/** Columns padded to their widest cell; an empty table prints `(none)`. */
export function table(headers: string[], rows: unknown[][]): string {
  if (rows.length === 0) return '(none)\n'
  const text = [headers, ...rows.map((r) => r.map(cell))]
  const widths = headers.map((_, i) => Math.max(...text.map((r) => (r[i] ?? '').length)))
  return text.map((r) => r.map((c, i) => (i === r.length - 1 ? c : (c ?? '').padEnd(widths[i]!))).join('  ').trimEnd()).join('\n') + '\n'
}
