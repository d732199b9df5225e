import { describe, expect, it } from 'vitest'
import { ANNOUNCE_AFTER_MS, ProcessRegistry, type ProcessAnnouncer, type ProcessRecord } from '../../node/daemon/processes.ts'

/** The registry's announcement rule (core.md Limits: only past 3 s of work), driven by an injected clock. */
function registry() {
  let t = 1_700_000_000_000
  const sent: Array<Parameters<ProcessAnnouncer>[0]> = []
  const reg = new ProcessRegistry(() => t, undefined, 0)
  reg.announceWith((e) => sent.push(structuredClone(e)))
  return { reg, sent, advance: (ms: number) => (t += ms), types: () => sent.map((e) => `${e.type} ${e.target}`) }
}

describe('process announcements', () => {
  it('work past 3 s is announced: started, progress with the full descriptor, done when it ends', () => {
    const { reg, sent, advance, types } = registry()
    const end = reg.start('sync.S1', 'sync')
    reg.tick()
    advance(ANNOUNCE_AFTER_MS - 1)
    reg.tick()
    expect(sent).toEqual([])
    advance(1)
    reg.tick()
    expect(sent).toEqual([
      { type: 'process.started', target: 'sync.S1', data: { id: 'sync.S1', kind: 'sync', state: 'running', startedAt: { $date: expect.stringMatching(/^\d{4}-/) } } },
    ])
    // Nothing moved: no event. A progress report: one progress event carrying the whole descriptor.
    reg.tick()
    reg.progress('sync.S1', { done: 3, total: 10 })
    reg.tick()
    reg.tick()
    expect(sent[1]).toEqual({ type: 'process.progress', target: 'sync.S1', data: { ...sent[0].data, progress: { done: 3, total: 10 } } })
    // Its end is told at once, not at the next tick.
    end()
    expect(sent[2]).toEqual({ type: 'process.done', target: 'sync.S1', data: { ...sent[1].data, state: 'done' } })
    reg.tick()
    expect(types()).toEqual(['process.started sync.S1', 'process.progress sync.S1', 'process.done sync.S1'])
  })

  it('work that ends within 3 s is never announced', () => {
    const { reg, sent, advance } = registry()
    const end = reg.start('sync.quick', 'sync')
    reg.progress('sync.quick', { done: 1, total: 2 })
    advance(ANNOUNCE_AFTER_MS - 1)
    reg.tick()
    end()
    advance(10_000)
    reg.tick()
    expect(sent).toEqual([])
    expect(reg.list()).toEqual([])
  })

  it("sources' work (index work) is announced by the same rule; the bus's own processes never are, and an announcement heard back lists once", () => {
    const { reg, advance, types } = registry()
    let index: ProcessRecord[] = []
    reg.addSource(() => index)
    const published: ProcessRecord[] = []
    reg.addSource(() => published, { fromBus: true })
    // A source lists its work once past 3 s (IndexWork does): the registry announces what it lists.
    index = [{ id: 'index.fts.S1', kind: 'index.fts', state: 'running', startedAt: { $date: new Date().toISOString() }, progress: { done: 1, total: 9 } }]
    published.push({ id: 'imp.1', kind: 'import', state: 'running', startedAt: { $date: new Date().toISOString() }, sender: { identity: 'me', self: true } })
    reg.tick()
    expect(types()).toEqual(['process.started index.fts.S1'])
    // The bus hears the announcement back and lists it too: GET /v1/processes shows the work once.
    published.push({ ...index[0], sender: { identity: 'me', self: true }, scope: 'device' })
    expect(reg.list().map((p) => p.id)).toEqual(['imp.1', 'index.fts.S1'])
    index = [{ ...index[0], progress: { done: 5, total: 9 } }]
    advance(1000)
    reg.tick()
    index = []
    reg.tick()
    expect(types()).toEqual(['process.started index.fts.S1', 'process.progress index.fts.S1', 'process.done index.fts.S1'])
  })

  it('without an announcer nothing is published; removing it stops announcing', () => {
    let t = 0
    const reg = new ProcessRegistry(() => t, undefined, 0)
    const sent: unknown[] = []
    reg.start('a', 'sync')
    t += ANNOUNCE_AFTER_MS
    reg.tick()
    const off = reg.announceWith((e) => sent.push(e))
    off()
    reg.tick()
    expect(sent).toEqual([])
    expect(reg.list().map((p) => p.id)).toEqual(['a'])
  })
})
