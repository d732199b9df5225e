import { SvcError } from '../../core/errors.ts'
import { utf8 } from '../../core/encoding.ts'
import type { Json } from '../../crdt/ops.ts'
import { EVENTS } from '../../core/events-limits.ts'
import { mapOwnedType } from './namespace.ts'

/** chat.md "Event envelope". */
export type EventScope = 'device' | 'account' | 'space'
export const EVENT_SCOPES: readonly EventScope[] = ['device', 'account', 'space']

/** An event as published and delivered (before `sender` is added). */
export interface BusEvent {
  type: string
  scope: EventScope
  spaceId?: string
  target?: string
  data?: Json
}

/** Set by the server: from the signature for network scopes, this account for local ones. */
export interface EventSender {
  identity: string
  self: boolean
}

export interface DeliveredEvent extends BusEvent {
  sender: EventSender
}

/** A publish body as the route's schema lets it through (types checked, grammar not yet). */
export interface PublishDraft {
  type?: string
  scope?: string
  spaceId?: string
  target?: string
  data?: unknown
}

export const TYPE_GRAMMAR = /^[a-z0-9_]+(\.[a-z0-9_]+)*$/
const TARGET_GRAMMAR = /^[A-Za-z0-9._-]{1,128}$/
/** A subscribe `type` value: exact, or a prefix ending `.*`. */
const TYPE_PATTERN = /^[a-z0-9_]+(\.[a-z0-9_]+)*(\.\*)?$/

const missing = (field: string, why: string) => new SvcError('request.missing_field', why, { field })
const invalid = (field: string, why: string) => new SvcError('request.invalid_field', why, { field })

export const isScope = (s: string): s is EventScope => (EVENT_SCOPES as readonly string[]).includes(s)

/** Whether a type is well formed (grammar and length). */
export const validType = (t: string): boolean => t.length <= EVENTS.maxTypeChars && TYPE_GRAMMAR.test(t)
export const validTarget = (t: string): boolean => TARGET_GRAMMAR.test(t)

/** The topic budget (type plus target) on every scope: bytes and segments. */
export function withinTopicBudget(type: string, target: string | undefined): boolean {
  const bytes = utf8(type).length + (target === undefined ? 0 : 1 + utf8(target).length)
  const segments = type.split('.').length + (target === undefined ? 0 : 1)
  return bytes <= EVENTS.topicBudgetBytes && segments <= EVENTS.topicBudgetSegments
}

/**
 * Checks a publish body against every rule of chat.md (codes as its Errors table says) and
 * returns the event to deliver: a self-owned type (namespace.ts) is mapped into the
 * publisher's namespace first, and the topic budget is checked on the mapped type.
 */
export function checkPublish(draft: PublishDraft, publisher: string): BusEvent {
  if (draft.type === undefined || draft.type === '') throw missing('type', 'type is required')
  if (!validType(draft.type)) throw invalid('type', 'type must be a dotted lowercase slug of at most 128 characters')
  if (draft.scope === undefined || draft.scope === '') throw missing('scope', 'scope is required')
  if (!isScope(draft.scope)) throw invalid('scope', 'scope must be device, account or space')
  const scope = draft.scope
  if (scope === 'space' && (draft.spaceId === undefined || draft.spaceId === '')) throw missing('spaceId', 'scope space needs a spaceId')
  if (scope !== 'space' && draft.spaceId !== undefined) throw invalid('spaceId', 'spaceId is only for scope space')
  if (draft.target !== undefined && !validTarget(draft.target)) throw invalid('target', 'target must be 1 to 128 of [A-Za-z0-9._-]')
  const type = mapOwnedType(draft.type, publisher)
  if (!withinTopicBudget(type, draft.target)) throw invalid('type', 'type plus target exceed the topic budget (256 bytes, 16 segments)')
  const event: BusEvent = { type, scope }
  if (scope === 'space') event.spaceId = draft.spaceId
  if (draft.target !== undefined) event.target = draft.target
  if (draft.data !== undefined) {
    if (dataBytes(draft.data) > EVENTS.maxDataBytes) throw new SvcError('events.payload_too_large', 'data is over 64 KiB', { limit: EVENTS.maxDataBytes })
    event.data = draft.data as Json
  }
  return event
}

