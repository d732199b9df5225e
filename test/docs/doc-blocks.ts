/**
 * The runnable examples of a markdown file: fenced blocks with info `sh runnable`, each with the
 * output documented in the fenced block right after it (`text output` or `json output`), if any.
 */
export interface DocBlock {
  file: string
  /** 1-based line of the block's opening fence. */
  line: number
  code: string
  expect?: { kind: 'text' | 'json'; body: string }
}

export function runnableBlocks(file: string, markdown: string): DocBlock[] {
  const lines = markdown.split('\n')
  const fences: { line: number; info: string; body: string; end: number }[] = []
  for (let i = 0; i < lines.length; i++) {
    const open = /^(`{3,})(.*)$/.exec(lines[i])
    if (!open) continue
    const end = lines.findIndex((l, j) => j > i && l.startsWith(open[1]) && l.trim() === open[1])
    if (end < 0) break
    fences.push({ line: i + 1, info: open[2].trim(), body: lines.slice(i + 1, end).join('\n'), end })
    i = end
  }
  const blocks: DocBlock[] = []
  fences.forEach((f, k) => {
    if (f.info !== 'sh runnable') return
    const next = fences[k + 1]
    // The output block must follow the code block directly (no prose in between).
    const adjacent = next !== undefined && next.line === f.end + 2
    const kind = adjacent && (next.info === 'text output' ? 'text' : next.info === 'json output' ? 'json' : undefined)
    blocks.push({ file, line: f.line, code: f.body, ...(kind ? { expect: { kind, body: next.body } } : {}) })
  })
  return blocks
}

const ELLIPSIS = '…'

/** Text output: line by line, runs of spaces as one, `…` matching anything within a line. */
export function textMatches(expected: string, actual: string): boolean {
  const norm = (s: string) =>
    s
      .replace(/\s+$/, '')
      .split('\n')
      .map((l) => l.replace(/\s+/g, ' ').trim())
  const want = norm(expected)
  const got = norm(actual)
  if (want.length !== got.length) return false
  return want.every((w, i) => {
    const pattern = w
      .split(ELLIPSIS)
      .map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))
      .join('.*')
    return new RegExp(`^${pattern}$`).test(got[i])
  })
}

/** JSON output: `"…"` matches any value; objects need the documented keys; arrays their length. */
export function jsonMatches(expected: unknown, actual: unknown): boolean {
  if (expected === ELLIPSIS) return actual !== undefined
  if (Array.isArray(expected)) return Array.isArray(actual) && actual.length === expected.length && expected.every((e, i) => jsonMatches(e, actual[i]))
  if (expected !== null && typeof expected === 'object') {
    if (actual === null || typeof actual !== 'object' || Array.isArray(actual)) return false
    return Object.entries(expected).every(([k, v]) => jsonMatches(v, (actual as Record<string, unknown>)[k]))
  }
  return expected === actual
}
