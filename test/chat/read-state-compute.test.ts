import { describe, expect, it } from 'vitest'
import { applyAdds, countersOf, emptyMarks, factsOf, flagsOf, reactionsRead, readAll, readUpTo, type MessageFacts } from '../../sync/modules/chat/read-state/compute.ts'
import { foldRecord, markOps, marksOf, MAX_MARK_OPS_PER_CHANGE } from '../../sync/modules/chat/read-state/marks.ts'
import type { JsonObject } from '../../sync/crdt/ops.ts'

const ME = 'me'
const ver = (n: number) => `${String(n).padStart(12, '0')}-c${n}`
const msg = (n: number, creator: string, extra: JsonObject = {}): MessageFacts => factsOf(`m${n}`, ver(n), { creator, text: `t${n}`, ...extra }, 'ignored', ME)

describe('chat read state: flags', () => {
  it("another member's message is unread; an own message is born read", () => {
    const marks = emptyMarks()
    expect(flagsOf(msg(1, 'bob'), ME, marks)).toEqual({ unread: true, unreadMention: false, unreadReactions: false })
    expect(flagsOf(msg(2, ME), ME, marks)).toEqual({ unread: false, unreadMention: false, unreadReactions: false })
  })

  it('creator falls back to the first op author when the record has no creator field', () => {
    expect(factsOf('x', ver(1), { text: 'hi' }, 'bob', ME).creator).toBe('bob')
    expect(factsOf('x', ver(1), { text: 'hi', creator: ME }, 'bob', ME).creator).toBe(ME)
  })

  it('a mention of the account sets unreadMention; a self-mention never badges', () => {
    const marks = emptyMarks()
    expect(flagsOf(msg(1, 'bob', { mentions: [ME] }), ME, marks).unreadMention).toBe(true)
    expect(flagsOf(msg(2, 'bob', { mentions: ['carol'] }), ME, marks).unreadMention).toBe(false)
    expect(flagsOf(msg(3, ME, { mentions: [ME] }), ME, marks).unreadMention).toBe(false)
  })

  it("reactions of others on own messages set unreadReactions; own reactions and reactions on others' messages do not", () => {
    const marks = emptyMarks()
    const r = (m: JsonObject) => ({ reactions: m })
    expect(flagsOf(msg(1, ME, r({ '👍': { bob: { $date: 'x' } } })), ME, marks).unreadReactions).toBe(true)
    expect(flagsOf(msg(2, ME, r({ '👍': { [ME]: { $date: 'x' } } })), ME, marks).unreadReactions).toBe(false)
    expect(flagsOf(msg(3, 'bob', r({ '👍': { carol: { $date: 'x' } } })), ME, marks).unreadReactions).toBe(false)
  })

  it('a reaction added and removed before viewing leaves no trace', () => {
    const marks = emptyMarks()
    const added = msg(1, ME, { reactions: { '👍': { bob: 1 } } })
    expect(flagsOf(added, ME, marks).unreadReactions).toBe(true)
    const removed = msg(1, ME, { reactions: { '👍': {} } })
    expect(flagsOf(removed, ME, marks).unreadReactions).toBe(false)
    expect(countersOf([removed], ME, marks).unreadReactionsCount).toBe(0)
  })
})

