/**
 * A removed member's step that carries its own removal: a member peer that lacked the record
 * takes it in with the step, and must then answer as to a non-reader, not with what the step
 * asked for. Found by the simulator at a hub (hub seed 274 of `--peers 12 --hubs 1
 * --adversaries 2`); the responder judged rights only before ingesting, so daemons answered
 * the same way. Fails on the code before the re-check in Responder.onStep.
 */
import { describe, expect, it } from 'vitest'
import { identityOf } from '../../sync/crypto/keys.ts'
import { decodeChange } from '../../sync/dag/change.ts'
import { decodeMessage, encodeMessage } from '../../sync/protocol/messages.ts'
import { keyFor } from '../helpers.ts'
import { exchange, link, node } from '../protocol/helpers.ts'

describe('a step that brings the removal of its own sender', () => {
  it('is answered as a refusal, with none of the trees it asked for', async () => {
    const a = await node('a', 1)
    const spaceId = a.replica.spaceId
    const bId = identityOf(keyFor(2).publicKey)
    await a.replica.addMember(bId, 'writer')
    await a.replica.addMember(identityOf(keyFor(3).publicKey), 'reader')
    const b = await node('b', 2, spaceId)
    const c = await node('c', 3, spaceId)
    await link(a, b)
    await link(a, c)
    await exchange(b, a)
    // C gets a tree B lacks, but not the removal that follows.
    const tree = await a.replica.createObject()
    await a.replica.write(tree, [{ op: 'set', ds: '', id: '', path: 'title', value: 'after' }])
    await exchange(c, a)
    const removal = await a.replica.removeMember(bId)
    const raw = (await a.replica.rawChanges(spaceId, [removal]))[0].raw
    await b.replica.ingest([{ id: removal, raw }])

    await link(b, c)
    const opened = await b.session.open('c', spaceId)
    if (!('req' in opened)) throw new Error(`b could not open: ${opened.error}`)
    for (const f of opened.out) await c.session.handle('b', f.bytes)
    const step = encodeMessage({ type: 'step', spaceId, req: opened.req, hop: 2, ranges: [], heads: [{ treeId: tree, heads: [], have: [] }], wants: [], changes: [raw] })
    const out = await c.session.handle('b', step)
    expect(c.replica.acl.has(removal)).toBe(true)
    const sent = out.map((o) => decodeMessage(o.bytes)).flatMap((m) => (m.type === 'step' ? m.changes.map((x) => decodeChange(x).treeId) : []))
    expect(sent).not.toContain(tree)
    expect(out.map((o) => decodeMessage(o.bytes).type)).toEqual(['error'])
  })
})
