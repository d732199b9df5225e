import { useState } from 'preact/hooks'
import { call, describe, spacePath } from '../api.ts'
import { usePoll } from '../hooks.ts'
import { go, href, type Route } from '../router.ts'
import { ChatScreen, useChatCounters } from './chat.tsx'
import { DocsScreen } from './docs.tsx'
import { FilesScreen } from './files.tsx'
import { TOUR_KEY } from './first-run.tsx'
import { HistoryScreen } from './history.tsx'
import { MembersScreen } from './members.tsx'
import { SearchScreen } from './search.tsx'
import type { SpaceRow } from './sidebar.tsx'
import { TablesScreen } from './tables.tsx'

const TABS: Array<[string, string]> = [
  ['tables', 'Tables'],
  ['docs', 'Documents'],
  ['chat', 'Chat'],
  ['files', 'Files'],
  ['search', 'Search'],
  ['members', 'Members'],
]

const TOUR: Array<[string, string]> = [
  ['Tables', 'Each type of object is a table: add properties as columns, filter and sort, and everyone sees changes live.'],
  ['Documents', 'Write together: each paragraph merges everyone’s keystrokes, and you see where the others are.'],
  ['Chat', 'Talk next to the work, with replies, reactions and @mentions.'],
  ['Members', 'Invite people with a token. They join once you accept, and everything stays encrypted end to end.'],
]

function Tour({ onClose }: { onClose: () => void }) {
  const [step, setStep] = useState(0)
  const [title, text] = TOUR[step]
  return (
    <section class="tour card" role="dialog" aria-labelledby="tour-title" aria-modal="false">
      <h2 id="tour-title">
        Tour {step + 1}/{TOUR.length}: {title}
      </h2>
      <p>{text}</p>
      <div class="row">
        {step > 0 && <button onClick={() => setStep(step - 1)}>Back</button>}
        {step < TOUR.length - 1 ? (
          <button class="primary" onClick={() => setStep(step + 1)}>
            Next
          </button>
        ) : (
          <button class="primary" onClick={onClose}>
            Done
          </button>
        )}
        <button onClick={onClose}>Skip the tour</button>
      </div>
    </section>
  )
}

function SpaceHeader({ space, onChanged }: { space: SpaceRow; onChanged: () => void }) {
  const [editing, setEditing] = useState(false)
  const [name, setName] = useState(space.name)
  const [error, setError] = useState<string | undefined>(undefined)
  const owner = space.ownRole === 'owner'
  const rename = async (e: Event) => {
    e.preventDefault()
    try {
      await call('PATCH', spacePath(space.id), { name: name.trim() })
      setEditing(false)
      onChanged()
    } catch (err) {
      setError(describe(err))
    }
  }
  const remove = async () => {
    const question = owner ? `Delete “${space.name}” for everyone?` : `Leave “${space.name}”?`
    if (!confirm(question)) return
    try {
      await call('DELETE', spacePath(space.id))
      go({ tab: 'home' })
    } catch (err) {
      setError(describe(err))
    }
  }
  return (
    <header class="space-header">
      {editing ? (
        <form class="row" onSubmit={(e) => void rename(e)}>
          <label class="sr-only" for="space-name">
            Space name
          </label>
          <input id="space-name" value={name} onInput={(e) => setName((e.target as HTMLInputElement).value)} />
          <button type="submit" class="primary">
            Save
          </button>
          <button type="button" onClick={() => setEditing(false)}>
            Cancel
          </button>
        </form>
      ) : (
        <h1>{space.name || 'Untitled space'}</h1>
      )}
      <div class="row">
        <span class="pill">{space.ownRole}</span>
        {!editing && ['owner', 'admin'].includes(space.ownRole) && <button onClick={() => setEditing(true)}>Rename</button>}
        <button onClick={() => void remove()}>{owner ? 'Delete space' : 'Leave space'}</button>
      </div>
      {error && (
        <p class="error" role="alert">
          {error}
        </p>
      )}
    </header>
  )
}

export function SpaceScreen({ route, account }: { route: Route; account: string }) {
  const spaceId = route.spaceId!
  const space = usePoll(() => call<SpaceRow>('GET', spacePath(spaceId)), 2000, [spaceId])
  const [tour, setTour] = useState(() => sessionStorage.getItem(TOUR_KEY) === '1')
  const counters = useChatCounters(spaceId)
  if (space.error && !space.value) {
    return (
      <p class="error" role="alert">
        {space.error}
      </p>
    )
  }
  if (!space.value) return <p aria-busy="true">Opening the space…</p>
  const s = space.value
  const removed = s.ownRole === 'none' || s.status === 'guest_revoked'
  const closeTour = () => {
    sessionStorage.removeItem(TOUR_KEY)
    setTour(false)
  }
  const tab = route.tab
  return (
    <div class="space">
      <SpaceHeader space={s} onChanged={() => undefined} />
      {removed && (
        <div class="banner banner-error" role="alert" data-testid="removed-banner">
          You no longer have access to this space: you were removed. What you see is what you had before.
        </div>
      )}
      {s.status === 'joining' && (
        <div class="banner banner-info" role="status">
          Waiting for a member of the space to accept your request…
        </div>
      )}
      {tour && <Tour onClose={closeTour} />}
      <nav class="tabs" aria-label="Space sections">
        {TABS.map(([id, label]) => (
          <a key={id} href={href({ spaceId, tab: id })} aria-current={tab === id || (tab === 'history' && id === 'docs') ? 'page' : undefined}>
            {label}
            {id === 'chat' && counters.unread > 0 && (
              <span class="badge" data-testid="tab-unread">
                {counters.unread}
              </span>
            )}
            {id === 'chat' && counters.mentions > 0 && (
              <span class="badge badge-mention" data-testid="tab-mentions">
                @{counters.mentions}
              </span>
            )}
          </a>
        ))}
      </nav>
      <section class="tab-body">
        {tab === 'tables' && <TablesScreen spaceId={spaceId} readOnly={removed || s.ownRole === 'reader'} />}
        {tab === 'docs' && <DocsScreen spaceId={spaceId} objectId={route.objectId} account={account} readOnly={removed || s.ownRole === 'reader'} />}
        {tab === 'chat' && <ChatScreen spaceId={spaceId} account={account} readOnly={removed} />}
        {tab === 'files' && <FilesScreen spaceId={spaceId} readOnly={removed || s.ownRole === 'reader'} />}
        {tab === 'search' && <SearchScreen spaceId={spaceId} />}
        {tab === 'members' && <MembersScreen space={s} />}
        {tab === 'history' && route.objectId && <HistoryScreen spaceId={spaceId} objectId={route.objectId} />}
      </section>
    </div>
  )
}
