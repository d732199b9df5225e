import { useEffect, useState } from 'preact/hooks'

/**
 * Hash routes, so the daemon serves one page for every screen and a reload keeps the place:
 * `#/` the overview, `#/s/<spaceId>/<tab>/<objectId?>` a space.
 */
export interface Route {
  spaceId?: string
  tab: string
  objectId?: string
}

export function parseRoute(hash: string): Route {
  const parts = hash.replace(/^#\/?/, '').split('/').filter(Boolean).map(decodeURIComponent)
  if (parts[0] === 's' && parts[1]) return { spaceId: parts[1], tab: parts[2] ?? 'tables', objectId: parts[3] }
  return { tab: parts[0] ?? 'home' }
}

export function href(route: Route): string {
  if (!route.spaceId) return `#/${route.tab === 'home' ? '' : route.tab}`
  return `#/s/${[route.spaceId, route.tab, route.objectId]
    .filter((p): p is string => !!p)
    .map(encodeURIComponent)
    .join('/')}`
}

export function go(route: Route): void {
  location.hash = href(route)
}

export function useRoute(): Route {
  const [route, setRoute] = useState(() => parseRoute(location.hash))
  useEffect(() => {
    const on = () => setRoute(parseRoute(location.hash))
    addEventListener('hashchange', on)
    return () => removeEventListener('hashchange', on)
  }, [])
  return route
}
