import { useEffect, useMemo, useRef, useState } from 'preact/hooks'
import { call, describe, spacePath } from '../api.ts'
import { useLiveQuery, usePoll } from '../hooks.ts'
import type { Row } from '../live.ts'
import { CellEditor, displayValue, KINDS, type PropertyDef } from './cells.tsx'

export interface TypeInfo {
  id: string
  name: string
  xKey: string
  hidden?: boolean
}

/** Types that are the app's own plumbing (documents) or the system's, not tables a user keeps. */
const NOT_TABLES = new Set(['app:page'])

export function useTypes(spaceId: string) {
  return usePoll(async () => (await call<{ types: TypeInfo[] }>('GET', `${spacePath(spaceId)}/types`)).types, 3000, [spaceId])
}

interface Filter {
  propId: string
  op: 'eq' | 'text' | 'gte' | 'lt'
  value: string
}

const ROW_HEIGHT = 36
const OVERSCAN = 10

/** The rows on screen and a spacer for the rest, so ten thousand rows scroll like ten. */
function useWindow(count: number) {
  const ref = useRef<HTMLDivElement>(null)
  const [range, setRange] = useState({ start: 0, end: 40 })
  useEffect(() => {
    const el = ref.current
    if (!el) return
    const update = () => {
      const start = Math.max(0, Math.floor(el.scrollTop / ROW_HEIGHT) - OVERSCAN)
      const end = Math.min(count, Math.ceil((el.scrollTop + el.clientHeight) / ROW_HEIGHT) + OVERSCAN)
      setRange((r) => (r.start === start && r.end === end ? r : { start, end }))
    }
    update()
    el.addEventListener('scroll', update, { passive: true })
    return () => el.removeEventListener('scroll', update)
  }, [count])
  return { ref, ...range }
}

function valueOf(row: Row, typeId: string, propId: string): unknown {
  if (propId === 'name') return (row.core as Record<string, unknown> | undefined)?.name
  return (row[typeId] as Record<string, unknown> | undefined)?.[propId]
}

function nameOf(row: Row, fallback = 'Untitled'): string {
  const name = (row.core as { name?: unknown } | undefined)?.name
  return typeof name === 'string' && name !== '' ? name : fallback
}

function filterBody(typeId: string, props: PropertyDef[], filters: Filter[]): Record<string, unknown> {
  const out: Record<string, unknown> = { 'core.types': typeId }
  for (const f of filters) {
    const prop = props.find((p) => p.id === f.propId)
    const path = f.propId === 'name' ? 'core.name' : `${typeId}.${f.propId}`
    const kind = prop?.kind ?? 'string'
    const typed: unknown =
      kind === 'number' ? Number(f.value) : kind === 'boolean' ? f.value === 'true' : kind === 'datetime' ? { $date: new Date(f.value).toISOString() } : f.value
    if (f.op === 'eq') out[path] = typed
    else if (f.op === 'text') out[path] = { $text: f.value }
    else out[path] = { [`$${f.op}`]: typed }
  }
  return out
}

function NewProperty({ spaceId, typeId, onAdded }: { spaceId: string; typeId: string; onAdded: () => void }) {
  const [name, setName] = useState('')
  const [kind, setKind] = useState('string')
  const [error, setError] = useState<string | undefined>(undefined)
  const add = async (e: Event) => {
    e.preventDefault()
    try {
      const k = KINDS.find((x) => x.id === kind)!
      await call('POST', `${spacePath(spaceId)}/types/${encodeURIComponent(typeId)}/properties`, {
        name: name.trim(),
        kind: k.kind,
        ...(k.format ? { xFormat: { type: k.format } } : {}),
      })
      setName('')
      onAdded()
    } catch (err) {
      setError(describe(err))
    }
  }
  return (
    <form class="row compact" onSubmit={(e) => void add(e)} aria-label="Add a property">
      <label>
        Property <input value={name} onInput={(e) => setName((e.target as HTMLInputElement).value)} placeholder="Name" />
      </label>
      <label>
        Kind{' '}
        <select aria-label="Kind" value={kind} onChange={(e) => setKind((e.target as HTMLSelectElement).value)}>
          {KINDS.map((k) => (
            <option key={k.id} value={k.id}>
              {k.label}
            </option>
          ))}
        </select>
      </label>
      <button type="submit" disabled={!name.trim()}>
        Add property
      </button>
      {error && (
        <span class="error" role="alert">
          {error}
        </span>
      )}
    </form>
  )
}

