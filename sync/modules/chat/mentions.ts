import { validIdentity } from '../../space/one-to-one.ts'

/** chat.md Limits: at most this many identities in `mentions`. */
export const MAX_MENTIONS = 64

/** Base58 characters: an identity in a mention link ends at the first character outside them. */
const BASE58 = '[1-9A-HJ-NP-Za-km-z]'

/**
 * `mentions` of a message (chat.md "Chat message"), derived by the server and never accepted
 * from a client: every `svc://m/<spaceId>/<identity>` link in the text naming this space and a
 * valid identity, deduplicated in first-occurrence order, plus the replied-to message's creator;
 * capped at MAX_MENTIONS with that reply fold-in always kept (it displaces the last link).
 * Self-mentions stay (they list the account; read state never badges them). Empty: no mentions
 * (the caller leaves the field absent).
 */
export function deriveMentions(spaceId: string, text: string | undefined, replyCreator: string | undefined): string[] {
  const out: string[] = []
  const seen = new Set<string>()
  if (text) {
    const link = new RegExp(`svc://m/${escapeRegExp(spaceId)}/(${BASE58}+)`, 'g')
    for (const m of text.matchAll(link)) {
      const id = m[1]
      if (seen.has(id) || !validIdentity(id)) continue
      seen.add(id)
      out.push(id)
    }
  }
  if (replyCreator === undefined) return out.slice(0, MAX_MENTIONS)
  const at = out.indexOf(replyCreator)
  if (at >= 0 && at < MAX_MENTIONS) return out.slice(0, MAX_MENTIONS)
  // Not linked, or linked past the cap: the fold-in takes the last place.
  const rest = out.filter((id) => id !== replyCreator).slice(0, MAX_MENTIONS - 1)
  rest.push(replyCreator)
  return rest
}

const escapeRegExp = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
