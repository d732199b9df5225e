import { useState } from 'preact/hooks'
import { call, describe, objectPath, spacePath } from '../api.ts'
import { useLiveQuery, usePoll } from '../hooks.ts'
import { href } from '../router.ts'
import { DocumentEditor } from './editor.tsx'

/** The type the app gives documents: any object carrying it has a block editor (the shared `editor_blocks`). */
export const PAGE_XKEY = 'app:page'

/** The page type's id, made on first use: a type with an editor part. */
async function pageType(spaceId: string, create: boolean): Promise<string | undefined> {
  const S = spacePath(spaceId)
  const { types } = await call<{ types: Array<{ id: string; xKey: string }> }>('GET', `${S}/types?includeHidden=true`)
  const found = types.find((t) => t.xKey === PAGE_XKEY)
  if (found || !create) return found?.id
  const made = await call<{ id: string }>('POST', `${S}/types`, { name: 'Page', xKey: PAGE_XKEY })
  await call('POST', `${S}/types/${encodeURIComponent(made.id)}/parts`, { key: 'body', name: 'Body', datasets: [{ module: 'editor', shared: true }] })
  return made.id
}

export function DocsScreen({ spaceId, objectId, account, readOnly }: { spaceId: string; objectId?: string; account: string; readOnly: boolean }) {
  // Polled: the page type may arrive from a member after this screen opened.
  const type = usePoll(() => pageType(spaceId, false), 2000, [spaceId])
  const docs = useLiveQuery(type.value ? `${spacePath(spaceId)}/objects/query/subscribe` : undefined, { filter: { 'core.types': type.value }, sort: ['-modifiedAt'] })
  const [title, setTitle] = useState('')
  const [error, setError] = useState<string | undefined>(undefined)
  const create = async (e: Event) => {
    e.preventDefault()
    try {
      const typeId = await pageType(spaceId, true)
      const made = await call<{ objectId: string }>('POST', `${spacePath(spaceId)}/objects`, { types: [typeId], initialProperties: { core: { name: title.trim() || 'Untitled' } } })
      await call('POST', `${objectPath(spaceId, made.objectId)}/editor/editor_blocks/blocks`, { type: 'paragraph', text: '' })
      setTitle('')
      location.hash = href({ spaceId, tab: 'docs', objectId: made.objectId })
    } catch (err) {
      setError(describe(err))
    }
  }
  return (
    <div class="docs">
      <nav class="doc-list" aria-label="Documents">
        <ul class="plain">
          {(docs.rows ?? []).map((d) => (
            <li key={d.id}>
              <a href={href({ spaceId, tab: 'docs', objectId: d.id })} aria-current={d.id === objectId ? 'page' : undefined}>
                {String((d.core as { name?: string } | undefined)?.name ?? 'Untitled')}
              </a>
            </li>
          ))}
        </ul>
        {!readOnly && (
          <form class="row compact" onSubmit={(e) => void create(e)}>
            <label>
              <span class="sr-only">Title of the new document</span>
              <input value={title} placeholder="New document title" onInput={(e) => setTitle((e.target as HTMLInputElement).value)} />
            </label>
            <button type="submit">New document</button>
          </form>
        )}
        {error && (
          <p class="error" role="alert">
            {error}
          </p>
        )}
      </nav>
      {objectId ? <DocumentEditor key={objectId} spaceId={spaceId} objectId={objectId} account={account} readOnly={readOnly} /> : <p>Pick a document, or start a new one.</p>}
    </div>
  )
}
