import { useState } from 'preact/hooks'
import { call, describe, spacePath } from '../api.ts'
import { href } from '../router.ts'

interface Hit {
  objectId: string
  recordId?: string
  collection?: string
  scope: string
  snippet: { text: string; ranges: Array<[number, number]> }
}

/** A snippet with its matched words marked. */
function Snippet({ text, ranges }: Hit['snippet']) {
  const out: preact.ComponentChildren[] = []
  let at = 0
  for (const [s, e] of ranges) {
    out.push(text.slice(at, s))
    out.push(<mark key={s}>{text.slice(s, e)}</mark>)
    at = e
  }
  out.push(text.slice(at))
  return <span>{out}</span>
}

export function SearchScreen({ spaceId }: { spaceId: string }) {
  const [query, setQuery] = useState('')
  const [hits, setHits] = useState<Hit[] | undefined>(undefined)
  const [error, setError] = useState<string | undefined>(undefined)
  const run = async (e: Event) => {
    e.preventDefault()
    setError(undefined)
    try {
      setHits((await call<{ hits: Hit[] }>('POST', `${spacePath(spaceId)}/search`, { query, limit: 50 })).hits)
    } catch (err) {
      setError(describe(err))
    }
  }
  return (
    <section aria-labelledby="search-title">
      <h2 id="search-title">Search this space</h2>
      <form class="row" role="search" onSubmit={(e) => void run(e)}>
        <label class="sr-only" for="search-query">
          Search
        </label>
        <input id="search-query" type="search" value={query} onInput={(e) => setQuery((e.target as HTMLInputElement).value)} placeholder="Words to find" />
        <button type="submit" class="primary" disabled={!query.trim()}>
          Search
        </button>
      </form>
      {hits && hits.length === 0 && <p>Nothing found.</p>}
      <ol class="hits">
        {(hits ?? []).map((h, i) => (
          <li key={i} class="hit" data-testid="search-hit">
            <a
              href={
                h.collection === 'chat_messages'
                  ? href({ spaceId, tab: 'chat' })
                  : h.collection === 'editor_blocks'
                    ? href({ spaceId, tab: 'docs', objectId: h.objectId })
                    : href({ spaceId, tab: 'history', objectId: h.objectId })
              }
            >
              <span class="pill">{h.scope}</span> <Snippet {...h.snippet} />
            </a>
          </li>
        ))}
      </ol>
      {error && (
        <p class="error" role="alert">
          {error}
        </p>
      )}
    </section>
  )
}
