import { CLIENT_OPTIONS, need, parseClientArgs } from '../client.ts'
import { EXIT, UsageError, type Command } from '../io.ts'
import { COMMANDS } from './index.ts'

const USAGE = `usage: svc completion bash|zsh|fish
  prints a completion script for the shell, made from svc's own command table: command names,
  each command's subcommands and options (as its --help lists them).
    bash: svc completion bash > ~/.local/share/bash-completion/completions/svc
          (or: source <(svc completion bash) in ~/.bashrc)
    zsh:  svc completion zsh > "\${fpath[1]}/_svc"   (or: source <(svc completion zsh) after compinit)
    fish: svc completion fish > ~/.config/fish/completions/svc.fish`

/** What completion offers for one command, read from the command itself. */
export interface CompletionEntry {
  name: string
  summary: string
  subcommands: string[]
  options: string[]
}

const NAME = /^[a-z][a-z0-9-]*$/

/**
 * A command's subcommands and options, from its usage text: a subcommand is the first word after
 * `svc <name>` on a usage line when it is a lowercase word (`svc spaces [list]`, `svc spaces
 * create NAME`; not `SPACE_ID`), also after a `|` (`enable ID | disable ID`); options are every
 * `--flag` the usage names. The usage is what --help prints, so the two cannot drift apart.
 */
export function completionOf(c: Command): CompletionEntry {
  const subcommands = new Set<string>()
  const options = new Set<string>()
  for (const line of c.usage.split('\n')) {
    const at = line.indexOf(`svc ${c.name} `)
    if (at >= 0) {
      const rest = line.slice(at + `svc ${c.name} `.length)
      for (const alt of rest.split(/\s\|\s/)) {
        const word = alt
          .trim()
          .replace(/^\[/, '')
          .split(/[\s\]|]/)[0]
        if (NAME.test(word) && !word.startsWith('-')) subcommands.add(word)
      }
    }
    for (const m of line.matchAll(/(?:^|[\s[(|])(--[a-z][a-z0-9-]*)/g)) options.add(m[1])
  }
  options.add('--help')
  // Commands that talk to the daemon take the client options (server/cli/client.ts) besides --url.
  if (options.has('--url')) for (const o of Object.keys(CLIENT_OPTIONS)) options.add(`--${o}`)
  return { name: c.name, summary: c.summary, subcommands: [...subcommands], options: [...options].sort() }
}

/** Single-quoted for sh, zsh and fish: `'` becomes `'\''`. */
const q = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`

export function bashScript(entries: readonly CompletionEntry[]): string {
  const cases = entries.map((e) => `    ${e.name}) subs=${q(e.subcommands.join(' '))}; opts=${q(e.options.join(' '))} ;;`).join('\n')
  return `# svc completion for bash (made by \`svc completion bash\` from svc's command table)
_svc() {
  local cur=\${COMP_WORDS[COMP_CWORD]}
  if [ "$COMP_CWORD" -eq 1 ]; then
    COMPREPLY=($(compgen -W ${q([...entries.map((e) => e.name), '--help', '--version'].join(' '))} -- "$cur"))
    return 0
  fi
  local subs='' opts=''
  case "\${COMP_WORDS[1]}" in
${cases}
  esac
  if [[ $cur == -* ]]; then
    COMPREPLY=($(compgen -W "$opts" -- "$cur"))
  elif [ "$COMP_CWORD" -eq 2 ] && [ -n "$subs" ]; then
    COMPREPLY=($(compgen -W "$subs" -- "$cur"))
  else
    COMPREPLY=()
  fi
  return 0
}
complete -o default -F _svc svc
`
}

export function zshScript(entries: readonly CompletionEntry[]): string {
  const described = entries.map((e) => `    ${q(`${e.name}:${e.summary}`)}`).join('\n')
  const cases = entries.map((e) => `    (${e.name}) subs=(${e.subcommands.map(q).join(' ')}); opts=(${e.options.map(q).join(' ')}) ;;`).join('\n')
  return `#compdef svc
# svc completion for zsh (made by \`svc completion zsh\` from svc's command table)
_svc() {
  local -a cmds subs opts
  if (( CURRENT == 2 )); then
    cmds=(
${described}
    )
    _describe -t commands 'svc command' cmds
    return
  fi
  case \${words[2]} in
${cases}
  esac
  if [[ \${words[CURRENT]} == -* ]]; then
    compadd -- $opts
  elif (( CURRENT == 3 && \${#subs} > 0 )); then
    compadd -- $subs
  else
    _files
  fi
}
if [[ \${funcstack[1]} == _svc ]]; then _svc "$@"; else compdef _svc svc; fi
`
}

export function fishScript(entries: readonly CompletionEntry[]): string {
  const lines = ["# svc completion for fish (made by `svc completion fish` from svc's command table)", 'complete -c svc -e']
  for (const e of entries) {
    lines.push(`complete -c svc -f -n __fish_use_subcommand -a ${q(e.name)} -d ${q(e.summary)}`)
    if (e.subcommands.length > 0) lines.push(`complete -c svc -f -n ${q(`__fish_seen_subcommand_from ${e.name}`)} -a ${q(e.subcommands.join(' '))}`)
    for (const o of e.options) lines.push(`complete -c svc -n ${q(`__fish_seen_subcommand_from ${e.name}`)} -l ${q(o.slice(2))}`)
  }
  return lines.join('\n') + '\n'
}

const SHELLS: Record<string, (entries: readonly CompletionEntry[]) => string> = { bash: bashScript, zsh: zshScript, fish: fishScript }

/** Every command of the table, loaded for its usage and summary. */
export async function completionEntries(): Promise<CompletionEntry[]> {
  return (await Promise.all(COMMANDS.map((c) => c.load()))).map(completionOf)
}

export const completionCommand: Command = {
  name: 'completion',
  summary: 'print a shell completion script (bash, zsh or fish)',
  usage: USAGE,
  async run(args, io) {
    const { positionals } = parseClientArgs(args, {}, io, USAGE)
    const [shell] = need('completion', positionals, ['SHELL'], USAGE) as [string]
    const make = SHELLS[shell] as ((entries: readonly CompletionEntry[]) => string) | undefined
    if (make === undefined) throw new UsageError(`svc completion: SHELL is bash, zsh or fish (got ${shell})\n${USAGE}`)
    io.stdout.write(make(await completionEntries()))
    return EXIT.ok
  },
}
