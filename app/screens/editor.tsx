import { useEffect, useMemo, useRef, useState } from 'preact/hooks'
import { posGenerator } from '../../sync/modules/editor/position.ts'
import { call, describe, objectPath } from '../api.ts'
import { openStream, type Row, type WindowChange } from '../live.ts'
import { TextSync } from '../text-sync.ts'

interface Block extends Row {
  type: string
  style?: string
  text?: string
  checked?: boolean
  rows?: string[][]
  nav: { pos: string; depth?: number }
}

interface Cursor {
  clientId: number
  identity: string
  self: boolean
  name: string
  blockId: string
  anchor: { index: number | null }
  head: { index: number | null }
}

const BLOCK_TYPES: Array<[string, string]> = [
  ['paragraph', 'Paragraph'],
  ['heading:1', 'Heading 1'],
  ['heading:2', 'Heading 2'],
  ['heading:3', 'Heading 3'],
  ['bullet', 'Bulleted list'],
  ['numbered', 'Numbered list'],
  ['task', 'Task'],
  ['quote', 'Quote'],
  ['code', 'Code'],
  ['divider', 'Divider'],
  ['table', 'Table'],
]

const CURSOR_RENEW_MS = 15_000
const newPos = posGenerator(crypto.getRandomValues(new Uint8Array(8)))

/** Blocks of one object's editor dataset, live, with the version of the frame each came in. */
function useBlocks(spaceId: string, objectId: string, onText: (id: string, text: string, version: number) => void) {
  const [blocks, setBlocks] = useState<Block[] | undefined>(undefined)
  const [error, setError] = useState<string | undefined>(undefined)
  const handler = useRef(onText)
  handler.current = onText
  useEffect(() => {
    let held = new Map<string, Block>()
    const publish = () => setBlocks([...held.values()].sort((a, b) => (a.nav.pos < b.nav.pos ? -1 : a.nav.pos > b.nav.pos ? 1 : a.id < b.id ? -1 : 1)))
    return openStream(
      `/v1/spaces/${encodeURIComponent(spaceId)}/query/subscribe`,
      (event, data) => {
        if (event === 'snapshot') {
          held = new Map(((data as { records?: Block[] }).records ?? []).map((r) => [r.id, r]))
          for (const b of held.values()) handler.current(b.id, b.text ?? '', Number.POSITIVE_INFINITY)
          publish()
        } else if (event === 'changes') {
          for (const change of data as Array<WindowChange & { versionId: string }>) {
            const version = Number(change.versionId)
            for (const r of [...(change.added ?? []), ...(change.updated ?? [])]) {
              held.set(r.id, r.doc as Block)
              handler.current(r.id, (r.doc as Block).text ?? '', version)
            }
            for (const r of change.removed ?? []) held.delete(r.id)
          }
          publish()
        } else if (event === 'error') setError(JSON.stringify(data))
      },
      { body: { objectId, dataset: 'editor_blocks', sort: ['nav.pos'] } },
    )
  }, [spaceId, objectId])
  return { blocks, error }
}

/**
 * The other members' carets. A caret's index is worked out by the daemon from its place in the
 * text when the caret arrives; text that arrives later moves it, so the list is asked for again
 * (`refresh`) shortly after the text of any block changes.
 */
function useCursors(E: string) {
  const [cursors, setCursors] = useState<Cursor[]>([])
  const held = useRef(new Map<number, Cursor>())
  const timer = useRef<number | undefined>(undefined)
  const show = () => setCursors([...held.current.values()].filter((c) => !c.self))
  useEffect(() => {
    held.current = new Map()
    return openStream(`${E}/cursors/stream`, (event, data) => {
      if (event === 'cursors') held.current = new Map((data as { cursors: Cursor[] }).cursors.map((c) => [c.clientId, c]))
      else if (event === 'cursor') {
        const { action, cursor } = data as { action: string; cursor: Cursor }
        if (action === 'removed') held.current.delete(cursor.clientId)
        else held.current.set(cursor.clientId, cursor)
      } else return
      show()
    })
  }, [E])
  const refresh = () => {
    clearTimeout(timer.current)
    timer.current = window.setTimeout(() => {
      call<{ cursors: Cursor[] }>('GET', `${E}/cursors`).then(
        (r) => {
          held.current = new Map(r.cursors.map((c) => [c.clientId, c]))
          show()
        },
        (err: unknown) => console.warn('svc app: cursors', err),
      )
    }, 100)
  }
  return { cursors, refresh }
}

