import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { REPO } from '../server/process.ts'
import { docFiles, fenceProblems, fences, runnableBlocks } from './doc-blocks.ts'

/** README.md and docs/*.md (docs/spec/ is a copy of the spec, not ours): the convention of README "Docs". */
const FILES = docFiles(REPO)

describe('every fenced block is run or says why not', () => {
  it('README.md and docs/*.md: each fence is `sh runnable`, `ts runnable`, an output, `sh install`/`sh daemon` (README) or `<lang> no-run <reason>`', () => {
    const problems = FILES.flatMap((file) => fenceProblems(file, readFileSync(join(REPO, file), 'utf8')))
    expect(problems).toEqual([])
  })

  it('the convention is enforced: unmarked fences, reasonless no-run and stray outputs are reported', () => {
    const md = ['```sh', 'a', '```', '```js no-run', 'b', '```', 'prose', '```text output', 'c', '```', '```ts no-run needs a browser', 'd', '```', '```', 'e', '```'].join('\n')
    expect(fenceProblems('x.md', md).map((p) => p.split(':')[1])).toEqual(['1', '4', '8', '14'])
  })

  it('fences indented in a list item count too, their body without the indentation', () => {
    const md = ['- a step:', '', '  ```sh', '  echo hi', '  ```', '', '  ```sh runnable', '  echo ok', '  ```', '', '  ```text output', '  ok', '  ```'].join('\n')
    expect(fenceProblems('x.md', md).map((p) => p.split(':')[1])).toEqual(['3'])
    expect(runnableBlocks('x.md', md)).toEqual([{ file: 'x.md', line: 7, code: 'echo ok', expect: { kind: 'text', body: 'ok' } }])
  })

  it('a `ts runnable` block runs through tsx, and takes an output block', () => {
    const md = ['```ts runnable', 'console.log(1)', '```', '```text output', '1', '```'].join('\n')
    expect(fenceProblems('x.md', md)).toEqual([])
    expect(runnableBlocks('x.md', md)).toEqual([{ file: 'x.md', line: 1, code: "npx tsx - <<'SVC_TS_BLOCK'\nconsole.log(1)\nSVC_TS_BLOCK", expect: { kind: 'text', body: '1' } }])
  })

  it('docs/ has no block that would run outside the README but install or start a daemon of its own', () => {
    const misplaced = FILES.filter((f) => f !== 'README.md').flatMap((file) =>
      fences(readFileSync(join(REPO, file), 'utf8'))
        .filter((f) => f.info === 'sh install' || f.info === 'sh daemon')
        .map((f) => `${file}:${f.line}`),
    )
    expect(misplaced).toEqual([])
  })
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