/** `data` marshaled, in bytes (a string's length bounds its UTF-8 size from below). */
export function dataBytes(data: unknown): number {
  const s = JSON.stringify(data) ?? ''
  return s.length > EVENTS.maxDataBytes ? s.length : utf8(s).length
}

/** A subscription's filter: each dimension a set of accepted values, absent meaning any. */
export interface EventFilter {
  scopes?: readonly EventScope[]
  spaceIds?: readonly string[]
  /** Exact types, and prefixes (without the trailing `*`, with the dot: `process.`). */
  types?: readonly string[]
  targets?: readonly string[]
}

export interface SubscribeDraft {
  scope?: readonly string[]
  spaceId?: readonly string[]
  type?: readonly string[]
  target?: readonly string[]
}

const uniqueSorted = (xs: readonly string[]) => [...new Set(xs)].sort()

/**
 * The subscribe rules of chat.md "Event bus": an explicit `scope=space` must name a spaceId;
 * a spaceId admits space-scope events only, so a scope list without space is refused; a
 * catch-all (no scope) covers device, account and the listed spaces.
 */
export function checkSubscribe(q: SubscribeDraft): EventFilter {
  for (const [field, values] of Object.entries(q) as Array<[string, unknown[] | undefined]>) {
    if (values && values.length > EVENTS.maxFilterValues) throw invalid(field, `at most ${EVENTS.maxFilterValues} values`)
  }
  const f: EventFilter = {}
  if (q.scope?.length) {
    for (const s of q.scope) {
      if (s === '') throw missing('scope', 'scope is empty')
      if (!isScope(s)) throw invalid('scope', 'scope must be device, account or space')
    }
    f.scopes = uniqueSorted(q.scope) as EventScope[]
  }
  if (q.spaceId?.length) {
    if (q.spaceId.some((s) => s === '')) throw missing('spaceId', 'spaceId is empty')
    if (f.scopes && !f.scopes.includes('space')) throw invalid('spaceId', 'a spaceId filter admits space events only; the scope list excludes space')
    f.spaceIds = uniqueSorted(q.spaceId)
  } else if (f.scopes?.includes('space')) throw missing('spaceId', 'a space subscription must name at least one spaceId')
  if (q.type?.length) {
    for (const t of q.type) {
      if (t === '') throw missing('type', 'type is empty')
      if (t.length > EVENTS.maxTypeChars || !TYPE_PATTERN.test(t)) throw invalid('type', 'type must be a dotted lowercase slug, or a prefix ending .*')
    }
    f.types = uniqueSorted(q.type.map((t) => (t.endsWith('.*') ? t.slice(0, -1) : t)))
  }
  if (q.target?.length) {
    for (const t of q.target) if (!validTarget(t)) throw invalid('target', 'target must be 1 to 128 of [A-Za-z0-9._-]')
    f.targets = uniqueSorted(q.target)
  }
  return f
}

/** One string per distinct filter: identical filters share one interest. */
export function filterKey(f: EventFilter): string {
  return JSON.stringify([f.scopes ?? null, f.spaceIds ?? null, f.types ?? null, f.targets ?? null])
}

/** AND across dimensions, OR within one; spaceIds admit space-scope events only. */
export function matches(f: EventFilter, e: BusEvent): boolean {
  if (f.scopes && !f.scopes.includes(e.scope)) return false
  // Space events reach only subscriptions naming their space (a catch-all included); a
  // spaceId filter says nothing about device and account events.
  if (e.scope === 'space' && !f.spaceIds?.includes(e.spaceId!)) return false
  if (f.types && !f.types.some((t) => (t.endsWith('.') ? e.type.startsWith(t) : e.type === t))) return false
  if (f.targets && (e.target === undefined || !f.targets.includes(e.target))) return false
  return true
}