/**
 * The other members' carets and selections in one textarea: a mirror of its text drawn over it,
 * with each selection marked and a named caret where each member's head is.
 */
function Carets({ text, cursors }: { text: string; cursors: Cursor[] }) {
  const placed = cursors.filter((c) => c.head.index !== null)
  if (placed.length === 0) return null
  const clamp = (i: number | null) => Math.max(0, Math.min(i ?? 0, text.length))
  // Boundaries where a selection starts or ends or a caret stands, in order.
  type Mark = { at: number; kind: 'caret' | 'start' | 'end'; c: Cursor }
  const marks: Mark[] = []
  for (const c of placed) {
    const head = clamp(c.head.index)
    const anchor = clamp(c.anchor.index ?? c.head.index)
    if (anchor !== head) {
      marks.push({ at: Math.min(anchor, head), kind: 'start', c }, { at: Math.max(anchor, head), kind: 'end', c })
    }
    marks.push({ at: head, kind: 'caret', c })
  }
  marks.sort((x, y) => x.at - y.at || (x.kind === 'end' ? -1 : y.kind === 'end' ? 1 : 0))
  const parts: preact.ComponentChildren[] = []
  let at = 0
  let open = 0
  const piece = (t: string, key: string) =>
    open > 0 ? (
      <span key={key} class="remote-selection">
        {t}
      </span>
    ) : (
      t
    )
  marks.forEach((m, i) => {
    if (m.at > at) parts.push(piece(text.slice(at, m.at), `t${i}`))
    at = Math.max(at, m.at)
    if (m.kind === 'start') open++
    else if (m.kind === 'end') open = Math.max(0, open - 1)
    else {
      const name = m.c.name || m.c.identity.slice(0, 6)
      parts.push(
        <span key={`c${m.c.clientId}`} class="remote-caret" data-name={name} data-testid="remote-cursor">
          <span class="remote-caret-label">{name}</span>
        </span>,
      )
    }
  })
  parts.push(piece(text.slice(at), 'rest'))
  return (
    <div class="caret-mirror" aria-hidden="true">
      {parts}
    </div>
  )
}

function TableBlock({ block, onRows, readOnly }: { block: Block; onRows: (rows: string[][]) => void; readOnly: boolean }) {
  const rows = block.rows && block.rows.length > 0 ? block.rows : [['', '']]
  const set = (r: number, c: number, v: string) => onRows(rows.map((row, i) => (i === r ? row.map((cell, j) => (j === c ? v : cell)) : row)))
  return (
    <div class="table-block">
      <table class="grid">
        <tbody>
          {rows.map((row, r) => (
            <tr key={r}>
              {row.map((cell, c) => (
                <td key={c}>
                  <input aria-label={`Row ${r + 1}, column ${c + 1}`} value={cell} readOnly={readOnly} onChange={(e) => set(r, c, (e.target as HTMLInputElement).value)} />
                </td>
              ))}
            </tr>
          ))}
        </tbody>
      </table>
      {!readOnly && (
        <div class="row compact">
          <button onClick={() => onRows([...rows, rows[0].map(() => '')])}>Add row</button>
          <button onClick={() => onRows(rows.map((row) => [...row, '']))}>Add column</button>
        </div>
      )}
    </div>
  )
}

