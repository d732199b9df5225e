/**
 * Editor benchmark (issue 5): `PUT /markdown` of a 1,000-block document that changes one block,
 * through the real EditorService on the daemon's storage (SQLite adapter, temp dir): read the
 * blocks, render, windowed re-parse, diff, sign, encrypt and commit one change.
 *
 * Target: p50 <= 20 ms, and every PUT writes exactly one block op (one change, one record, one
 * path set); the bench throws otherwise. `putVsRenderParse` = PUT p50 / p50 of a bare
 * `render(blocks) + parse(markdown)` of the same document (what a naive PUT would cost before
 * any storage work), measured interleaved in the same run; below 1 means the PUT is cheaper.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { SqliteStorageAdapter } from '../node/storage/sqlite.ts'
import { systemEnv } from '../sync/core/env.ts'
import { defaultCryptoProvider } from '../sync/crypto/provider.ts'
import { keyPairFromSeed } from '../sync/crypto/keys.ts'
import { parse, render, sortBlocks } from '../sync/modules/editor/index.ts'
import type { CommitInfo } from '../sync/replica/types.ts'
import { editorModule } from '../sync/modules/editor/module.ts'
import { EDITOR_BLOCKS } from '../sync/modules/editor/service.ts'
import { SpaceEngine } from '../sync/space/space-engine.ts'

const BLOCKS = Number(process.env.BENCH_EDITOR_BLOCKS ?? 1000)
const RUNS = Number(process.env.BENCH_EDITOR_RUNS ?? 101)
const WARMUP = 10
/** A full parse of the document takes ~25x a PUT: the baseline runs on every BASE_EVERY-th PUT. */
const BASE_EVERY = Number(process.env.BENCH_EDITOR_BASE_EVERY ?? 5)
const TARGET_MS = 20

const progress = (msg: string) => process.stderr.write(`[bench editor] ${msg}\n`)

/** A document in normal form, of mixed constructs: headings, paragraphs with inline marks and links, lists, tasks, quotes. */
export function documentOf(n: number): string {
  let out = ''
  for (let i = 0; i < n; i++) {
    const k = i % 10
    // Consecutive items form one tight list; every other block is a paragraph apart.
    out += i === 0 ? '' : k >= 6 && k <= 7 ? '\n' : '\n\n'
    out += blockText(i)
  }
  return out + '\n'
}

function blockText(i: number): string {
  const k = i % 10
  if (k === 0) return `## Section ${i}`
  if (k < 5) return `Paragraph ${i} with **bold**, *italic*, \`code\`, a [link](https://example.com/${i}) and [a page](svc://obj${i}).`
  if (k < 7) return `- item ${i} with ~~strike~~`
  if (k === 7) return `- [${i % 20 === 7 ? 'x' : ' '}] task ${i}`
  return `> quote ${i}`
}

/** The markdown with paragraph `i`'s text changed to mark revision `rev`. */
function editParagraph(md: string, i: number, rev: number): string {
  const re = new RegExp(`^Paragraph ${i}(?: rev \\d+)? with`, 'm')
  if (!re.test(md)) throw new Error(`paragraph ${i} not found`)
  return md.replace(re, `Paragraph ${i} rev ${rev} with`)
}

const pct = (xs: number[], p: number): number => {
  const s = [...xs].sort((a, b) => a - b)
  return s[Math.min(s.length - 1, Math.floor((s.length * p) / 100))]
}
const round = (x: number, d = 3): number => Math.round(x * 10 ** d) / 10 ** d

/** A space with one Doc object whose shared editor dataset holds a BLOCKS-block document. */
async function openDocument(storage: SqliteStorageAdapter) {
  const engine = await SpaceEngine.create({ storage, crypto: await defaultCryptoProvider(), env: systemEnv }, keyPairFromSeed(new Uint8Array(32).fill(1)), {
    modules: [editorModule],
  })
  const editor = engine.services.of(editorModule)
  // The object carries a type declaring the shared editor dataset (spec "Editor").
  const types = engine.services.types
  const docType = (await types.createType({ name: 'Doc', xKey: 'doc' })).id
  await types.createPart(docType, { key: 'body', datasets: [{ module: 'editor', shared: true }] })
  const obj = await engine.createObject({ types: [docType] })
  const initial = documentOf(BLOCKS)
  const created = await editor.put(obj, EDITOR_BLOCKS, initial)
  if (created.inserted !== BLOCKS) throw new Error(`expected ${BLOCKS} blocks, parsed ${created.inserted}`)
  await engine.settled()
  const md = await editor.markdown(obj, EDITOR_BLOCKS)
  if (md !== initial) throw new Error('the document does not round-trip')
  progress(`${BLOCKS} blocks, ${md.length} bytes`)
  return { engine, editor, obj, md }
}

