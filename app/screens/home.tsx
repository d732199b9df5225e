import { useState } from 'preact/hooks'
import { call, describe, spacePath } from '../api.ts'
import { href } from '../router.ts'
import { useSpaces } from './sidebar.tsx'

/** The overview: spaces, and what waits for an answer (direct adds and one-to-one requests). */
export function Home() {
  const invites = useSpaces('invite_pending')
  const pairs = useSpaces('one_to_one_pending')
  const spaces = useSpaces()
  const [error, setError] = useState<string | undefined>(undefined)
  const act = async (path: string) => {
    setError(undefined)
    try {
      await call('POST', path)
    } catch (err) {
      setError(describe(err))
    }
  }
  const pending = [...(invites.value ?? []).map((s) => ({ s, kind: 'invite' })), ...(pairs.value ?? []).map((s) => ({ s, kind: 'one-to-one' }))]
  return (
    <section aria-labelledby="home-title">
      <h1 id="home-title">Your spaces</h1>
      {pending.length > 0 && (
        <section aria-labelledby="pending-title" class="card">
          <h2 id="pending-title">Waiting for you</h2>
          <ul class="plain">
            {pending.map(({ s, kind }) => (
              <li key={s.id} class="row">
                <span>
                  {kind === 'invite' ? 'Invited to' : 'One-to-one with'} <strong>{s.name || s.id}</strong>
                </span>
                <button onClick={() => void act(`${spacePath(s.id)}/${kind === 'invite' ? 'invite' : 'one-to-one'}/accept`)}>Accept</button>
                <button onClick={() => void act(`${spacePath(s.id)}/${kind === 'invite' ? 'invite' : 'one-to-one'}/decline`)}>Decline</button>
              </li>
            ))}
          </ul>
        </section>
      )}
      {spaces.value && spaces.value.length === 0 && <p>No spaces yet. Create one in the menu, or join one with a token someone sent you.</p>}
      <ul class="cards">
        {(spaces.value ?? []).map((s) => (
          <li key={s.id} class="card">
            <a href={href({ spaceId: s.id, tab: 'tables' })}>{s.name || 'Untitled space'}</a>
            <span class="muted"> · {s.ownRole}</span>
          </li>
        ))}
      </ul>
      {error && (
        <p class="error" role="alert">
          {error}
        </p>
      )}
    </section>
  )
}
