import { execFileSync } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { main } from '../../server/cli/dispatch.ts'
import { COMMANDS } from '../../server/cli/commands/index.ts'
import { completionOf } from '../../server/cli/commands/completion.ts'
import { memoryIO } from '../server/process.ts'

/* `svc completion bash|zsh|fish` (issue 39 item 6): scripts made from the command table. */
const run = async (...args: string[]) => {
  const m = memoryIO('', {})
  const code = await main(args, m.io)
  return { code, out: m.out(), err: m.err() }
}

let dir: string
let bashFile: string
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'svc-completion-'))
  bashFile = join(dir, 'svc.bash')
  writeFileSync(bashFile, (await run('completion', 'bash')).out)
})
afterAll(() => rmSync(dir, { recursive: true, force: true }))

/** What bash completes for `words` (the last one being completed), with the script sourced. */
function complete(...words: string[]): string[] {
  const script = `source ${JSON.stringify(bashFile)}; COMP_WORDS=(${words.map((w) => `'${w}'`).join(' ')}); COMP_CWORD=${words.length - 1}; _svc; printf '%s\\n' "\${COMPREPLY[@]}"`
  return execFileSync('bash', ['-c', script], { encoding: 'utf8' }).split('\n').filter(Boolean)
}

describe('svc completion', () => {
  it('every command of the table is in each script; the bash script parses (bash -n)', async () => {
    for (const shell of ['bash', 'zsh', 'fish']) {
      const r = await run('completion', shell)
      expect(r.code).toBe(0)
      for (const c of COMMANDS) expect({ shell, name: c.name, has: r.out.includes(c.name) }).toEqual({ shell, name: c.name, has: true })
    }
    expect(COMMANDS.map((c) => c.name)).toContain('completion')
    expect(() => execFileSync('bash', ['-n', bashFile])).not.toThrow()
    const zsh = (await run('completion', 'zsh')).out
    for (const c of await Promise.all(COMMANDS.map((e) => e.load()))) expect(zsh).toContain(`'${c.name}:${c.summary.replace(/'/g, `'\\''`)}'`)
    const fish = (await run('completion', 'fish')).out
    for (const c of COMMANDS) expect(fish).toContain(`-n __fish_use_subcommand -a '${c.name}'`)
  })

  it('bash completes command names, subcommands and options from the commands themselves', () => {
    expect(complete('svc', '')).toEqual([...COMMANDS.map((c) => c.name), '--help', '--version'])
    expect(complete('svc', 'sp')).toEqual(['spaces'])
    expect(complete('svc', 'chat', 're')).toEqual(['react', 'read'])
    expect(complete('svc', 'agents', 'tr')).toEqual(['triggers', 'trigger'])
    expect(complete('svc', 'chat', 'send', 'SPACE', '--no')).toEqual(['--no-mentions'])
    expect(complete('svc', 'spaces', '--j')).toEqual(['--json'])
    expect(complete('svc', 'push', 'token', 'set', '--pl')).toEqual(['--platform'])
    // no subcommand list: nothing offered (bash then completes file names, -o default)
    expect(complete('svc', 'health', 'x')).toEqual([])
  })

  it('subcommands and options come from each usage text', async () => {
    const chat = completionOf(await COMMANDS.find((c) => c.name === 'chat')!.load())
    expect(chat.subcommands).toEqual(['send', 'list', 'watch', 'edit', 'delete', 'react', 'read'])
    expect(chat.options).toEqual(expect.arrayContaining(['--chat', '--remove', '--all', '--no-mentions', '--json', '--url', '--token', '--help']))
    const spaces = completionOf(await COMMANDS.find((c) => c.name === 'spaces')!.load())
    expect(spaces.subcommands).toEqual(['list', 'create', 'get', 'delete', 'set', 'settings'])
    expect(spaces.subcommands).not.toContain('SPACE_ID')
  })

  it('the zsh script parses (zsh -n); the fish script parses and completes commands and subcommands in fish', async () => {
    // CI installs zsh and fish (.ci/run), so both shells judge their own scripts here.
    const zshFile = join(dir, '_svc')
    writeFileSync(zshFile, (await run('completion', 'zsh')).out)
    expect(() => execFileSync('zsh', ['-n', zshFile])).not.toThrow()
    const fishFile = join(dir, 'svc.fish')
    writeFileSync(fishFile, (await run('completion', 'fish')).out)
    expect(() => execFileSync('fish', ['--no-execute', fishFile])).not.toThrow()
    const fishComplete = (line: string) =>
      execFileSync('fish', ['-c', `source ${JSON.stringify(fishFile)}; complete -C ${JSON.stringify(line)}`], { encoding: 'utf8' })
        .split('\n')
        .filter(Boolean)
        .map((l) => l.split('\t')[0])
    expect(fishComplete('svc sp')).toEqual(['spaces'])
    expect(fishComplete('svc chat re')).toEqual(['react', 'read'])
  })

  it('an unknown or missing shell is a usage error', async () => {
    expect(await run('completion', 'tcsh')).toMatchObject({ code: 1, err: expect.stringContaining('SHELL is bash, zsh or fish (got tcsh)') })
    expect(await run('completion')).toMatchObject({ code: 1, err: expect.stringContaining('missing SHELL') })
  })
})
