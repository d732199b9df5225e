import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildCli } from '../../scripts/build.ts'
import { REPO, spawnSvc } from '../server/process.ts'
import { docFiles, runnableBlocks } from './doc-blocks.ts'
import { failedBlock, outputMismatches, runBlocks } from './run-blocks.ts'

/**
 * Runs every `sh runnable` and `ts runnable` block of README.md (first: its quick start creates
 * the account) and docs/*.md against one real daemon, each file in one bash session, and checks
 * the documented outputs. README "Docs" describes the markers; doc-fences.test.ts checks that
 * every other block says why it does not run.
 */

const FILES = docFiles(REPO)
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
        const run = await runBlocks(blocks, {
          cwd: REPO,
          env: { ...process.env, SVC: daemon.url, SVC_URL: daemon.url, SVC_NO_MDNS: '1', EDITOR: 'true' },
          timeoutMs: BLOCK_TIMEOUT_MS * Math.max(1, blocks.length),
        })
        const daemonState = `--- daemon (exit ${daemon.proc.exitCode ?? 'running'}, signal ${daemon.proc.signalCode ?? 'none'}) stderr:\n${daemon.stderr().slice(-3000)}`
        expect(run.code, `${failedBlock(blocks, run)}\n${daemonState}`).toBe(0)
        expect(outputMismatches(blocks, run)).toEqual([])
      },
      BLOCK_TIMEOUT_MS * Math.max(1, blocks.length),
    )
  }
})