type Timings = { put: number[]; base: number[] }

/**
 * WARMUP + RUNS PUTs, each editing one paragraph, with the render+parse baseline every
 * BASE_EVERY-th; wall and CPU times of both (warm-up runs dropped), and the last document.
 */
async function measurePuts({ engine, editor, obj, md }: Awaited<ReturnType<typeof openDocument>>) {
  // What each PUT committed, as merge saw it: changes, and block ops per change.
  let commits: CommitInfo[] = []
  engine.replica.addCommitListener((info) => {
    if (info.local) commits.push(info)
  })
  const paragraphs = Array.from({ length: BLOCKS }, (_, i) => i).filter((i) => i % 10 >= 1 && i % 10 < 5)

  const wall: Timings = { put: [], base: [] }
  const cpu: Timings = { put: [], base: [] }
  let blockOps = -1
  let sink = 0
  for (let k = 0; k < WARMUP + RUNS; k++) {
    const warm = k < WARMUP
    const next = editParagraph(md, paragraphs[(k * 7919) % paragraphs.length], k)
    commits = []
    let c0 = process.cpuUsage()
    let t0 = performance.now()
    const summary = await editor.put(obj, EDITOR_BLOCKS, next)
    let t = performance.now() - t0
    let c = process.cpuUsage(c0)
    if (!warm) {
      wall.put.push(t)
      cpu.put.push((c.user + c.system) / 1000)
    }
    await engine.settled()
    if (summary.updated !== 1 || summary.inserted !== 0 || summary.deleted !== 0) throw new Error(`PUT changed more than one block: ${JSON.stringify(summary)}`)
    const ops = commits.flatMap((ci) => ci.records.filter((r) => r.ds === EDITOR_BLOCKS)).reduce((n, r) => n + r.ops.length, 0)
    if (commits.length !== 1 || ops !== 1) throw new Error(`PUT wrote ${commits.length} changes and ${ops} block ops, expected 1 and 1`)
    blockOps = ops
    md = next

    // Baseline on the same document: render the stored blocks and parse the new text in full.
    if (k % BASE_EVERY !== 0) continue
    const blocks = sortBlocks(await editor.blocks(obj, EDITOR_BLOCKS))
    c0 = process.cpuUsage()
    t0 = performance.now()
    const rendered = render(blocks)
    sink += parse(next).length + rendered.length
    t = performance.now() - t0
    c = process.cpuUsage(c0)
    if (!warm) {
      wall.base.push(t)
      cpu.base.push((c.user + c.system) / 1000)
    }
    if (rendered !== next) throw new Error('stored blocks do not render to the PUT document')
  }
  if (sink === 0) throw new Error('baseline did no work')
  return { wall, cpu, blockOps, md }
}

export async function benchEditor(): Promise<Record<string, unknown>> {
  const dir = mkdtempSync(join(tmpdir(), 'svc-bench-editor-'))
  const storage = new SqliteStorageAdapter(join(dir, 'editor.db'))
  try {
    const doc = await openDocument(storage)
    const { wall, cpu, blockOps, md } = await measurePuts(doc)
    if ((await doc.editor.markdown(doc.obj, EDITOR_BLOCKS)) !== md) throw new Error('final document differs from the last PUT')

    const putP50 = pct(wall.put, 50)
    const baseP50 = pct(wall.base, 50)
    return {
      blocks: BLOCKS,
      bytes: md.length,
      runs: RUNS,
      baselineRuns: wall.base.length,
      storage: storage.name,
      blockOps,
      putP50Ms: round(putP50),
      putP99Ms: round(pct(wall.put, 99)),
      cpuPutP50Ms: round(pct(cpu.put, 50)),
      renderParseP50Ms: round(baseP50),
      renderParseP99Ms: round(pct(wall.base, 99)),
      putVsRenderParse: round(putP50 / baseP50),
      putVsRenderParseCpu: round(pct(cpu.put, 50) / pct(cpu.base, 50)),
      targetMs: TARGET_MS,
      meetsTarget: putP50 <= TARGET_MS && blockOps === 1,
    }
  } finally {
    await storage.close()
    rmSync(dir, { recursive: true, force: true })
  }
}

// Direct run: `npx tsx bench/editor.ts`.
if (import.meta.url === `file://${process.argv[1]}`) {
  console.log(JSON.stringify(await benchEditor(), null, 2))
}