/** Rename the type, rename or remove its properties (a removed property's values stay as orphan data, spec rule 6). */
function SchemaPanel({ spaceId, type, props }: { spaceId: string; type: TypeInfo; props: PropertyDef[] }) {
  const T = `${spacePath(spaceId)}/types/${encodeURIComponent(type.id)}`
  const [error, setError] = useState<string | undefined>(undefined)
  const act = async (what: () => Promise<unknown>) => {
    setError(undefined)
    try {
      await what()
    } catch (err) {
      setError(describe(err))
    }
  }
  const rename = (label: string, current: string, save: (name: string) => Promise<unknown>) => (
    <form
      class="row compact"
      onSubmit={(e) => {
        e.preventDefault()
        const name = (new FormData(e.target as HTMLFormElement).get('name') as string).trim()
        if (name && name !== current) void act(() => save(name))
      }}
    >
      <label>
        {label} <input name="name" defaultValue={current} />
      </label>
      <button type="submit">Rename</button>
    </form>
  )
  return (
    <details class="schema-panel">
      <summary>Type and properties</summary>
      {rename('Type name', type.name, (name) => call('PATCH', T, { name }))}
      <ul class="plain">
        {props.map((p) => (
          <li key={p.id} class="row compact">
            {rename(`Property (${p.kind})`, p.name, (name) => call('PATCH', `${T}/properties/${encodeURIComponent(p.id)}`, { set: { name } }))}
            <button
              onClick={() =>
                confirm(`Remove the property “${p.name}”? Its values stay stored but are no longer shown.`) &&
                void act(() => call('DELETE', `${T}/properties/${encodeURIComponent(p.id)}`))
              }
            >
              Remove {p.name}
            </button>
          </li>
        ))}
      </ul>
      {error && (
        <p class="error" role="alert">
          {error}
        </p>
      )}
    </details>
  )
}

