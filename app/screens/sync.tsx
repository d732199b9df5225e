import { call } from '../api.ts'
import { usePoll } from '../hooks.ts'

interface Process {
  id: string
  kind?: string
  title?: string
  progress?: { done?: number; total?: number; fraction?: number } | number
  state?: string
}

/** What each peer and hub is doing, and the daemon's long work (GET /v1/processes). */
export function SyncScreen() {
  const status = usePoll(() => call<Record<string, unknown>>('GET', '/v1/sync-status'), 2000)
  const peers = usePoll(() => call<{ peers?: Array<{ peerId?: string; state?: string; connected?: boolean }> }>('GET', '/v1/peers'), 3000)
  const hubs = usePoll(() => call<{ hubs?: Array<{ peerId?: string; multiaddr?: string; state?: string }> }>('GET', '/v1/hubs'), 3000)
  const processes = usePoll(() => call<{ processes?: Process[] } | Process[]>('GET', '/v1/processes'), 1000)
  const procs = Array.isArray(processes.value) ? processes.value : (processes.value?.processes ?? [])
  return (
    <section aria-labelledby="sync-title">
      <h1 id="sync-title">Sync and health</h1>
      <h2>Long work</h2>
      {procs.length === 0 ? (
        <p>Nothing running.</p>
      ) : (
        <ul class="plain">
          {procs.map((p) => {
            const pr = typeof p.progress === 'number' ? p.progress : (p.progress?.fraction ?? (p.progress?.total ? (p.progress.done ?? 0) / p.progress.total : undefined))
            return (
              <li key={p.id}>
                <label>
                  {p.title ?? p.kind ?? p.id} {pr !== undefined ? <progress max={1} value={pr} /> : <progress />}
                </label>
              </li>
            )
          })}
        </ul>
      )}
      <h2>Peers</h2>
      <table class="grid">
        <thead>
          <tr>
            <th scope="col">Peer</th>
            <th scope="col">State</th>
          </tr>
        </thead>
        <tbody>
          {(peers.value?.peers ?? []).map((p, i) => (
            <tr key={i}>
              <td>{p.peerId ?? ''}</td>
              <td>{p.state ?? (p.connected ? 'connected' : 'known')}</td>
            </tr>
          ))}
        </tbody>
      </table>
      <h2>Hubs</h2>
      <table class="grid">
        <thead>
          <tr>
            <th scope="col">Hub</th>
            <th scope="col">State</th>
          </tr>
        </thead>
        <tbody>
          {(hubs.value?.hubs ?? []).map((h, i) => (
            <tr key={i}>
              <td>{h.peerId ?? h.multiaddr ?? ''}</td>
              <td>{h.state ?? ''}</td>
            </tr>
          ))}
        </tbody>
      </table>
      <h2>Spaces</h2>
      <pre class="status-json" tabIndex={0} aria-label="Sync status of every space">
        {JSON.stringify(status.value ?? {}, null, 2)}
      </pre>
    </section>
  )
}
