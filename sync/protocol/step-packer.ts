import { SYNC_LIMITS } from './limits.ts'
import { isQuestion, type HeadsItem, type Message, type RangeItem, type StepMsg } from './messages.ts'

/**
 * Packs a reply into steps, as a pure function of what to say: the questions (ranges, heads,
 * wants) within the per-step limits and the byte budget, and the changes after them, each
 * step within `targetMessageBytes` (a single change larger than that travels alone).
 * Whatever question does not fit is left out: the ranges still differ, and a later exchange
 * finds them again.
 */

/** Room for a step's fixed fields (space id, req, hop, array heads). */
export const STEP_OVERHEAD = 128
/** CBOR head of one change inside a step. */
export const CHANGE_OVERHEAD = 8

export function step(spaceId: string, req: number, hop: number, ranges: RangeItem[], heads: HeadsItem[], wants: number[], changes: Uint8Array[]): StepMsg {
  return { type: 'step', spaceId, req, hop, ranges, heads, wants, changes }
}

/** The question part of a reply step, cut to the per-step limits and the byte budget; with its size. */
export function packQuestion(spaceId: string, req: number, hop: number, ranges: RangeItem[], heads: HeadsItem[], wants: number[]): { step: StepMsg; size: number } {
  const budget = SYNC_LIMITS.targetMessageBytes
  let size = STEP_OVERHEAD + Math.min(wants.length, SYNC_LIMITS.maxWants) * 4
  const fitRanges: RangeItem[] = []
  let children = 0
  for (const x of ranges) {
    const n = x.kind === 'fps' ? 1 << x.bits : 0
    const bytes = 16 + (x.kind === 'fps' ? x.fps.length : x.elems.length)
    if (fitRanges.length >= SYNC_LIMITS.maxRangeItems || children + n > SYNC_LIMITS.maxRangeChildren || (fitRanges.length && size + bytes > budget)) break
    fitRanges.push(x)
    children += n
    size += bytes
  }
  const fitHeads: HeadsItem[] = []
  for (const h of heads) {
    const bytes = 48 + (h.heads.length + h.have.length) * 32
    if (fitHeads.length >= SYNC_LIMITS.maxHeadsItems || (fitHeads.length && size + bytes > budget)) break
    fitHeads.push(h)
    size += bytes
  }
  return { step: step(spaceId, req, hop, fitRanges, fitHeads, wants.slice(0, SYNC_LIMITS.maxWants), []), size }
}

/**
 * Appends changes to steps: fills `cur` (of `size` bytes so far) and starts a new answer step
 * whenever the next change would pass the budget. Returns the steps completed, and leaves the
 * open one in the packer.
 */
export class StepPacker {
  private size: number
  constructor(
    private cur: StepMsg,
    size = STEP_OVERHEAD,
  ) {
    this.size = size
  }

  /** Adds one change; returns a completed step when this change started a new one. */
  push(raw: Uint8Array): StepMsg | undefined {
    const full = this.size + raw.length + CHANGE_OVERHEAD > SYNC_LIMITS.targetMessageBytes || this.cur.changes.length >= SYNC_LIMITS.maxChangesPerStep
    let done: StepMsg | undefined
    // A change larger than the budget travels alone (a largest change fits maxMessageBytes).
    if (full && (this.cur.changes.length > 0 || isQuestion(this.cur))) {
      done = this.cur
      this.cur = step(this.cur.spaceId, this.cur.req, this.cur.hop, [], [], [], [])
      this.size = STEP_OVERHEAD
    }
    this.cur.changes.push(raw)
    this.size += raw.length + CHANGE_OVERHEAD
    return done
  }

  /** The open step (it always exists: a reply has at least one). */
  last(): StepMsg {
    return this.cur
  }
}

/** A whole reply, packed at once (for callers that hold every change already). */
export function packSteps(spaceId: string, req: number, hop: number, ranges: RangeItem[], heads: HeadsItem[], wants: number[], raws: Uint8Array[], mustReply: boolean): Message[] {
  const asks = ranges.length > 0 || heads.length > 0 || wants.length > 0
  if (!asks && raws.length === 0) return mustReply ? [{ type: 'done', spaceId, req }] : []
  const q = packQuestion(spaceId, req, hop, ranges, heads, wants)
  const packer = new StepPacker(q.step, q.size)
  const out: Message[] = []
  for (const raw of raws) {
    const done = packer.push(raw)
    if (done) out.push(done)
  }
  out.push(packer.last())
  return out
}
