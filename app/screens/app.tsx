import { useState } from 'preact/hooks'
import { api, ok } from '../api.ts'
import { useLoad, usePoll } from '../hooks.ts'
import { useRoute } from '../router.ts'
import { FirstRun } from './first-run.tsx'
import { Home } from './home.tsx'
import { Sidebar } from './sidebar.tsx'
import { SpaceScreen } from './space.tsx'
import { SyncScreen } from './sync.tsx'

interface Health {
  account: string
  bootstrapping?: boolean
  crdtVersion?: { newer?: boolean }
}

/** The daemon is unreachable, read-only or catching up: said at the top of every screen. */
function Banner({ health, error }: { health: Health | undefined; error: string | undefined }) {
  if (error) {
    return (
      <div class="banner banner-error" role="alert">
        The daemon is unreachable. Is <code>svc serve</code> running? Retrying…
      </div>
    )
  }
  if (health?.crdtVersion?.newer) {
    return (
      <div class="banner banner-warn" role="status">
        Read-only: this account was written by a newer svc. Update svc to edit.
      </div>
    )
  }
  if (health?.bootstrapping) {
    return (
      <div class="banner banner-info" role="status">
        Catching up with peers…
      </div>
    )
  }
  return null
}

export function App() {
  const auth = useLoad(() => ok(api.GET('/v1/auth')), [])
  const health = usePoll(() => ok(api.GET('/v1/health')) as Promise<Health>, 3000)
  const route = useRoute()
  const [menuOpen, setMenuOpen] = useState(false)

  if (auth.value === undefined) {
    return (
      <main class="center">
        <Banner health={undefined} error={auth.error ?? health.error} />
        {!auth.error && <p aria-busy="true">Loading…</p>}
      </main>
    )
  }
  if (!auth.value.authorized) return <FirstRun onDone={auth.reload} />

  return (
    <div class={`shell${menuOpen ? ' menu-open' : ''}`}>
      <header class="topbar">
        <button class="menu-toggle" aria-expanded={menuOpen} aria-controls="sidebar" onClick={() => setMenuOpen(!menuOpen)}>
          Menu
        </button>
        <a class="brand" href="#/">
          svc
        </a>
        <span class="account" title={auth.value.accountId}>
          {shortId(auth.value.accountId ?? '')}
        </span>
        <a href="#/sync" class="sync-link">
          Sync and health
        </a>
      </header>
      <Banner health={health.value} error={health.error} />
      <Sidebar route={route} onNavigate={() => setMenuOpen(false)} />
      <main id="main" class="content">
        {route.spaceId ? <SpaceScreen key={route.spaceId} route={route} account={auth.value.accountId ?? ''} /> : route.tab === 'sync' ? <SyncScreen /> : <Home />}
      </main>
    </div>
  )
}

export const shortId = (id: string) => (id.length > 12 ? `${id.slice(0, 6)}…${id.slice(-4)}` : id)
