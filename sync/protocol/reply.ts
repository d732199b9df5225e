import type { SpaceReplica } from '../replica/space-replica.ts'
import type { HeadsItem, Message, RangeItem } from './messages.ts'
import { packQuestion, StepPacker } from './step-packer.ts'
import type { ChangePlan } from './tree-diff.ts'

/**
 * A reply, decided but not yet built: the messages come out one at a time as the consumer asks
 * for them, and the changes they carry are read from storage in chunks as they go, so a reply
 * of any size holds about one message's worth of bytes at a time. `asks` says whether its
 * first message is a question (the exchange then continues).
 */
export interface Reply extends AsyncIterable<Message> {
  readonly asks: boolean
}

export const NO_REPLY: Reply = fixed([])

/** A reply of messages already built (small ones: done, error, hello, auth). */
export function fixed(msgs: Message[]): Reply {
  return {
    asks: false,
    async *[Symbol.asyncIterator]() {
      yield* msgs
    },
  }
}

/** The questions first (cut to the per-step limits), then the planned changes, streamed. */
export function streamed(
  r: SpaceReplica,
  spaceId: string,
  req: number,
  hop: number,
  ranges: RangeItem[],
  heads: HeadsItem[],
  wants: number[],
  plan: ChangePlan,
  mustReply: boolean,
): Reply {
  const asks = ranges.length > 0 || heads.length > 0 || wants.length > 0
  if (!asks && plan.empty) return fixed(mustReply ? [{ type: 'done', spaceId, req }] : [])
  return {
    asks,
    async *[Symbol.asyncIterator]() {
      const q = packQuestion(spaceId, req, hop, ranges, heads, wants)
      const packer = new StepPacker(q.step, q.size)
      for await (const raw of plan.read(r)) {
        const done = packer.push(raw)
        if (done) yield done
      }
      yield packer.last()
    },
  }
}

/** Several replies, one after the other (a peer's stashed messages, handled at once). */
export function concat(replies: Reply[]): Reply {
  return {
    asks: replies.some((r) => r.asks),
    async *[Symbol.asyncIterator]() {
      for (const r of replies) yield* r
    },
  }
}
