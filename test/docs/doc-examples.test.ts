import { spawn } from 'node:child_process'
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildCli } from '../../scripts/build.ts'
import { REPO, spawnSvc } from '../server/process.ts'
import { jsonMatches, runnableBlocks, textMatches, type DocBlock } from './doc-blocks.ts'

/**
 * Runs every `sh runnable` block of README.md (first: its quick start creates the account) and
 * docs/*.md against one real daemon, each file in one bash session, and checks the documented
 * outputs. README "Docs" describes the markers.
 */

const FILES = [
  'README.md',
  ...readdirSync(join(REPO, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .sort()
    .map((f) => `docs/${f}`),
]
const BLOCK_TIMEOUT_MS = 120_000

const START_TIMEOUT_MS = 90_000

let daemon: ReturnType<typeof spawnSvc> & { url: string }
let data: string
beforeAll(async () => {
  // The blocks run `svc` as the README has it (server/cli/svc.mjs), which runs the compiled
  // build: built here from the sources under test, not whatever dist/ a past build left.
  await buildCli()
  data = mkdtempSync(join(tmpdir(), 'svc-docs-'))
  // A real `svc serve` on a random port; its first stdout line is the base URL. The wait is
  // generous: start-up is slow on a loaded machine.
  const s = spawnSvc(['serve', '--port', '0', '--data', data], { env: { SVC_NO_MDNS: '1' } })
  let timer: NodeJS.Timeout | undefined
  const url = await new Promise<string>((resolve, reject) => {
    const check = () => {
      const [first, ...more] = s.stdout().split('\n')
      if (more.length > 0) resolve(first)
    }
    s.proc.stdout.on('data', check)
    void s.exited.then((code) => reject(new Error(`svc serve exited ${code}: ${s.stderr()}`)))
    timer = setTimeout(() => {
      s.proc.kill('SIGKILL')
      reject(new Error(`svc serve did not start: ${s.stderr()}`))
    }, START_TIMEOUT_MS)
  }).finally(() => clearTimeout(timer))
  daemon = { ...s, url }
}, START_TIMEOUT_MS + 5_000)
afterAll(async () => {
  if (daemon && daemon.proc.exitCode === null) {
    daemon.proc.kill('SIGTERM')
    await daemon.exited
  }
  rmSync(data, { recursive: true, force: true })
}, 30_000)

const END = (i: number) => `@@svc-doc-block-end ${i}@@`

/** One bash session for a file's blocks; resolves with each block's stdout and how bash ended. */
function runFile(blocks: DocBlock[]): Promise<{ outputs: string[]; code: number | null; stderr: string }> {
  const script = ['set -euo pipefail', ...blocks.flatMap((b, i) => [b.code, `printf '\\n${END(i)}\\n'`])].join('\n')
  return new Promise((resolve) => {
    const child = spawn('bash', ['-c', script], {
      cwd: REPO,
      env: { ...process.env, SVC: daemon.url, SVC_URL: daemon.url, SVC_NO_MDNS: '1', EDITOR: 'true' },
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    })
    let out = ''
    let err = ''
    child.stdout.setEncoding('utf8').on('data', (c: string) => (out += c))
    child.stderr.setEncoding('utf8').on('data', (c: string) => (err += c))
    // Bounded: a block that hangs (a stream that never ends) fails the test instead of holding it.
    const timer = setTimeout(() => process.kill(-child.pid!, 'SIGKILL'), BLOCK_TIMEOUT_MS * Math.max(1, blocks.length))
    child.on('exit', (code) => {
      clearTimeout(timer)
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

describe('runnable doc examples', () => {
  const withBlocks = FILES.map((f) => ({ file: f, blocks: runnableBlocks(f, readFileSync(join(REPO, f), 'utf8')) })).filter((f) => f.blocks.length > 0)

  it('README has a runnable quick start', () => {
    expect(withBlocks[0]?.file).toBe('README.md')
    expect(withBlocks[0].blocks.length).toBeGreaterThanOrEqual(5)
  })

  // Sequential: the README's quick start creates the account the other files use.
  for (const { file, blocks } of withBlocks) {
    it(
      `${file}: every runnable block runs and prints what the doc shows`,
      async () => {
        const run = await runFile(blocks)
        const failed = blocks[run.outputs.length]
        const daemonState = `--- daemon (exit ${daemon.proc.exitCode ?? 'running'}, signal ${daemon.proc.signalCode ?? 'none'}) stderr:\n${daemon.stderr().slice(-3000)}`
        expect(run.code, failed ? `${file}:${failed.line} failed:\n${failed.code}\n--- stderr:\n${run.stderr.slice(-3000)}\n${daemonState}` : run.stderr.slice(-3000)).toBe(0)
        for (const [i, b] of blocks.entries()) {
          if (!b.expect) continue
          const actual = run.outputs[i]
          const where = `${file}:${b.line}\n${b.code}\n--- documented:\n${b.expect.body}\n--- printed:\n${actual}`
          if (b.expect.kind === 'text') expect(textMatches(b.expect.body, actual), where).toBe(true)
          else {
            let parsed: unknown
            expect(() => (parsed = JSON.parse(actual)), where).not.toThrow()
            expect(jsonMatches(JSON.parse(b.expect.body), parsed), where).toBe(true)
          }
        }
      },
      BLOCK_TIMEOUT_MS * Math.max(1, blocks.length),
    )
  }
})

describe('docs hold no unresolved merge', () => {
  it('no file of README.md or docs/ has a conflict marker line', () => {
    const markers = FILES.flatMap((file) =>
      readFileSync(join(REPO, file), 'utf8')
        .split('\n')
        .flatMap((line, i) => (/^(<{7}|={7}|>{7})( |$)/.test(line) ? [`${file}:${i + 1}: ${line}`] : [])),
    )
    expect(markers).toEqual([])
  })
})
