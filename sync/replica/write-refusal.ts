import { SvcError } from '../core/errors.ts'
import type { AclState } from '../acl/state.ts'

/**
 * The error of a write this account may not make in a space: 403 `space.read_only` (the spec's
 * code for any refused write; it has no code of its own for removal), with a message that says
 * why. A removed member is told it was removed (issue 39 item 6) and `details.reason` is
 * `removed`; a reader or guest is told it cannot write.
 */
export function writeRefusal(st: AclState, me: string): SvcError {
  if (st.roleOf(me) === 'none' && st.removals.has(me))
    return new SvcError('space.read_only', 'this account was removed from this space: its copy stays readable, writes are refused', { reason: 'removed' })
  return new SvcError('space.read_only', 'this account cannot write in this space')
}
