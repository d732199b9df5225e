import { encodeCanonical } from '../core/encoding.ts'

/**
 * The associated data a `profile` record's sealed fields are bound to: the space and the
 * record's author. A member who copies another member's sealed profile into a record of its own
 * gets bytes that open under nobody's name (the AEAD check fails for its identity), so no member
 * can wear another's profile; and a profile sealed in one space means nothing in another.
 */
export const profileAad = (spaceId: string, author: string): Uint8Array => encodeCanonical(['svc/profile/v1', spaceId, author])