function TypeTable({ spaceId, type, readOnly }: { spaceId: string; type: TypeInfo; readOnly: boolean }) {
  const S = spacePath(spaceId)
  const propsLoad = usePoll(async () => (await call<{ properties: PropertyDef[] }>('GET', `${S}/types/${encodeURIComponent(type.id)}/properties`)).properties, 3000, [type.id])
  const props = propsLoad.value ?? []
  const columns: PropertyDef[] = [{ id: 'name', name: 'Name', kind: 'string' }, ...props]
  const [hidden, setHidden] = useState<Set<string>>(new Set())
  const [sort, setSort] = useState<{ propId: string; desc: boolean } | undefined>(undefined)
  const [filters, setFilters] = useState<Filter[]>([])
  const [draft, setDraft] = useState<Filter>({ propId: 'name', op: 'eq', value: '' })
  const [notice, setNotice] = useState<string | undefined>(undefined)
  const [error, setError] = useState<string | undefined>(undefined)
  const [newName, setNewName] = useState('')

  const body = useMemo(
    () => ({
      filter: filterBody(type.id, props, filters),
      sort: sort ? [`${sort.desc ? '-' : ''}${sort.propId === 'name' ? 'core.name' : `${type.id}.${sort.propId}`}`] : ['_ver.id'],
    }),
    [type.id, props, filters, sort],
  )
  const live = useLiveQuery(propsLoad.value ? `${S}/objects/query/subscribe` : undefined, body)
  const rows = live.rows ?? []
  const names = useRef(new Map<string, string>())
  for (const r of rows) names.current.set(r.id, nameOf(r))
  const seen = useRef(new Set<string>())
  useEffect(() => {
    for (const [id, reason] of live.removed) {
      if (seen.current.has(id + reason)) continue
      seen.current.add(id + reason)
      if (reason === 'filtered-out') setNotice(`“${names.current.get(id) ?? id}” left the view: it no longer matches the filter.`)
      else if (reason === 'deleted') setNotice(`“${names.current.get(id) ?? id}” was deleted.`)
    }
  }, [rows])
  const win = useWindow(rows.length)
  const shown = columns.filter((c) => !hidden.has(c.id))

  const set = async (row: Row, prop: PropertyDef, value: unknown) => {
    setError(undefined)
    try {
      const key = prop.id === 'name' ? 'core' : type.id
      await call('POST', `${S}/properties/${encodeURIComponent(row.id)}/set/${encodeURIComponent(key)}`, { [prop.id]: value })
    } catch (err) {
      setError(describe(err))
    }
  }
  const addRow = async (e: Event) => {
    e.preventDefault()
    setError(undefined)
    try {
      const initial: Record<string, unknown> = {}
      for (const p of props) if (p.kind === 'boolean') initial[p.id] = false
      await call('POST', `${S}/objects`, { types: [type.id], initialProperties: { core: { name: newName.trim() || 'Untitled' }, ...(props.length ? { [type.id]: initial } : {}) } })
      setNewName('')
    } catch (err) {
      setError(describe(err))
    }
  }
  const remove = async (row: Row) => {
    try {
      await call('DELETE', `${S}/objects/${encodeURIComponent(row.id)}`)
    } catch (err) {
      setError(describe(err))
    }
  }

  return (
    <section class="type-table" aria-labelledby="table-title">
      <h2 id="table-title">{type.name}</h2>
      <div class="toolbar">
        <form
          class="row compact"
          aria-label="Add a filter"
          onSubmit={(e) => {
            e.preventDefault()
            setFilters([...filters, draft])
          }}
        >
          <label>
            Filter{' '}
            <select aria-label="Filter" value={draft.propId} onChange={(e) => setDraft({ ...draft, propId: (e.target as HTMLSelectElement).value })}>
              {columns.map((c) => (
                <option key={c.id} value={c.id}>
                  {c.name}
                </option>
              ))}
            </select>
          </label>
          <label>
            <span class="sr-only">Operator</span>
            <select value={draft.op} onChange={(e) => setDraft({ ...draft, op: (e.target as HTMLSelectElement).value as Filter['op'] })}>
              <option value="eq">is</option>
              <option value="text">contains</option>
              <option value="gte">at least</option>
              <option value="lt">below</option>
            </select>
          </label>
          <label>
            <span class="sr-only">Value</span>
            <input value={draft.value} placeholder="value" onInput={(e) => setDraft({ ...draft, value: (e.target as HTMLInputElement).value })} />
          </label>
          <button type="submit">Add filter</button>
        </form>
        {filters.map((f, i) => (
          <span key={i} class="pill">
            {columns.find((c) => c.id === f.propId)?.name} {f.op} {f.value}
            <button class="link" aria-label="Remove this filter" onClick={() => setFilters(filters.filter((_, j) => j !== i))}>
              ×
            </button>
          </span>
        ))}
        <details class="columns-menu">
          <summary>Columns</summary>
          {columns.map((c) => (
            <label key={c.id} class="check">
              <input
                type="checkbox"
                checked={!hidden.has(c.id)}
                onChange={() => {
                  const next = new Set(hidden)
                  if (next.has(c.id)) next.delete(c.id)
                  else next.add(c.id)
                  setHidden(next)
                }}
              />
              {c.name}
            </label>
          ))}
        </details>
      </div>
      {!readOnly && <NewProperty spaceId={spaceId} typeId={type.id} onAdded={() => undefined} />}
      {!readOnly && <SchemaPanel spaceId={spaceId} type={type} props={props} />}
      <div class="table-scroll" ref={win.ref} role="region" aria-label={`${type.name} rows`} tabIndex={0}>
        <table class="grid" aria-rowcount={rows.length + 1}>
          <thead>
            <tr>
              {shown.map((c) => (
                <th key={c.id} scope="col" aria-sort={sort?.propId === c.id ? (sort.desc ? 'descending' : 'ascending') : 'none'}>
                  <button class="link" onClick={() => setSort(sort?.propId === c.id ? (sort.desc ? undefined : { propId: c.id, desc: true }) : { propId: c.id, desc: false })}>
                    {c.name}
                    {sort?.propId === c.id ? (sort.desc ? ' ▼' : ' ▲') : ''}
                  </button>
                </th>
              ))}
              {!readOnly && (
                <th scope="col">
                  <span class="sr-only">Actions</span>
                </th>
              )}
            </tr>
          </thead>
          <tbody>
            {win.start > 0 && <tr style={{ height: `${win.start * ROW_HEIGHT}px` }} aria-hidden="true" />}
            {rows.slice(win.start, win.end).map((row, i) => (
              <tr key={row.id} data-row={nameOf(row, '')} aria-rowindex={win.start + i + 2}>
                {shown.map((c) => (
                  <td key={c.id}>
                    {readOnly ? (
                      displayValue(c, valueOf(row, type.id, c.id))
                    ) : (
                      <CellEditor prop={c} value={valueOf(row, type.id, c.id)} label={`${c.name} of ${nameOf(row, 'row')}`} onCommit={(v) => void set(row, c, v)} />
                    )}
                  </td>
                ))}
                {!readOnly && (
                  <td>
                    <a class="button" href={`#/s/${encodeURIComponent(spaceId)}/history/${encodeURIComponent(row.id)}`}>
                      History
                    </a>
                    <button class="link" aria-label={`Delete ${nameOf(row, 'row')}`} onClick={() => void remove(row)}>
                      Delete
                    </button>
                  </td>
                )}
              </tr>
            ))}
            {win.end < rows.length && <tr style={{ height: `${(rows.length - win.end) * ROW_HEIGHT}px` }} aria-hidden="true" />}
          </tbody>
        </table>
      </div>
      <p class="muted" data-testid="row-count">
        {live.rows ? `${rows.length} rows` : 'Loading rows…'}
      </p>
      {!readOnly && (
        <form class="row compact" onSubmit={(e) => void addRow(e)}>
          <label>
            New row <input value={newName} placeholder="Name" onInput={(e) => setNewName((e.target as HTMLInputElement).value)} />
          </label>
          <button type="submit">Add row</button>
        </form>
      )}
      <p class="notice" role="status" aria-live="polite">
        {notice}
      </p>
      {(error ?? live.error) && (
        <p class="error" role="alert">
          {error ?? live.error}
        </p>
      )}
    </section>
  )
}

