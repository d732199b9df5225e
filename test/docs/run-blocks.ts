import { spawn } from 'node:child_process'
import { jsonMatches, textMismatch, type DocBlock } from './doc-blocks.ts'

const END = (i: number) => `@@svc-doc-block-end ${i}@@`

export interface BlocksRun {
  /** Each block's stdout, up to the first block that failed. */
  outputs: string[]
  code: number | null
  stderr: string
}

/**
 * Runs blocks in order in one `bash` session with `set -euo pipefail` (a block's variables and
 * functions reach the next), in its own process group, which is killed after `timeoutMs` and
 * when it ends, so nothing a block started in the background outlives it.
 */
export function runBlocks(blocks: DocBlock[], opts: { cwd: string; env: NodeJS.ProcessEnv; timeoutMs: number }): Promise<BlocksRun> {
  const script = ['set -euo pipefail', ...blocks.flatMap((b, i) => [b.code, `printf '\\n${END(i)}\\n'`])].join('\n')
  return new Promise((resolve) => {
    const child = spawn('bash', ['-c', script], { cwd: opts.cwd, env: opts.env, stdio: ['ignore', 'pipe', 'pipe'], detached: true })
    let out = ''
    let err = ''
    child.stdout.setEncoding('utf8').on('data', (c: string) => (out += c))
    child.stderr.setEncoding('utf8').on('data', (c: string) => (err += c))
    const killGroup = () => {
      try {
        process.kill(-child.pid!, 'SIGKILL')
      } catch {
        // The group is gone already: nothing is left to stop.
      }
    }
    // Bounded: a block that hangs (a stream that never ends) fails the test instead of holding it.
    const timer = setTimeout(killGroup, opts.timeoutMs)
    child.on('exit', (code) => {
      clearTimeout(timer)
      killGroup()
      const outputs: string[] = []
      let rest = out
      for (let i = 0; i < blocks.length; i++) {
        const at = rest.indexOf(`\n${END(i)}\n`)
        if (at < 0) break
        outputs.push(rest.slice(0, at))
        rest = rest.slice(at + END(i).length + 2)
      }
      resolve({ outputs, code, stderr: err })
    })
  })
}

/** The blocks whose printed output is not what the doc shows, each with both. */
export function outputMismatches(blocks: DocBlock[], run: BlocksRun): string[] {
  return blocks.flatMap((b, i) => {
    if (!b.expect) return []
    const actual = run.outputs[i] ?? ''
    const where = `${b.file}:${b.line}\n${b.code}\n--- documented:\n${b.expect.body}\n--- printed:\n${actual}`
    if (b.expect.kind === 'text') {
      const diff = textMismatch(b.expect.body, actual)
      return diff === undefined ? [] : [`${where}\n--- first difference, ${diff}`]
    }
    let parsed: unknown
    try {
      parsed = JSON.parse(actual)
    } catch {
      return [`${where}\n--- not JSON`]
    }
    return jsonMatches(JSON.parse(b.expect.body), parsed) ? [] : [where]
  })
}

/** Why a run failed: the block that did not finish, and the stderr tail. */
export function failedBlock(blocks: DocBlock[], run: BlocksRun): string {
  const failed = blocks[run.outputs.length]
  return failed ? `${failed.file}:${failed.line} failed (exit ${run.code}):\n${failed.code}\n--- stderr:\n${run.stderr.slice(-3000)}` : run.stderr.slice(-3000)
}