export function DocumentEditor({ spaceId, objectId, account, readOnly }: { spaceId: string; objectId: string; account: string; readOnly: boolean }) {
  const O = objectPath(spaceId, objectId)
  const E = `${O}/editor/editor_blocks`
  const syncs = useRef(new Map<string, TextSync>())
  const areas = useRef(new Map<string, HTMLTextAreaElement>())
  const [, redraw] = useState(0)
  const [error, setError] = useState<string | undefined>(undefined)
  const me = useRef<{ name: string }>({ name: account.slice(0, 6) })
  useEffect(() => {
    call<{ name?: string }>('GET', '/v1/account').then(
      (a) => (me.current.name = a.name || account.slice(0, 6)),
      () => undefined,
    )
  }, [account])

  const syncOf = (id: string, initial: string): TextSync => {
    let s = syncs.current.get(id)
    if (!s) {
      s = new TextSync(
        initial,
        async (text, base) => Number((await call<{ versionId: string }>('PATCH', `${E}/blocks/${encodeURIComponent(id)}`, { set: { text }, textBase: base })).versionId),
        (text, caret) => {
          const el = areas.current.get(id)
          if (el) {
            const focused = document.activeElement === el
            const [s0, s1] = [el.selectionStart, el.selectionEnd]
            el.value = text
            if (focused) el.setSelectionRange(caret(s0), caret(s1))
            fit(el)
          }
          redraw((n) => n + 1)
        },
        (err) => setError(describe(err)),
        () => {
          const el = areas.current.get(id)
          if (caretWaits.current.delete(id) && el && document.activeElement === el) publishCursor(id, el)
        },
      )
      syncs.current.set(id, s)
    }
    return s
  }
  const { cursors, refresh: refreshCursors } = useCursors(E)
  const { blocks, error: streamError } = useBlocks(spaceId, objectId, (id, text, version) => {
    syncOf(id, text).remote(text, version)
    refreshCursors()
  })

  // This device's caret, published while a block has focus and renewed as y-protocols clients do.
  const lastCursor = useRef<string>('')
  // A caret is an index into the daemon's text: while keystrokes are unwritten it would land short, so it waits for them.
  const caretWaits = useRef(new Set<string>())
  const publishCursor = (blockId: string, el: HTMLTextAreaElement, force = false) => {
    if (syncs.current.get(blockId)?.pending) {
      caretWaits.current.add(blockId)
      return
    }
    const key = `${blockId}:${el.selectionStart}:${el.selectionEnd}`
    if (!force && key === lastCursor.current) return
    lastCursor.current = key
    void call('PUT', `${E}/cursor`, { blockId, anchor: el.selectionStart, head: el.selectionEnd, name: me.current.name }).catch((err: unknown) =>
      console.warn('svc app: cursor', err),
    )
  }
  useEffect(() => {
    const renew = setInterval(() => {
      const el = document.activeElement
      for (const [id, area] of areas.current) if (area === el) publishCursor(id, area, true)
    }, CURSOR_RENEW_MS)
    return () => {
      clearInterval(renew)
      void call('DELETE', `${E}/cursor`).catch(() => undefined)
    }
  }, [E])

  const patch = async (id: string, body: unknown) => {
    try {
      await call('PATCH', `${E}/blocks/${encodeURIComponent(id)}`, body)
    } catch (err) {
      setError(describe(err))
    }
  }
  const insertAfter = async (index: number, type = 'paragraph') => {
    const list = blocks ?? []
    const pos = newPos(list[index]?.nav.pos, list[index + 1]?.nav.pos)
    try {
      const res = await call<{ recordIds: string[] }>('POST', `${E}/blocks`, { type, text: '', nav: { pos } })
      requestAnimationFrame(() => setTimeout(() => areas.current.get(res.recordIds[0])?.focus(), 50))
    } catch (err) {
      setError(describe(err))
    }
  }
  const remove = async (id: string, focusId?: string) => {
    try {
      await call('DELETE', `${E}/blocks/${encodeURIComponent(id)}`)
      if (focusId) areas.current.get(focusId)?.focus()
    } catch (err) {
      setError(describe(err))
    }
  }

  const byBlock = useMemo(() => {
    const m = new Map<string, Cursor[]>()
    for (const c of cursors) m.set(c.blockId, [...(m.get(c.blockId) ?? []), c])
    return m
  }, [cursors])

  if (!blocks) return <p aria-busy="true">Opening the document…</p>
  return (
    <article class="editor" aria-label="Document">
      <MarkdownTools E={E} readOnly={readOnly} onError={setError} />
      {blocks.length === 0 && !readOnly && <button onClick={() => void insertAfter(-1)}>Start writing</button>}
      {blocks.map((b, i) => {
        const kind = b.type === 'heading' ? `heading:${b.style ?? '1'}` : b.type
        const sync = syncOf(b.id, b.text ?? '')
        return (
          <div
            key={b.id}
            class={`block block-${b.type}${b.type === 'heading' ? ` h${b.style ?? '1'}` : ''}`}
            style={{ marginLeft: `${(b.nav.depth ?? 0) * 1.5}rem` }}
            data-block={b.id}
          >
            <div class="block-tools">
              <label class="sr-only" for={`type-${b.id}`}>
                Block type
              </label>
              <select
                id={`type-${b.id}`}
                value={kind}
                disabled={readOnly}
                onChange={(e) => {
                  const [type, style] = (e.target as HTMLSelectElement).value.split(':')
                  void patch(b.id, style ? { set: { type, style } } : { set: { type }, ...(b.style !== undefined ? { unset: ['style'] } : {}) })
                }}
              >
                {BLOCK_TYPES.map(([v, l]) => (
                  <option key={v} value={v}>
                    {l}
                  </option>
                ))}
              </select>
              {!readOnly && (
                <button class="link" aria-label="Delete block" onClick={() => void remove(b.id)}>
                  ×
                </button>
              )}
            </div>
            {b.type === 'task' && (
              <input
                type="checkbox"
                aria-label="Done"
                checked={b.checked === true}
                disabled={readOnly}
                onChange={(e) => void patch(b.id, { set: { checked: (e.target as HTMLInputElement).checked } })}
              />
            )}
            {b.type === 'divider' ? (
              <hr />
            ) : b.type === 'table' ? (
              <TableBlock block={b} readOnly={readOnly} onRows={(rows) => void patch(b.id, { set: { rows } })} />
            ) : (
              <div class="text-wrap">
                <Carets text={sync.text} cursors={byBlock.get(b.id) ?? []} />
                <textarea
                  ref={(el) => {
                    if (el) {
                      areas.current.set(b.id, el)
                      if (document.activeElement !== el && el.value !== sync.text) el.value = sync.text
                      fit(el)
                    } else areas.current.delete(b.id)
                  }}
                  class="block-text"
                  aria-label={`${BLOCK_TYPES.find(([v]) => v === kind)?.[1] ?? b.type} ${i + 1}`}
                  rows={1}
                  readOnly={readOnly}
                  spellcheck={b.type !== 'code'}
                  onInput={(e) => {
                    const el = e.target as HTMLTextAreaElement
                    sync.input(el.value)
                    fit(el)
                    publishCursor(b.id, el)
                  }}
                  onSelect={(e) => publishCursor(b.id, e.target as HTMLTextAreaElement)}
                  onFocus={(e) => publishCursor(b.id, e.target as HTMLTextAreaElement, true)}
                  onKeyDown={(e) => {
                    const el = e.target as HTMLTextAreaElement
                    if (e.key === 'Enter' && !e.shiftKey && b.type !== 'code' && el.selectionStart === el.value.length) {
                      e.preventDefault()
                      void insertAfter(i, ['bullet', 'numbered', 'task'].includes(b.type) ? b.type : 'paragraph')
                    } else if (e.key === 'Backspace' && el.value === '' && blocks.length > 1) {
                      e.preventDefault()
                      void remove(b.id, blocks[i - 1]?.id)
                    }
                  }}
                />
              </div>
            )}
          </div>
        )
      })}
      {!readOnly && blocks.length > 0 && (
        <button class="link add-block" onClick={() => void insertAfter(blocks.length - 1)}>
          + Add a block
        </button>
      )}
      {(error ?? streamError) && (
        <p class="error" role="alert">
          {error ?? streamError}
        </p>
      )}
    </article>
  )
}

