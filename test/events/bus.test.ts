import { describe, expect, it } from 'vitest'
import { SvcError } from '../../sync/core/errors.ts'
import { EventBus } from '../../sync/modules/events/bus.ts'
import { checkSubscribe, filterKey, matches, type BusEvent, type DeliveredEvent } from '../../sync/modules/events/envelope.ts'
import { mapOwnedType, ownerToken, ownsType } from '../../sync/modules/events/namespace.ts'

const ME = 'Me1111111111111111111111111111111111111111'
const bus = (members: Record<string, boolean> = {}) =>
  new EventBus(
    {
      accountId: ME,
      requireFullMember(s) {
        if (!(s in members)) throw new SvcError('space.not_found', 'space not found')
        if (!members[s]) throw new SvcError('events.no_read_key', 'guest')
      },
    },
    () => 1_000,
  )

describe('event filters', () => {
  it('identical filters have one key whatever the order of values', () => {
    expect(filterKey(checkSubscribe({ type: ['b', 'a'], spaceId: ['y', 'x', 'x'] }))).toBe(filterKey(checkSubscribe({ spaceId: ['x', 'y'], type: ['a', 'b'] })))
    expect(filterKey(checkSubscribe({ type: ['a'] }))).not.toBe(filterKey(checkSubscribe({ type: ['a.*'] })))
  })

  it('a prefix `.*` matches below it, never the bare stem or a longer word', () => {
    const f = checkSubscribe({ type: ['ui.*'] })
    const e = (type: string): BusEvent => ({ type, scope: 'device' })
    expect(matches(f, e('ui.open_space'))).toBe(true)
    expect(matches(f, e('ui.a.b'))).toBe(true)
    expect(matches(f, e('ui'))).toBe(false)
    expect(matches(f, e('uix.a'))).toBe(false)
  })

  it('a space event matches only filters naming its space; a target filter needs a target', () => {
    const ev: BusEvent = { type: 't', scope: 'space', spaceId: 's1' }
    expect(matches(checkSubscribe({}), ev)).toBe(false)
    expect(matches(checkSubscribe({ spaceId: ['s2'] }), ev)).toBe(false)
    expect(matches(checkSubscribe({ spaceId: ['s2', 's1'] }), ev)).toBe(true)
    expect(matches(checkSubscribe({ target: ['x'] }), { type: 't', scope: 'device' })).toBe(false)
  })
})

