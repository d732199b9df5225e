import { utf8 } from '../../sync/core/encoding.ts'
import { errField } from '../../sync/core/log.ts'
import { AGENT_LIMITS } from '../../sync/modules/agents/limits.ts'
import type { RunRecord } from '../../sync/modules/agents/record.ts'
import { anchorIdOf } from '../../sync/modules/agents/store.ts'
import { filesModule } from '../../sync/modules/files/module.ts'
import type { FilesService } from '../../sync/modules/files/service.ts'
import type { AccountEngine } from '../../sync/space/account-engine.ts'
import type { SpaceEngine } from '../../sync/space/space-engine.ts'

/** Where a run's trace lives in its `trigger_runs` record. */
export type KeptTrace = Pick<RunRecord, 'trace' | 'traceFile' | 'traceBytes' | 'traceTruncated'>

const FILE_LINK = /^svc:\/\/f\/([^/]+)\/([^/]+)$/

/**
 * A run's trace as its `trigger_runs` record keeps it (chat.md: `traceRef`, "inline for small
 * traces, file attachment for large"): up to AGENT_LIMITS.traceInlineBytes (UTF-8) the lines are
 * inline (`trace`); a larger trace becomes a `text/plain` file attached to the agents anchor
 * through the files module (its lines joined by newlines), named by `traceFile`
 * (`svc://f/<spaceId>/<fileId>`, the link shape of chat attachments), with `traceBytes`. A trace
 * the sandbox cut at AGENT_LIMITS.traceMaxBytes is marked `traceTruncated`. Without the files
 * module, or when the file cannot be stored, the inline head is kept and marked truncated: the
 * run is recorded either way.
 */
export async function keepTrace(account: AccountEngine, space: SpaceEngine, runId: string, lines: string[]): Promise<KeptTrace> {
  const text = lines.join('\n')
  const bytes = utf8(text)
  const cut = lines.reduce((n, l) => n + l.length, 0) >= AGENT_LIMITS.traceMaxBytes
  if (bytes.length <= AGENT_LIMITS.traceInlineBytes) return { trace: lines, ...(cut ? { traceTruncated: true } : {}) }
  try {
    const files = filesOf(account)
    const res = await files.attach(space.spaceId, anchorIdOf(space.spaceId), { name: `${runId}.trace.txt`.slice(-200), mime: 'text/plain' }, once(bytes))
    return { traceFile: `svc://f/${space.spaceId}/${res.fileId}`, traceBytes: bytes.length, ...(cut ? { traceTruncated: true } : {}) }
  } catch (err) {
    account.log.warn('storing a large agent trace as a file failed; its head is kept inline', { spaceId: space.spaceId, runId, err: errField(err) })
    return { trace: inlineHead(lines), traceBytes: bytes.length, traceTruncated: true }
  }
}

/** Deletes the trace files of runs that keep-last-N tombstoned (their bytes go at the next sweep past grace). */
export async function dropTraceFiles(account: AccountEngine, space: SpaceEngine, runs: ReadonlyArray<Pick<RunRecord, 'traceFile'>>): Promise<void> {
  for (const r of runs) {
    const m = typeof r.traceFile === 'string' ? FILE_LINK.exec(r.traceFile) : null
    if (!m || m[1] !== space.spaceId) continue
    try {
      await filesOf(account).remove(space.spaceId, m[2])
    } catch (err) {
      account.log.debug("deleting an old run's trace file failed", { spaceId: space.spaceId, fileId: m[2], err: errField(err) })
    }
  }
}

const filesOf = (account: AccountEngine): FilesService => account.services.of(filesModule)

async function* once(bytes: Uint8Array): AsyncIterable<Uint8Array> {
  yield bytes
}

/** The lines that fit traceInlineBytes (UTF-8, newlines counted), the last one cut to fit. */
function inlineHead(lines: string[]): string[] {
  const out: string[] = []
  let left = AGENT_LIMITS.traceInlineBytes
  for (const line of lines) {
    const b = utf8(line)
    if (b.length + (out.length ? 1 : 0) > left) {
      const room = left - (out.length ? 1 : 0)
      if (room > 0) out.push(new TextDecoder().decode(b.subarray(0, room)).replace(/\uFFFD$/, ''))
      break
    }
    left -= b.length + (out.length ? 1 : 0)
    out.push(line)
  }
  return out
}
