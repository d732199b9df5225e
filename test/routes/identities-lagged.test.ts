import { describe, expect, it } from 'vitest'
import { forwarder } from '../../server/http/forwarder.ts'
import type { SseStream } from '../../server/sse.ts'

/** A stream that records what it is sent. */
function recording() {
  const sent: Array<{ event: string; data: unknown }> = []
  const stream = { closed: false, send: (event: string, data: unknown) => (sent.push({ event, data }), true) }
  return { sent, stream: stream as unknown as SseStream & { closed: boolean } }
}

const tick = () => new Promise((r) => setImmediate(r))

describe('identities stream: the 16-deep subscriber buffer', () => {
  it('a burst past 16 frames sends the first 16 and one lagged {total} with the number dropped', async () => {
    const { sent, stream } = recording()
    const push = forwarder(stream, 'identities')
    for (let i = 0; i < 20; i++) push({ added: [], updated: [{ identity: `id${i}`, spaceIds: [] }], removed: [] })
    await tick()
    expect(sent.filter((f) => f.event === 'identities')).toHaveLength(16)
    expect(sent.at(-1)).toEqual({ event: 'lagged', data: { total: 4 } })
    // The next burst starts a fresh count.
    push({ added: [], updated: [], removed: ['x'] })
    await tick()
    expect(sent.at(-1)).toEqual({ event: 'identities', data: { added: [], updated: [], removed: ['x'] } })
  })

  it('a closed stream is sent nothing', async () => {
    const { sent, stream } = recording()
    const push = forwarder(stream, 'identities')
    stream.closed = true
    push({ added: [], updated: [], removed: [] })
    await tick()
    expect(sent).toEqual([])
  })
})