describe('the bus', () => {
  it('delivers to each matching subscriber once, sharing one encoding per publish', () => {
    const b = bus()
    const got: Array<[string, DeliveredEvent]> = []
    let encodings = 0
    const sink = (name: string) => (e: DeliveredEvent, shared: { frame?: string }) => {
      shared.frame ??= (encodings++, JSON.stringify(e))
      got.push([name, e])
    }
    b.subscribe(checkSubscribe({}), sink('a'))
    b.subscribe(checkSubscribe({}), sink('b'))
    b.subscribe(checkSubscribe({ type: ['x'] }), sink('c'))
    expect(b.publish({ type: 'y', scope: 'device' })).toBe(2)
    expect(encodings).toBe(1)
    expect(got.map(([n]) => n)).toEqual(['a', 'b'])
    expect(got[0][1].sender).toEqual({ identity: ME, self: true })
  })

  it('a subscriber that throws starves no other', () => {
    const b = bus()
    let reached = false
    b.subscribe(checkSubscribe({}), () => {
      throw new Error('boom')
    })
    b.subscribe(checkSubscribe({ scope: ['device'] }), () => void (reached = true))
    expect(b.publish({ type: 'y', scope: 'device' })).toBe(2)
    expect(reached).toBe(true)
  })

  it('network scopes go to the network side, device scope never; a failing network side loses only the event', () => {
    const b = bus({ s: true })
    const sent: BusEvent[] = []
    b.attachNetwork({ publish: (e) => void sent.push(e), stats: () => ({ unsent: {}, dropped: {} }) })
    b.publish({ type: 'a', scope: 'device' })
    b.publish({ type: 'b', scope: 'account' })
    b.publish({ type: 'c', scope: 'space', spaceId: 's' })
    expect(sent.map((e) => e.type)).toEqual(['b', 'c'])
    b.attachNetwork({
      publish: () => {
        throw new Error('down')
      },
      stats: () => ({ unsent: {}, dropped: {} }),
    })
    expect(b.publish({ type: 'd', scope: 'account' })).toBe(0)
  })

  it('space scope needs full membership, for publishers and subscribers alike', () => {
    const b = bus({ full: true, guest: false })
    expect(() => b.publish({ type: 'a', scope: 'space', spaceId: 'guest' })).toThrow(expect.objectContaining({ code: 'events.no_read_key' }))
    expect(() => b.subscribe(checkSubscribe({ spaceId: ['guest'] }), () => undefined)).toThrow(expect.objectContaining({ code: 'events.no_read_key' }))
    expect(() => b.publish({ type: 'a', scope: 'space', spaceId: 'unknown' })).toThrow(expect.objectContaining({ code: 'space.not_found' }))
    expect(b.publish({ type: 'a', scope: 'space', spaceId: 'full' })).toBe(0)
  })

  it('remote events carry the signer as sender; self only for this account', () => {
    const b = bus()
    const got: DeliveredEvent[] = []
    b.subscribe(checkSubscribe({}), (e) => void got.push(e))
    b.deliverRemote({ type: 'a', scope: 'account' }, ME)
    b.deliverRemote({ type: 'a', scope: 'account' }, 'Other')
    expect(got.map((e) => e.sender)).toEqual([
      { identity: ME, self: true },
      { identity: 'Other', self: false },
    ])
  })

  it('the pattern budget counts distinct filters per space and frees them when the last subscriber leaves', () => {
    const b = bus({ s: true })
    const subs = Array.from({ length: 100 }, (_, i) => b.subscribe(checkSubscribe({ spaceId: ['s'], type: [`t${i}`] }), () => undefined))
    expect(() => b.subscribe(checkSubscribe({ spaceId: ['s'], type: ['more'] }), () => undefined)).toThrow(expect.objectContaining({ code: 'events.too_many_patterns' }))
    // A filter naming no space has its own budget; a shared filter costs nothing.
    b.subscribe(checkSubscribe({ type: ['more'] }), () => undefined)
    const again = b.subscribe(checkSubscribe({ spaceId: ['s'], type: ['t0'] }), () => undefined)
    subs[0].close()
    expect(b.patternsOf('s')).toBe(100)
    again.close()
    again.close()
    expect(b.patternsOf('s')).toBe(99)
    b.subscribe(checkSubscribe({ spaceId: ['s'], type: ['more'] }), () => undefined)
  })
})

describe('self-owned namespaces', () => {
  it("editor.cursor maps to the publisher's token; only that account may publish below it", () => {
    const t = ownerToken(ME)
    expect(t).toMatch(/^[0-9a-f]{32}$/)
    expect(mapOwnedType('editor.cursor', ME)).toBe(`editor.cursor.${t}`)
    expect(mapOwnedType(`editor.cursor.${t}.x`, ME)).toBe(`editor.cursor.${t}.x`)
    expect(() => mapOwnedType(`editor.cursor.${ownerToken('Other')}`, ME)).toThrow(expect.objectContaining({ code: 'events.topic_not_owned' }))
    expect(ownsType(`editor.cursor.${t}`, 'Other')).toBe(false)
    expect(ownsType('editor.cursorx', 'Other')).toBe(true)
  })
})

describe('published processes', () => {
  it('are bounded, and stop listing once idle past processIdleMs', async () => {
    const { PublishedProcesses } = await import('../../sync/modules/events/processes.ts')
    const { EVENTS } = await import('../../sync/core/events-limits.ts')
    let now = 0
    const p = new PublishedProcesses(() => now)
    const ev = (target: string, type = 'process.started'): DeliveredEvent => ({ type, scope: 'device', target, sender: { identity: ME, self: true } })
    for (let i = 0; i < EVENTS.maxTrackedProcesses + 10; i++) p.observe(ev(`p${i}`))
    expect(p.list()).toHaveLength(EVENTS.maxTrackedProcesses)
    expect(p.live('p0')).toEqual([])
    now = EVENTS.processIdleMs / 2
    p.observe(ev('p20', 'process.progress'))
    now = EVENTS.processIdleMs + 1
    expect(p.list().map((x) => x.id)).toEqual(['p20'])
    // A process event without a target, or not a process type, tracks nothing.
    p.observe({ type: 'process.started', scope: 'device', sender: { identity: ME, self: true } })
    p.observe(ev('x', 'processes.started'))
    expect(p.list()).toHaveLength(1)
  })
})
