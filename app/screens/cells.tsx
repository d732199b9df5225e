import { useEffect, useState } from 'preact/hooks'

export interface PropertyDef {
  id: string
  name: string
  kind: string
  xFormat?: { type?: string; options?: Record<string, { name?: string }> }
}

/** The property kinds the app offers, as kind plus format slug. */
export const KINDS = [
  { id: 'string', label: 'Text', kind: 'string', format: 'text' },
  { id: 'number', label: 'Number', kind: 'number', format: 'number' },
  { id: 'boolean', label: 'Checkbox', kind: 'boolean', format: 'checkbox' },
  { id: 'datetime', label: 'Date', kind: 'datetime', format: 'date' },
  { id: 'array', label: 'Tags', kind: 'array', format: 'tags' },
] as const

/** An instant as the API writes it: `{$date}`, an ISO string or unix seconds (older peers). */
export function instant(value: unknown): Date | undefined {
  if (value && typeof value === 'object' && '$date' in value) return new Date(String(value.$date))
  if (typeof value === 'string') return new Date(value)
  if (typeof value === 'number') return new Date(value * 1000)
  return undefined
}

export function displayValue(prop: PropertyDef, value: unknown): string {
  if (value === undefined || value === null) return ''
  if (prop.kind === 'boolean') return value === true ? '✓' : ''
  if (prop.kind === 'datetime') return instant(value)?.toISOString().slice(0, 10) ?? ''
  if (Array.isArray(value)) return value.map(String).join(', ')
  if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean') return String(value)
  return JSON.stringify(value)
}

/**
 * One cell: its value as a button, and the editor for the property's kind once it is chosen
 * (click, Enter or Space). Only a checkbox is an input from the start. Keeping the other cells
 * plain keeps a long table light to scroll: a screen of rows is a few hundred buttons, not a
 * few hundred live inputs.
 */
export function CellEditor({ prop, value, label, onCommit }: { prop: PropertyDef; value: unknown; label: string; onCommit: (v: unknown) => void }) {
  const shown = displayValue(prop, value)
  const [editing, setEditing] = useState(false)
  const [text, setText] = useState(shown)
  useEffect(() => setText(shown), [shown])
  if (prop.kind === 'boolean') {
    return <input type="checkbox" aria-label={label} checked={value === true} onChange={(e) => onCommit((e.target as HTMLInputElement).checked)} />
  }
  if (!editing) {
    return (
      <button class="cell" aria-label={`${label}: ${shown || 'empty'}, edit`} onClick={() => setEditing(true)}>
        {shown || '\u00a0'}
      </button>
    )
  }
  const focus = (el: HTMLInputElement | null) => el?.focus()
  if (prop.kind === 'datetime') {
    return (
      <input
        ref={focus}
        type="date"
        aria-label={label}
        value={shown}
        onBlur={() => setEditing(false)}
        onChange={(e) => {
          const v = (e.target as HTMLInputElement).value
          onCommit(v ? { $date: new Date(v).toISOString() } : null)
        }}
      />
    )
  }
  const commit = () => {
    setEditing(false)
    if (text === shown) return
    if (prop.kind === 'number') onCommit(text === '' ? null : Number(text))
    else if (prop.kind === 'array')
      onCommit(
        text
          .split(',')
          .map((t) => t.trim())
          .filter(Boolean),
      )
    else onCommit(text)
  }
  const handlers = {
    ref: focus,
    'aria-label': label,
    value: text,
    onInput: (e: Event) => setText((e.target as HTMLInputElement).value),
    onBlur: commit,
    onKeyDown: (e: KeyboardEvent) => {
      if (e.key === 'Enter') commit()
      if (e.key === 'Escape') {
        setText(shown)
        setEditing(false)
      }
    },
  }
  return prop.kind === 'number' ? <input type="number" {...handlers} /> : <input type="text" {...handlers} />
}