export function TablesScreen({ spaceId, readOnly }: { spaceId: string; readOnly: boolean }) {
  const types = useTypes(spaceId)
  const userTypes = (types.value ?? []).filter(
    (t) => !t.hidden && !NOT_TABLES.has(t.xKey) && !['core', 'spaceIndex', 'type'].includes(t.id) && !['core', 'spaceIndex', 'type'].includes(t.xKey),
  )
  const [selected, setSelected] = useState<string | undefined>(undefined)
  const [name, setName] = useState('')
  const [error, setError] = useState<string | undefined>(undefined)
  const current = userTypes.find((t) => t.id === selected) ?? userTypes[0]
  const create = async (e: Event) => {
    e.preventDefault()
    try {
      const slug =
        name
          .trim()
          .toLowerCase()
          .replace(/[^a-z0-9]+/g, '-')
          .replace(/^-|-$/g, '') || 'type'
      const t = await call<TypeInfo>('POST', `${spacePath(spaceId)}/types`, { name: name.trim(), xKey: `${slug}-${Date.now().toString(36)}` })
      setName('')
      setSelected(t.id)
    } catch (err) {
      setError(describe(err))
    }
  }
  return (
    <div class="tables">
      <div class="row wrap">
        <div class="row wrap" role="tablist" aria-label="Types">
          {userTypes.map((t) => (
            <button key={t.id} role="tab" aria-selected={current?.id === t.id} onClick={() => setSelected(t.id)}>
              {t.name}
            </button>
          ))}
        </div>
        {!readOnly && (
          <form class="row compact" onSubmit={(e) => void create(e)}>
            <label>
              New type <input value={name} placeholder="e.g. Task" onInput={(e) => setName((e.target as HTMLInputElement).value)} />
            </label>
            <button type="submit" disabled={!name.trim()}>
              Create type
            </button>
          </form>
        )}
      </div>
      {error && (
        <p class="error" role="alert">
          {error}
        </p>
      )}
      {current ? <TypeTable key={current.id} spaceId={spaceId} type={current} readOnly={readOnly} /> : <p>No tables yet. Create a type to start one.</p>}
    </div>
  )
}
