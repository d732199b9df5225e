import { readdirSync } from 'node:fs'
import { join } from 'node:path'

/**
 * The fenced blocks of a markdown file and what each one is (README "Docs"). Every fence's info
 * string is one of:
 *
 * - `sh runnable`: run by the doc test (test/docs/doc-examples.test.ts) against a real daemon;
 * - `ts runnable`: TypeScript, run the same way through tsx (`npx tsx -`, in the repository
 *   directory, so `./sim/...` imports resolve; `process.env.SVC` is the daemon's URL);
 * - `text output` / `json output`: the output of the runnable block right before it;
 * - `sh install`: the README's install, run by the newcomer test (test/e2e/newcomer.test.ts) in a
 *   fresh clone, not by the doc test (it would reinstall the repository under test);
 * - `sh daemon`: the README's daemon start, started in the background by the newcomer test (the
 *   doc test starts its own daemon);
 * - `<lang> no-run <reason>`: not run, for the reason given (it must not be empty).
 */
export interface DocBlock {
  file: string
  /** 1-based line of the block's opening fence. */
  line: number
  code: string
  expect?: { kind: 'text' | 'json'; body: string }
}

export interface Fence {
  /** 1-based line of the opening fence. */
  line: number
  info: string
  body: string
  /** 0-based index of the closing fence's line. */
  end: number
  /** Only blank lines separate it from the fence before it (no prose in between). */
  adjacent: boolean
}

export function fences(markdown: string): Fence[] {
  const lines = markdown.split('\n')
  const found: Fence[] = []
  const adjacent = (i: number) => {
    const prev = found.at(-1)
    return prev !== undefined && lines.slice(prev.end + 1, i).every((l) => l.trim() === '')
  }
  for (let i = 0; i < lines.length; i++) {
    // Fences may be indented (inside a list item): the body loses that indentation.
    const open = /^( *)(`{3,})(.*)$/.exec(lines[i])
    if (!open) continue
    const [, indent, ticks, info] = open
    const end = lines.findIndex((l, j) => j > i && l.trim() === ticks)
    const body = (to: number) =>
      lines
        .slice(i + 1, to)
        .map((l) => (l.startsWith(indent) ? l.slice(indent.length) : l.trimStart()))
        .join('\n')
    if (end < 0) {
      // An unclosed fence runs to the end of the file (CommonMark): report it as one.
      found.push({ line: i + 1, info: `${info.trim()} (unclosed)`, body: body(lines.length), end: lines.length, adjacent: adjacent(i) })
      break
    }
    found.push({ line: i + 1, info: info.trim(), body: body(end), end, adjacent: adjacent(i) })
    i = end
  }
  return found
}

/** The kinds of a fence that runs, in one test or another. */
const RUN_KINDS = new Set(['sh runnable', 'ts runnable', 'sh install', 'sh daemon'])
/** What the doc test runs, in document order; an output block follows one of these. */
export const DOC_TEST_KINDS: readonly string[] = ['sh runnable', 'ts runnable']
const OUTPUT_KINDS = new Set(['text output', 'json output'])
const NO_RUN = /^[a-z][a-z0-9+-]* no-run (\S.*)$/

/** Whether `next` is the output block of `f`: right after it, blank lines at most in between. */
const isOutputOf = (f: Fence | undefined, next: Fence | undefined): next is Fence => f !== undefined && next !== undefined && next.adjacent && OUTPUT_KINDS.has(next.info)

/** Every fence of the file that breaks the convention above, as `file:line: why`. */
export function fenceProblems(file: string, markdown: string): string[] {
  const all = fences(markdown)
  return all.flatMap((f, k) => {
    const at = `${file}:${f.line}: \`\`\`${f.info}`
    if (RUN_KINDS.has(f.info) || NO_RUN.test(f.info)) return []
    if (OUTPUT_KINDS.has(f.info))
      return isOutputOf(all[k - 1], f) && DOC_TEST_KINDS.includes(all[k - 1].info) ? [] : [`${at}: an output block must directly follow a runnable block`]
    if (/^[a-z][a-z0-9+-]* no-run\s*$/.test(f.info)) return [`${at}: \`no-run\` needs a reason`]
    return [`${at}: unmarked; use \`sh runnable\` (with an output block) or \`<lang> no-run <reason>\``]
  })
}

/**
 * The blocks of the given kinds (what the doc test runs by default), in document order, each
 * with the output block right after it, if any. A `ts runnable` block comes as the bash that
 * runs it.
 */
export function runnableBlocks(file: string, markdown: string, kinds: readonly string[] = DOC_TEST_KINDS): DocBlock[] {
  const all = fences(markdown)
  const blocks: DocBlock[] = []
  all.forEach((f, k) => {
    if (!kinds.includes(f.info)) return
    const next = all[k + 1]
    const expect = isOutputOf(f, next) ? { kind: next.info === 'text output' ? ('text' as const) : ('json' as const), body: next.body } : undefined
    const code = f.info === 'ts runnable' ? `npx tsx - <<'SVC_TS_BLOCK'\n${f.body}\nSVC_TS_BLOCK` : f.body
    blocks.push({ file, line: f.line, code, ...(expect ? { expect } : {}) })
  })
  return blocks
}

const ELLIPSIS = '…'

/** Text output: line by line, runs of spaces as one, `…` matching anything within a line. */
export function textMatches(expected: string, actual: string): boolean {
  return textMismatch(expected, actual) === undefined
}

/** Where text output first differs from the documented one (undefined when it matches). */
export function textMismatch(expected: string, actual: string): string | undefined {
  const norm = (s: string) =>
    s
      .replace(/\s+$/, '')
      .split('\n')
      .map((l) => l.replace(/\s+/g, ' ').trim())
  const want = norm(expected)
  const got = norm(actual)
  const bad = want.findIndex((w, i) => {
    const pattern = w
      .split(ELLIPSIS)
      .map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))
      .join('.*')
    return i >= got.length || !new RegExp(`^${pattern}$`).test(got[i])
  })
  if (bad >= 0) return `line ${bad + 1}: documented\n  ${want[bad]}\nprinted\n  ${got[bad] ?? '(nothing)'}`
  if (got.length > want.length) return `${got.length - want.length} more lines than documented, from line ${want.length + 1}: ${got[want.length]}`
  return undefined
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

/** The files whose blocks follow the convention: README.md, then docs/*.md sorted (not docs/spec/, a copy of the spec). */
export function docFiles(repo: string): string[] {
  return [
    'README.md',
    ...readdirSync(join(repo, 'docs'))
      .filter((f) => f.endsWith('.md'))
      .sort()
      .map((f) => `docs/${f}`),
  ]
}