/** A textarea as tall as its text. */
function fit(el: HTMLTextAreaElement): void {
  el.style.height = 'auto'
  el.style.height = `${el.scrollHeight}px`
}

function MarkdownTools({ E, readOnly, onError }: { E: string; readOnly: boolean; onError: (e: string) => void }) {
  const [text, setText] = useState('')
  const [url, setUrl] = useState<string | undefined>(undefined)
  const load = async () => {
    try {
      const md = await call<string>('GET', `${E}/markdown`)
      setText(md)
      if (url) URL.revokeObjectURL(url)
      setUrl(URL.createObjectURL(new Blob([md], { type: 'text/markdown' })))
    } catch (err) {
      onError(describe(err))
    }
  }
  const importIt = async () => {
    try {
      await call('PUT', `${E}/markdown`, { content: text })
    } catch (err) {
      onError(describe(err))
    }
  }
  return (
    <details class="markdown-tools" onToggle={(e) => (e.target as HTMLDetailsElement).open && void load()}>
      <summary>Markdown</summary>
      <label>
        The document as markdown
        <textarea rows={8} value={text} onInput={(e) => setText((e.target as HTMLTextAreaElement).value)} />
      </label>
      <div class="row">
        {url && (
          <a class="button" href={url} download="document.md">
            Export (download)
          </a>
        )}
        {!readOnly && <button onClick={() => void importIt()}>Import (replace the document with this)</button>}
      </div>
    </details>
  )
}
