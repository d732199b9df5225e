import { UsageError } from '../io.ts'

/** A member as the mention helper needs it (a row of `GET {S}/members`). */
export interface MentionTarget {
  identity: string
  name: string
  status: string
}

/**
 * `@name` and `@"two words"` tokens, at the start of the text or after a space or an opening
 * bracket (so `a@b.c` and the `[@Name](...)` of a link already made are left alone).
 */
const TOKEN = /(^|[\s(])@(?:"([^"]+)"|([^\s@"[\]()]+))/g
const TRAILING = /[.,;:!?]+$/

/** Escapes what would end a markdown link's text early. */
const linkText = (s: string) => s.replace(/[[\]\\]/g, (c) => `\\${c}`)

/**
 * Text with each `@name` of an active member turned into that member's mention, the link the
 * web app writes (`[@Name](svc://m/<spaceId>/<identity>)`), from which the server derives the
 * message's `mentions` (chat.md "Chat message"). A token matches a member's name (ignoring case,
 * and spaces for a `@BeaSmith` of "Bea Smith") or identity. Punctuation after a name (`@bea,`)
 * stays text. A name two members share is a UsageError naming both identities; a token no member
 * matches stays as typed and is returned in `unknown`.
 */
export function linkMentions(text: string, spaceId: string, members: readonly MentionTarget[]): { text: string; unknown: string[] } {
  const active = members.filter((m) => m.status === 'active')
  const unknown: string[] = []
  const out = text.replace(TOKEN, (whole, lead: string, quoted: string | undefined, bare: string | undefined) => {
    const raw = quoted ?? bare ?? ''
    const tail = quoted === undefined ? (TRAILING.exec(raw)?.[0] ?? '') : ''
    const token = raw.slice(0, raw.length - tail.length)
    if (token === '') return whole
    const key = token.toLowerCase()
    const byId = active.filter((m) => m.identity === token)
    const byName = byId.length > 0 ? byId : active.filter((m) => m.name !== '' && (m.name.toLowerCase() === key || m.name.replace(/\s+/g, '').toLowerCase() === key))
    if (byName.length > 1) throw new UsageError(`@${token} names ${byName.length} members (${byName.map((m) => m.identity).join(', ')}): write @IDENTITY instead`)
    const m = byName[0]
    if (m === undefined) {
      unknown.push(token)
      return whole
    }
    return `${lead}[@${linkText(m.name || m.identity.slice(0, 6))}](svc://m/${spaceId}/${m.identity})${tail}`
  })
  return { text: out, unknown }
}
