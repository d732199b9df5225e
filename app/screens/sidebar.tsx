import { useState } from 'preact/hooks'
import { api, describe, ok } from '../api.ts'
import { usePoll } from '../hooks.ts'
import { go, href, type Route } from '../router.ts'

export interface SpaceRow {
  id: string
  name: string
  status: string
  ownRole: string
  spaceType?: string
}

/** Every space the account knows, refreshed every two seconds (joins and removals arrive from peers). */
type SpaceStatus = 'all' | 'active' | 'joining' | 'deleted' | 'one_to_one_pending' | 'invite_pending' | 'guest_revoked'

export function useSpaces(status?: SpaceStatus) {
  return usePoll(() => ok(api.GET('/v1/spaces', { params: { query: status ? { status } : {} } })) as unknown as Promise<SpaceRow[]>, 2000, [status])
}

export function Sidebar({ route, onNavigate }: { route: Route; onNavigate: () => void }) {
  const spaces = useSpaces('all')
  const [name, setName] = useState('')
  const [token, setToken] = useState('')
  const [error, setError] = useState<string | undefined>(undefined)
  const visible = (spaces.value ?? []).filter((s) => s.status !== 'deleted' && s.status !== 'one_to_one_pending' && s.status !== 'invite_pending')

  const create = async (e: Event) => {
    e.preventDefault()
    setError(undefined)
    try {
      const space = await ok(api.POST('/v1/spaces', { body: { name: name.trim() } }))
      setName('')
      go({ spaceId: space.id, tab: 'tables' })
      onNavigate()
    } catch (err) {
      setError(describe(err))
    }
  }
  const join = async (e: Event) => {
    e.preventDefault()
    setError(undefined)
    try {
      // The name the owner sees on the request until this account's profile is readable there.
      const me = await ok(api.GET('/v1/account'))
      const name = (me as { name?: string }).name
      const space = await ok(api.POST('/v1/spaces/join', { body: { inviteToken: token.trim(), ...(name ? { metadata: { name } } : {}) } }))
      setToken('')
      go({ spaceId: space.id, tab: 'members' })
      onNavigate()
    } catch (err) {
      setError(describe(err))
    }
  }

  return (
    <nav id="sidebar" class="sidebar" aria-label="Spaces">
      <h2>Spaces</h2>
      <ul class="space-list">
        {visible.map((s) => (
          <li key={s.id}>
            <a href={href({ spaceId: s.id, tab: 'tables' })} aria-current={route.spaceId === s.id ? 'page' : undefined} onClick={onNavigate} data-space={s.name}>
              <span class="space-name">{s.name || 'Untitled space'}</span>
              {s.status !== 'active' && <span class={`pill pill-${s.status}`}>{s.status.replace(/_/g, ' ')}</span>}
            </a>
          </li>
        ))}
      </ul>
      <form class="stack compact" onSubmit={(e) => void create(e)}>
        <label for="new-space">New space</label>
        <div class="row">
          <input id="new-space" value={name} placeholder="Name" onInput={(e) => setName((e.target as HTMLInputElement).value)} />
          <button type="submit" disabled={!name.trim()}>
            Create
          </button>
        </div>
      </form>
      <form class="stack compact" onSubmit={(e) => void join(e)}>
        <label for="join-token">Join with a token</label>
        <div class="row">
          <input id="join-token" value={token} placeholder="Paste an invite" onInput={(e) => setToken((e.target as HTMLInputElement).value)} />
          <button type="submit" disabled={!token.trim()}>
            Join
          </button>
        </div>
      </form>
      {error && (
        <p class="error" role="alert">
          {error}
        </p>
      )}
    </nav>
  )
}