describe('chat read state: reading', () => {
  it('read marks the target and every held message at or below it; a later-arriving lower message stays unread (two regions)', () => {
    const marks = emptyMarks()
    const held = [msg(1, 'bob'), msg(3, 'bob'), msg(5, 'bob'), msg(6, ME)]
    applyAdds(marks, readUpTo(held, held[1], ME, marks))
    expect(held.map((f) => flagsOf(f, ME, marks).unread)).toEqual([false, false, true, false])
    // Written offline by another member, it slots between read ones.
    const late = msg(2, 'carol')
    const all = [...held, late]
    expect(flagsOf(late, ME, marks).unread).toBe(true)
    expect(countersOf(all, ME, marks).unreadCount).toBe(2)
    // Own messages are never marked (they are read already).
    expect(readAll(all, ME, marks).read.sort()).toEqual(['m2', 'm5'])
  })

  it('forward-only: reading is idempotent and a read message never becomes unread again', () => {
    const marks = emptyMarks()
    const m = msg(1, 'bob')
    applyAdds(marks, readAll([m], ME, marks))
    expect(readAll([m], ME, marks).read).toEqual([])
    // An edit (new text, same id) changes nothing about unread.
    const edited = factsOf('m1', ver(1), { creator: 'bob', text: 'edited' }, 'x', ME)
    expect(flagsOf(edited, ME, marks).unread).toBe(false)
  })

  it('an edit whose new text mentions the account sets unreadMention again; re-edits collapse into one', () => {
    const marks = emptyMarks()
    const v1 = msg(1, 'bob', { mentions: [ME], text: 'hi @me' })
    applyAdds(marks, readAll([v1], ME, marks))
    expect(flagsOf(v1, ME, marks)).toMatchObject({ unread: false, unreadMention: false })
    const v2 = msg(1, 'bob', { mentions: [ME], text: 'hi again @me' })
    const v3 = msg(1, 'bob', { mentions: [ME], text: 'hi again and again @me' })
    expect(flagsOf(v2, ME, marks)).toMatchObject({ unread: false, unreadMention: true })
    expect(countersOf([v3], ME, marks)).toEqual({ unreadCount: 0, unreadMentions: 1, unreadReactionsCount: 0 })
    applyAdds(marks, readUpTo([v3], v3, ME, marks))
    expect(flagsOf(v3, ME, marks).unreadMention).toBe(false)
    // An edit that drops the mention clears the flag; one that does not mention never sets it.
    expect(flagsOf(msg(1, 'bob', { text: 'no mention' }), ME, marks).unreadMention).toBe(false)
  })

  it('reactions-read clears the reactions seen and reads the messages in the ancestry it is given', () => {
    const marks = emptyMarks()
    const mine = msg(4, ME, { reactions: { '🎉': { bob: 1, carol: 2 } } })
    const before = [msg(1, 'bob'), msg(2, 'carol')]
    const adds = reactionsRead(mine, before, ME, marks)
    applyAdds(marks, adds)
    expect(flagsOf(mine, ME, marks).unreadReactions).toBe(false)
    expect(before.map((f) => flagsOf(f, ME, marks).unread)).toEqual([false, false])
    // A new reaction (or one re-added later with another stamp) flags again.
    expect(flagsOf(msg(4, ME, { reactions: { '🎉': { bob: 1, carol: 2, dave: 3 } } }), ME, marks).unreadReactions).toBe(true)
    expect(flagsOf(msg(4, ME, { reactions: { '🎉': { bob: 5, carol: 2 } } }), ME, marks).unreadReactions).toBe(true)
  })
})

describe('chat read state: marks records', () => {
  it('marks from two devices merge as a union, in any order', () => {
    const a = emptyMarks()
    const b = emptyMarks()
    const m = msg(1, 'bob', { mentions: [ME] })
    applyAdds(a, readAll([m], ME, a))
    applyAdds(b, { read: ['m2'], mention: [], reaction: [['m9', 'k']] })
    const recA = recordsOf(markOps('ds', readAll([m], ME, emptyMarks())))
    const recB = recordsOf(markOps('ds', { read: ['m2'], mention: [], reaction: [['m9', 'k']] }))
    const merged = new Map<string, JsonObject>()
    for (const recs of [recB, recA]) for (const [id, v] of recs) merged.set(id, deepMerge(merged.get(id) ?? {}, v))
    const marks = marksOf([...merged].map(([id, value]) => ({ id, value })))
    expect([...marks.read].sort()).toEqual(['m1', 'm2'])
    expect(flagsOf(m, ME, marks).unreadMention).toBe(false)
    expect(marks.reactionSeen.get('m9')?.has('k')).toBe(true)
  })

  it('foreign shapes in a marks record count for nothing', () => {
    const marks = emptyMarks()
    foldRecord(marks, 'm1', { r: 'yes', m: { k: 1 }, x: 'no' })
    foldRecord(marks, 'm2', 7)
    expect(marks.read.size + marks.mentionSeen.size + marks.reactionSeen.size).toBe(0)
  })

  it('a large read is split into changes under the op limit', () => {
    const read = Array.from({ length: MAX_MARK_OPS_PER_CHANGE * 2 + 1 }, (_, i) => `m${i}`)
    const changes = markOps('ds', { read, mention: [], reaction: [] })
    expect(changes.map((c) => c.length)).toEqual([MAX_MARK_OPS_PER_CHANGE, MAX_MARK_OPS_PER_CHANGE, 1])
  })
})

function recordsOf(changes: ReturnType<typeof markOps>): Map<string, JsonObject> {
  const out = new Map<string, JsonObject>()
  for (const ops of changes) {
    for (const op of ops) {
      if (op.op !== 'set') continue
      const rec = out.get(op.id) ?? {}
      const segs = op.path.split('.')
      let cur = rec
      for (const s of segs.slice(0, -1)) cur = (cur[s] ??= {}) as JsonObject
      cur[segs[segs.length - 1]] = op.value
      out.set(op.id, rec)
    }
  }
  return out
}

function deepMerge(a: JsonObject, b: JsonObject): JsonObject {
  const out: JsonObject = { ...a }
  for (const [k, v] of Object.entries(b)) {
    const cur = out[k]
    out[k] = cur && typeof cur === 'object' && !Array.isArray(cur) && v && typeof v === 'object' && !Array.isArray(v) ? deepMerge(cur, v) : v
  }
  return out
}
