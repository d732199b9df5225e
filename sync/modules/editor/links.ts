/**
 * `svc://` references inside block text: object links (`svc://<objectId>` or
 * `svc://<spaceId>/<objectId>[#anchor]`), mentions (`svc://m/<spaceId>/<identity>`) and files
 * (`svc://f/<spaceId>/<fileId>`). In markdown they are ordinary links, e.g.
 * `[Roadmap](svc://obj1)` or `[@Ada](svc://m/space1/ada-identity)`.
 */
import type { Block, BlockDraft } from './types.ts'

export type SvcRef =
  | { kind: 'object'; url: string; objectId: string; spaceId?: string; anchor?: string }
  | { kind: 'mention'; url: string; spaceId: string; identity: string }
  | { kind: 'file'; url: string; spaceId: string; fileId: string }

const SVC_URL = /svc:\/\/[^\s()<>[\]"'`]+/g

/** Parse one `svc://` URL; undefined if it has no recognizable shape. */
export function parseSvcUrl(url: string): SvcRef | undefined {
  if (!url.startsWith('svc://')) return undefined
  const rest = url.slice(6)
  const hash = rest.indexOf('#')
  const path = hash < 0 ? rest : rest.slice(0, hash)
  const anchor = hash < 0 ? undefined : rest.slice(hash + 1)
  const parts = path.split('/')
  if (parts.some((p) => p === '')) return undefined
  if (parts[0] === 'm' && parts.length === 3) return { kind: 'mention', url, spaceId: parts[1], identity: parts[2] }
  if (parts[0] === 'f' && parts.length === 3) return { kind: 'file', url, spaceId: parts[1], fileId: parts[2] }
  if (parts.length === 1) return anchor ? { kind: 'object', url, objectId: parts[0], anchor } : { kind: 'object', url, objectId: parts[0] }
  if (parts.length === 2) {
    const ref: SvcRef = { kind: 'object', url, spaceId: parts[0], objectId: parts[1] }
    if (anchor) ref.anchor = anchor
    return ref
  }
  return undefined
}

/** Every `svc://` reference in the blocks' text and table cells, in document order, deduplicated by URL. */
export function svcRefs(blocks: (Block | BlockDraft)[]): SvcRef[] {
  const seen = new Set<string>()
  const out: SvcRef[] = []
  const scan = (text: string | undefined) => {
    if (!text || !text.includes('svc://')) return
    for (const m of text.matchAll(SVC_URL)) {
      const url = m[0].replace(/[.,;:!?]+$/, '')
      if (seen.has(url)) continue
      const ref = parseSvcUrl(url)
      if (ref) {
        seen.add(url)
        out.push(ref)
      }
    }
  }
  for (const b of blocks) {
    if (b.type === 'code') continue
    scan(b.text)
    for (const row of b.rows ?? []) for (const cell of row) scan(cell)
  }
  return out
}
