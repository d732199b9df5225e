import { CONFIG_FLAG, CONFIG_ROWS, fileTopKeys } from './config-table.ts'
import { orList } from './config-table-kinds.ts'
import { envNames, type Row } from './config-table-row.ts'

/**
 * What is rendered from the rows of CONFIG_TABLE for people to read: `svc serve`'s usage text
 * and the table in docs/operations.md.
 */

const flagOf = (r: Row) => (r.flag ? `--${r.flag}${r.arg ? ` ${r.arg}` : ''}` : '')

/** The default as docs show it (markdown); usage drops the backticks. */
function shownDefault(r: Row): string {
  if (r.shownDefault !== undefined) return r.shownDefault
  // eslint-disable-next-line @typescript-eslint/no-base-to-string -- defaults are scalars
  return r.default === undefined ? '' : `\`${String(r.default)}\``
}

const helpOf = (r: Row) => (r.choices ? `${r.help}; ${orList(r.choices)}` : r.help)

const WIDTH = 100

/** Words in lines of at most WIDTH, the first line after `first`, the others indented by `indent`. */
function wrap(first: string, words: string[], indent: number): string {
  const lines = [first]
  for (const word of words) {
    const last = lines[lines.length - 1]
    const width = last.length - (last.lastIndexOf('\n') + 1)
    if (last.trim() !== '' && width + word.length + 1 > WIDTH) lines.push(`${' '.repeat(indent)}${word}`)
    else lines[lines.length - 1] = last.endsWith(' ') ? `${last}${word}` : `${last} ${word}`
  }
  return lines.join('\n')
}

/** `svc serve`'s usage text: the flags, then a line per row, then the config file. */
export function serveUsage(): string {
  const flags = [...CONFIG_ROWS.flatMap(([, r]) => (r.flag ? [`[${flagOf(r)}]`] : [])), `[--${CONFIG_FLAG.flag} ${CONFIG_FLAG.arg}]`]
  const pad = 26
  const line = (left: string, words: string[]) => wrap(left.length < pad - 2 ? `  ${left.padEnd(pad - 2)}` : `  ${left}\n${' '.repeat(pad)}`, words, pad)
  const lines = CONFIG_ROWS.map(([, r]) => {
    // A switch is off unless given: "(default false)" says nothing.
    const def = r.arg || !r.flag ? shownDefault(r).replaceAll('`', '') : ''
    const help = `${helpOf(r)}${def ? ` (default ${def})` : ''}`.split(' ')
    const env = envNames(r).join(', ')
    // The env var stays on one line with its "env".
    return r.flag ? line(flagOf(r), env ? [...help.slice(0, -1), `${help.at(-1)};`, `env ${env}`] : help) : line(`env ${env}`, help)
  })
  const fileKeys = fileTopKeys().map((k) => {
    const nested = CONFIG_ROWS.flatMap(([, r]) => (r.file?.startsWith(`${k}.`) ? [r.file.slice(k.length + 1)] : []))
    return nested.length ? `${k} ({${nested.join(', ')}})` : k
  })
  lines.push(line(`--${CONFIG_FLAG.flag} ${CONFIG_FLAG.arg}`, `JSON file with the keys ${fileKeys.join(', ')}`.split(' ')))
  lines.push('  Flags win over env vars, env vars over the config file, that over the defaults.')
  return `${wrap('usage: svc serve', flags, 17)}\n${lines.join('\n')}`
}

const cell = (s: string) => s.replaceAll('|', '\\|')
const code = (s: string) => (s ? `\`${s}\`` : '')

/** The table of docs/operations.md "Configuration", between its marker comments. */
export function configTableMarkdown(): string {
  const rows = CONFIG_ROWS.map(
    ([, r]) => `| ${r.file ? code(r.file) : 'not in the file'} | ${code(flagOf(r))} | ${envNames(r).map(code).join(', ')} | ${cell(shownDefault(r))} | ${cell(helpOf(r))} |`,
  )
  const config = `| | \`--${CONFIG_FLAG.flag} ${CONFIG_FLAG.arg}\` | | | the JSON config file; unknown keys are refused |`
  return ['| Config file key | Flag | Env var | Default | Meaning |', '|---|---|---|---|---|', ...rows, config].join('\n')
}
