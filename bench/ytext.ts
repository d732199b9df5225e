/**
 * Text kind benchmark (issue 21), three figures, each a ratio against a baseline in this run:
 *
 * - `mergeVsBareYjs`: 10,000 interleaved single-character edits of two writers (ytext-workload.ts)
 *   folded through svc's merge (applyToRecord: the op check, the Yjs fold, the plain string put
 *   into the record's value), then the stored form written once, against a bare Y.Doc applying
 *   the same updates and encoding its state once. Target <= 2.
 * - `stateVsBareYjs`: the bytes of the block's merged Yjs state against Y.encodeStateAsUpdate of
 *   the bare doc. Target <= 1.5. `storedRecordVsBareYjs` is the whole stored record (JSON: the
 *   state in base64 beside the plain string) against the same.
 * - `putVsPlainSet`: markdown PUT p50 at 1,000 blocks with one block's text changed, with text
 *   deltas (a Yjs update) against the same service writing the leaf as a plain set (the code
 *   before the text kind, EditorService.textDeltas = false), interleaved. Target <= 1.1.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import * as Y from 'yjs'
import { SqliteStorageAdapter } from '../node/storage/sqlite.ts'
import { systemEnv } from '../sync/core/env.ts'
import { applyToRecord, type RecordState } from '../sync/crdt/record.ts'
import { YTextField } from '../sync/crdt/ytext.ts'
import { defaultCryptoProvider } from '../sync/crypto/provider.ts'
import { keyPairFromSeed } from '../sync/crypto/keys.ts'
import { editorModule } from '../sync/modules/editor/module.ts'
import { EDITOR_BLOCKS } from '../sync/modules/editor/service.ts'
import { encodeStoredRecord, MemoryNumbering } from '../sync/replica/record-codec.ts'
import { SpaceEngine } from '../sync/space/space-engine.ts'
import { documentOf } from './editor.ts'
import { interleavedEdits } from './ytext-workload.ts'

const EDITS = Number(process.env.BENCH_YTEXT_EDITS ?? 10_000)
const MERGE_RUNS = 5
const BLOCKS = Number(process.env.BENCH_YTEXT_BLOCKS ?? 1000)
const PUT_RUNS = Number(process.env.BENCH_YTEXT_PUT_RUNS ?? 60)
const WARMUP = 10

const progress = (msg: string) => process.stderr.write(`[bench ytext] ${msg}\n`)
const pct = (xs: number[], p: number): number => {
  const s = [...xs].sort((a, b) => a - b)
  return s[Math.min(s.length - 1, Math.floor((s.length * p) / 100))]
}
const round = (x: number, d = 3): number => Math.round(x * 10 ** d) / 10 ** d

function benchMerge() {
  const { ops, updates } = interleavedEdits(EDITS)
  const svc: number[] = []
  const bare: number[] = []
  let state: RecordState | undefined
  let bareDoc: Y.Doc | undefined
  let stored = 0
  for (let run = 0; run < MERGE_RUNS + 1; run++) {
    // Alternate which goes first, so neither always runs on a warmer heap.
    const order = run % 2 === 0 ? ['svc', 'bare'] : ['bare', 'svc']
    for (const which of order) {
      const t0 = performance.now()
      if (which === 'svc') {
        let st: RecordState | undefined
        for (const s of ops) st = applyToRecord(st, s.info, s.op, []).state
        stored = encodeStoredRecord({ ...st!, v: 0 }, new MemoryNumbering()).length
        state = st
        if (run > 0) svc.push(performance.now() - t0)
      } else {
        const d = new Y.Doc()
        for (const u of updates) Y.applyUpdate(d, u)
        Y.encodeStateAsUpdate(d)
        bareDoc?.destroy()
        bareDoc = d
        if (run > 0) bare.push(performance.now() - t0)
      }
    }
  }
  const text = (state!.value as { text: string }).text
  if (text !== bareDoc!.getText('t').toString()) throw new Error('svc merge and bare Yjs disagree on the text')
  const stateBytes = YTextField.from(state!.yt!.text).state().length
  const bareBytes = Y.encodeStateAsUpdate(bareDoc!).length
  const svcMs = pct(svc, 50)
  const bareMs = pct(bare, 50)
  return {
    edits: EDITS,
    runs: MERGE_RUNS,
    svcMergeMs: round(svcMs, 1),
    bareYjsMs: round(bareMs, 1),
    mergeVsBareYjs: round(svcMs / bareMs),
    mergeTarget: 2,
    textChars: text.length,
    stateBytes,
    bareYjsStateBytes: bareBytes,
    stateVsBareYjs: round(stateBytes / bareBytes),
    storedRecordBytes: stored,
    storedRecordVsBareYjs: round(stored / bareBytes),
    sizeTarget: 1.5,
  }
}

function editParagraph(md: string, i: number, rev: number): string {
  const re = new RegExp(`^Paragraph ${i}(?: rev \\d+)? with`, 'm')
  if (!re.test(md)) throw new Error(`paragraph ${i} not found`)
  return md.replace(re, `Paragraph ${i} rev ${rev} with`)
}

async function benchPut() {
  const dir = mkdtempSync(join(tmpdir(), 'svc-bench-ytext-'))
  const storage = new SqliteStorageAdapter(join(dir, 'ytext.db'))
  try {
    const engine = await SpaceEngine.create({ storage, crypto: await defaultCryptoProvider(), env: systemEnv }, keyPairFromSeed(new Uint8Array(32).fill(2)), {
      modules: [editorModule],
    })
    const editor = engine.services.of(editorModule)
    const types = engine.services.types
    const docType = (await types.createType({ name: 'Doc', xKey: 'doc' })).id
    await types.createPart(docType, { key: 'body', datasets: [{ module: 'editor', shared: true }] })
    const obj = await engine.createObject({ types: [docType] })
    let md = documentOf(BLOCKS)
    await editor.put(obj, EDITOR_BLOCKS, md)
    await engine.settled()
    progress(`${BLOCKS} blocks, ${md.length} bytes`)
    const paragraphs = Array.from({ length: BLOCKS }, (_, i) => i).filter((i) => i % 10 >= 1 && i % 10 < 5)
    const times = { deltas: [] as number[], plain: [] as number[] }
    for (let k = 0; k < 2 * (WARMUP + PUT_RUNS); k++) {
      const mode = k % 2 === 0 ? 'deltas' : 'plain'
      editor.textDeltas = mode === 'deltas'
      const next = editParagraph(md, paragraphs[(k * 7919) % paragraphs.length], k)
      const t0 = performance.now()
      const summary = await editor.put(obj, EDITOR_BLOCKS, next)
      const t = performance.now() - t0
      if (k >= 2 * WARMUP) times[mode].push(t)
      await engine.settled()
      if (summary.updated !== 1) throw new Error(`PUT changed ${summary.updated} blocks`)
      md = next
    }
    editor.textDeltas = true
    if ((await editor.markdown(obj, EDITOR_BLOCKS)) !== md) throw new Error('final document differs from the last PUT')
    const d = pct(times.deltas, 50)
    const p = pct(times.plain, 50)
    return { blocks: BLOCKS, runs: PUT_RUNS, putDeltasP50Ms: round(d), putPlainSetP50Ms: round(p), putVsPlainSet: round(d / p), putTarget: 1.1 }
  } finally {
    await storage.close()
    rmSync(dir, { recursive: true, force: true })
  }
}

export async function benchYtext(): Promise<Record<string, unknown>> {
  progress(`merge: ${EDITS} interleaved edits`)
  const merge = benchMerge()
  progress('markdown PUT')
  const put = await benchPut()
  return {
    ...merge,
    ...put,
    meetsTargets: merge.mergeVsBareYjs <= merge.mergeTarget && merge.stateVsBareYjs <= merge.sizeTarget && put.putVsPlainSet <= put.putTarget,
  }
}

// Direct run: `npx tsx bench/ytext.ts`.
if (import.meta.url === `file://${process.argv[1]}`) {
  console.log(JSON.stringify(await benchYtext(), null, 2))
}
