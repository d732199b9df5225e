import { useState } from 'preact/hooks'
import { call, objectPath } from '../api.ts'
import { useLoad } from '../hooks.ts'
import { shortId } from './app.tsx'
import { instant } from './cells.tsx'

interface Change {
  version: string
  author: string
  timestamp: unknown
  datasets: string[]
  opCount: number
}
interface Diff {
  datasets: Record<string, Array<{ id: string; before: unknown; after: unknown }>>
}

/** Leaf paths whose value differs between two records, with both values. */
function changedLeaves(before: unknown, after: unknown, path = ''): Array<[string, unknown, unknown]> {
  const isObj = (v: unknown): v is Record<string, unknown> => !!v && typeof v === 'object' && !Array.isArray(v) && !('$date' in v)
  if (isObj(before) && isObj(after)) {
    const keys = new Set([...Object.keys(before), ...Object.keys(after)])
    return [...keys].filter((k) => k !== '_ver').flatMap((k) => changedLeaves(before[k], after[k], path ? `${path}.${k}` : k))
  }
  return JSON.stringify(before) === JSON.stringify(after) ? [] : [[path || '(record)', before, after]]
}

const show = (v: unknown) => (v === undefined || v === null ? '—' : typeof v === 'string' ? v : JSON.stringify(v))

export function HistoryScreen({ spaceId, objectId }: { spaceId: string; objectId: string }) {
  const O = objectPath(spaceId, objectId)
  const list = useLoad(() => call<{ changes: Change[] }>('GET', `${O}/history?limit=50`), [O])
  const [version, setVersion] = useState<string | undefined>(undefined)
  const diff = useLoad(() => (version ? call<Diff>('GET', `${O}/history/diff?version=${encodeURIComponent(version)}`) : Promise.resolve(undefined)), [O, version])
  return (
    <section class="history" aria-labelledby="history-title">
      <h2 id="history-title">History</h2>
      {list.error && (
        <p class="error" role="alert">
          {list.error}
        </p>
      )}
      <div class="history-cols">
        <ol class="plain versions">
          {(list.value?.changes ?? []).map((c) => (
            <li key={c.version}>
              <button aria-pressed={c.version === version} onClick={() => setVersion(c.version)}>
                {instant(c.timestamp)?.toLocaleString() ?? ''} · {shortId(c.author)} · {c.opCount} ops
              </button>
            </li>
          ))}
        </ol>
        <div class="diff" aria-live="polite">
          {!version && <p>Pick a version to see what it changed.</p>}
          {diff.value &&
            Object.entries(diff.value.datasets).map(([ds, recs]) => (
              <div key={ds}>
                <h3>{ds === '' ? 'Properties' : ds}</h3>
                <table class="grid">
                  <thead>
                    <tr>
                      <th scope="col">Field</th>
                      <th scope="col">Before</th>
                      <th scope="col">After</th>
                    </tr>
                  </thead>
                  <tbody>
                    {recs.flatMap((r) =>
                      changedLeaves(r.before, r.after).map(([path, b, a]) => (
                        <tr key={r.id + path}>
                          <td>{path}</td>
                          <td>
                            <del>{show(b)}</del>
                          </td>
                          <td>
                            <ins>{show(a)}</ins>
                          </td>
                        </tr>
                      )),
                    )}
                  </tbody>
                </table>
              </div>
            ))}
        </div>
      </div>
    </section>
  )
}
