import { propertyIdSync } from '../../crypto/hash.ts'
import type { Json } from '../../crdt/ops.ts'
import { isObject } from '../../crdt/path.ts'
import type { WriteRule, WriteRuleInput } from '../../crdt/record.ts'

/** Fields only the creator may change after the create (an edit): every other field is create-only. */
export const EDITABLE_FIELDS: ReadonlySet<string> = new Set(['text', 'modifiedAt', 'mentions'])
/** The reactions container: `reactions.<emoji>.<identity>` leaves, each written only by that identity. */
export const REACTIONS = 'reactions'
/** Fields a create never carries: reactions are leaves of their signers, flags are local to each account. */
const NOT_IN_CREATE = [REACTIONS, 'unread', 'unreadMention', 'unreadReactions'] as const

/** A reaction leaf holds when it was added: the instant wrapper, or bare unix seconds (older peers). */
const isReactionValue = (v: Json): boolean => (typeof v === 'number' && Number.isFinite(v)) || (isObject(v) && typeof v.$date === 'string' && Object.keys(v).length === 1)

/**
 * Chat's authorship, judged at merge on every peer (chat.md Authentication 2, "also enforced
 * on changes arriving from peers"), so a forged change is dropped everywhere the same way:
 *
 * 1. The create: a whole-record `$set` by the change the record id derives from
 *    (`propertyIdSync(changeId) === recordId`, the route writes under CHANGE_DERIVED_ID), whose
 *    value names its signer as `creator` and carries no reactions or read flags. Nothing else is
 *    accepted before it, so a concurrent forgery stamped lower than the create (a low lamport)
 *    cannot pre-empt it: it is refused then, and stays refused.
 * 2. After the create: `reactions.<emoji>.<signer>` set (to an instant) or unset by any writer
 *    of the space, only in their own leaf; every other op only by the creator, and only on the
 *    editable fields (text, modifiedAt, mentions; attachments, agent, replyToMessageId,
 *    creator and createdAt are create-only) or a delete of the whole message.
 *
 * The verdict reads only the op, its signer, its change and the creator, as the WriteRule
 * contract requires (sync/crdt/record.ts).
 */
export const chatWriteRule: WriteRule = ({ op, signer, changeId, recordId, creator }: WriteRuleInput): boolean => {
  if (!creator) return isCreate(op, signer) && propertyIdSync(changeId) === recordId
  if (op.k === 'delete') return signer === creator.a
  const dot = op.p.indexOf('.')
  const head = dot < 0 ? op.p : op.p.slice(0, dot)
  if (head === REACTIONS) {
    const seg = op.p.split('.')
    if (seg.length !== 3 || seg[2] !== signer) return false
    return op.k === 'unset' || (op.k === 'set' && isReactionValue(op.v))
  }
  return signer === creator.a && dot < 0 && EDITABLE_FIELDS.has(op.p)
}

function isCreate(op: WriteRuleInput['op'], signer: string): boolean {
  if (op.k !== 'set' || op.p !== '' || !isObject(op.v)) return false
  const v = op.v
  if (v.creator !== signer) return false
  return NOT_IN_CREATE.every((k) => !Object.hasOwn(v, k))
}
