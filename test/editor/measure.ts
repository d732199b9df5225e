/**
 * Quick measurement (not a test): PUT of a 1,000-block document changing one block.
 * Times render + incremental parse + diff (diffMarkdown), which is all the module does for a PUT,
 * and, for reference, a full parse + diffBlocks. Run: npx tsx test/editor/measure.ts
 */
import { diffMarkdown, diffBlocks, parse, posGenerator, render, summarize } from '../../sync/modules/editor/index.ts'
import { bigDrafts, materialize } from './helpers.ts'

const N = Number(process.env.BLOCKS ?? 1000)
const ITER = Number(process.env.ITER ?? 200)
const drafts = bigDrafts(N)
const blocks = materialize(drafts)
const md = render(blocks)
const newPos = posGenerator('device-A')

function edited(i: number): string {
  // change the text of block i (a paragraph, list item, quote or heading) in the markdown
  const b = drafts[i]
  const at = md.indexOf(b.text!)
  return md.slice(0, at) + b.text!.replace(/\d+/, (d) => `${d} (edited ${i})`) + md.slice(at + b.text!.length)
}

const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((xs.length * p) / 100))]

// warm up
for (let k = 0; k < 30; k++) diffMarkdown(blocks, edited((k * 37) % N), newPos)

const times: number[] = []
const cpu: number[] = []
for (let k = 0; k < ITER; k++) {
  const next = edited((k * 7919) % N)
  const c0 = process.cpuUsage()
  const t0 = performance.now()
  const diff = diffMarkdown(blocks, next, newPos)
  times.push(performance.now() - t0)
  const c = process.cpuUsage(c0)
  cpu.push((c.user + c.system) / 1000)
  const s = summarize(diff)
  if (s.updated !== 1 || s.inserted !== 0 || s.deleted !== 0) throw new Error(`unexpected ops ${JSON.stringify(s)}`)
}
const full: number[] = []
for (let k = 0; k < Number(process.env.FULL ?? 5); k++) {
  const next = edited((k * 7919) % N)
  const t0 = performance.now()
  diffBlocks(blocks, parse(next), newPos)
  full.push(performance.now() - t0)
}
console.log(JSON.stringify({
  blocks: N,
  bytes: md.length,
  putOneBlockChange: { p50ms: +pct(times, 50).toFixed(2), p90ms: +pct(times, 90).toFixed(2), max: +Math.max(...times).toFixed(2), cpuP50ms: +pct(cpu, 50).toFixed(2), runs: ITER },
  loadAverage: (await import('node:os')).loadavg()[0],
  fullParseAndDiffForReference: full.length ? { p50ms: +pct(full, 50).toFixed(1), runs: full.length } : null,
}))
