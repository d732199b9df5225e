import { SvcError } from '../../core/errors.ts'
import { toHex, utf8 } from '../../core/encoding.ts'
import { sha256 } from '@noble/hashes/sha2.js'

/**
 * Self-owned topic namespaces (chat.md: `editor.cursor` is "mapped into a namespace only the
 * sender's account can publish to").
 *
 * Mapping: a self-owned type `T` published by account `A` becomes `T.<owner(A)>`, where
 * `owner(A)` is the first 16 bytes of SHA-256 of `A`'s identity (base58 text, UTF-8) as 32
 * lowercase hex characters, so the result is still a type of the envelope grammar. A publisher
 * may also name its own namespace explicitly (`T.<owner(A)>` or below it); any other type under
 * `T.` lands in another account's namespace and is 403 `events.topic_not_owned`. Receivers
 * apply the same rule to the signer of a network event and drop what fails it, so nobody can
 * publish presence under another account's name, even through a daemon of its own.
 * Subscribers take every account's cursors with `type=editor.cursor.*`, one account's with
 * `type=editor.cursor.<owner>`.
 */
export const SELF_OWNED_TYPES: readonly string[] = ['editor.cursor']

export function ownerToken(identity: string): string {
  return toHex(sha256(utf8(identity)).subarray(0, 16))
}

/** The self-owned type `type` falls under, or undefined. */
function ownedRoot(type: string): string | undefined {
  return SELF_OWNED_TYPES.find((t) => type === t || type.startsWith(`${t}.`))
}

/** Whether `type` may be published by `identity` (outside every self-owned namespace, or in its own). */
export function ownsType(type: string, identity: string): boolean {
  const root = ownedRoot(type)
  if (root === undefined) return true
  const rest = type.slice(root.length + 1)
  const token = ownerToken(identity)
  return rest === token || rest.startsWith(`${token}.`)
}

/** The type as delivered: a bare self-owned type moves into the publisher's namespace. */
export function mapOwnedType(type: string, publisher: string): string {
  const root = ownedRoot(type)
  if (root === undefined) return type
  if (type === root) return `${root}.${ownerToken(publisher)}`
  if (!ownsType(type, publisher)) throw new SvcError('events.topic_not_owned', `${root}.* belongs to the account it names`, { type })
  return type
}
