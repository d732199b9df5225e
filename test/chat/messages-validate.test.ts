import { describe, expect, it } from 'vitest'
import { SvcError } from '../../sync/core/errors.ts'
import { deriveMentions, MAX_MENTIONS } from '../../sync/modules/chat/mentions.ts'
import { checkEmoji, checkSend } from '../../sync/modules/chat/validate.ts'
import { idFor } from '../helpers.ts'

/*
 * The library's message rules (sync/modules/chat/{mentions,validate}.ts), which every caller
 * gets, not only the HTTP routes whose schemas check shapes first.
 */

const S = 'Space1'
const link = (id: string, space = S) => `svc://m/${space}/${id}`
const code = (fn: () => unknown): string | undefined => {
  try {
    fn()
  } catch (err) {
    return err instanceof SvcError ? err.code : 'not an SvcError'
  }
  return undefined
}

describe('deriveMentions', () => {
  it('links of this space with valid identities, deduped in first-occurrence order', () => {
    const [x, y] = [idFor(1), idFor(2)]
    expect(deriveMentions(S, `${link(y)} ${link(x)} [@y](${link(y)}) ${link(x, 'Other')} ${link('abc')}`, undefined)).toEqual([y, x])
    // A link ends at the first character that is not base58.
    expect(deriveMentions(S, `(${link(x)})`, undefined)).toEqual([x])
    expect(deriveMentions(S, undefined, undefined)).toEqual([])
    expect(deriveMentions(S, 'no links', undefined)).toEqual([])
  })

  it('the replied-to creator is folded in last, once, and kept at the cap', () => {
    const ids = Array.from({ length: 70 }, (_, i) => idFor(30 + i))
    const text = ids.map((id) => link(id)).join(' ')
    const reply = idFor(200)
    expect(deriveMentions(S, link(ids[0]), reply)).toEqual([ids[0], reply])
    expect(deriveMentions(S, `${link(reply)} ${link(ids[0])}`, reply)).toEqual([reply, ids[0]])
    expect(deriveMentions(S, text, undefined)).toEqual(ids.slice(0, MAX_MENTIONS))
    expect(deriveMentions(S, text, reply)).toEqual([...ids.slice(0, MAX_MENTIONS - 1), reply])
    // Linked within the cap: stays where it is.
    expect(deriveMentions(S, text, ids[5])).toEqual(ids.slice(0, MAX_MENTIONS))
    // Linked past the cap: takes the last place.
    expect(deriveMentions(S, text, ids[66])).toEqual([...ids.slice(0, MAX_MENTIONS - 1), ids[66]])
  })
})

describe('checkSend and checkEmoji', () => {
  it('keeps only the client fields, drops empty text and empty attachments, requires one of them', () => {
    expect(checkSend({ text: 'hi', replyToMessageId: 'm1' })).toEqual({ text: 'hi', replyToMessageId: 'm1' })
    expect(checkSend({ text: '', attachments: { a: { type: 'image', link: 'svc://f/s/f' } } })).toEqual({ attachments: { a: { type: 'image', link: 'svc://f/s/f' } } })
    expect(code(() => checkSend({ text: '', attachments: {} }))).toBe('chat.text_required')
    expect(code(() => checkSend({}))).toBe('chat.text_required')
  })

  it('byte limits: text, reply id, agent name; stamped fields are read-only', () => {
    expect(code(() => checkSend({ text: '€'.repeat(11_000) }))).toBe('request.invalid_field')
    expect(checkSend({ text: '€'.repeat(10_000) }).text).toHaveLength(10_000)
    expect(code(() => checkSend({ text: 'x', replyToMessageId: '€'.repeat(86) }))).toBe('request.invalid_field')
    expect(code(() => checkSend({ text: 'x', agent: { name: '€'.repeat(86), done: true } }))).toBe('chat.agent_invalid')
    expect(checkSend({ text: 'x', agent: { name: '€'.repeat(85), done: true } }).agent).toEqual({ name: '€'.repeat(85), done: true })
    for (const f of ['creator', 'createdAt', 'modifiedAt', 'mentions', 'reactions', 'unread']) expect(code(() => checkSend({ text: 'x', [f]: 1 }))).toBe('request.invalid_field')
  })

  it('attachments: at most 32, id pattern, {type, link} only, link shape', () => {
    const att = (n: number) => Object.fromEntries(Array.from({ length: n }, (_, i) => [`k${i}`, { type: 'link', link: `svc://f/s/${i}` }]))
    expect(Object.keys(checkSend({ attachments: att(32) }).attachments as object)).toHaveLength(32)
    expect(code(() => checkSend({ attachments: att(33) }))).toBe('request.invalid_field')
    expect(code(() => checkSend({ attachments: { 'a.b': { type: 'link', link: 'svc://f/s/f' } } }))).toBe('request.invalid_field')
    expect(code(() => checkSend({ attachments: { a: { type: 'link', link: 'svc://f/s/f', x: 1 } } }))).toBe('request.invalid_field')
    expect(code(() => checkSend({ attachments: { a: { type: 'link', link: 'svc://f/s' } } }))).toBe('request.invalid_field')
    expect(code(() => checkSend({ attachments: [] }))).toBe('request.invalid_field')
  })

  it('emoji: a path segment of 1 to 64 bytes', () => {
    expect(checkEmoji('👍🏽')).toBe('👍🏽')
    expect(checkEmoji('+1')).toBe('+1')
    for (const bad of ['', 'a.b', 'a b', '\u0000', '__proto__', 'x'.repeat(65)]) expect(code(() => checkEmoji(bad))).toBe('request.invalid_field')
  })
})
