/**
 * Live event latency through the hub (issue 36): two real `svc serve` daemons of two accounts
 * sharing a space, mDNS off and never given each other's address, and a real `svc hub`; A
 * publishes space events (`POST /v1/events`) one after another and B's event stream
 * (`GET /v1/events/subscribe`) receives them through the hub. Latency is publish to arrival on
 * B's SSE stream. Target: p99 <= 100 ms on loopback. Every figure is wall time of real processes
 * on one machine (the hub's relay adds its judge and one more hop to a direct link).
 */
import { Fleet, S, type Account } from '../test/e2e/accounts.ts'
import { api, ok, until } from '../test/e2e/daemons.ts'
import { HubFleet } from '../test/e2e/hub-process.ts'

const EVENTS = Number(process.env.BENCH_HUB_LIVE_EVENTS ?? 200)
const progress = (m: string) => process.stderr.write(`[bench hub live] ${m}\n`)
const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((xs.length * p) / 100))]

async function share(alice: Account, bob: Account): Promise<string> {
  const space = await ok(alice.d, 'POST', '/v1/spaces', { name: 'Live' })
  await ok(alice.d, 'POST', `${S(space.id)}/acl/add`, { identities: [bob.identity], permission: 'writer' })
  await until('bob is offered the space', async () => (await api(bob.d, 'GET', S(space.id))).json?.status === 'invite_pending', 60_000, 100)
  await ok(bob.d, 'POST', `${S(space.id)}/invite/accept`)
  await until('bob holds the space', async () => (await api(bob.d, 'GET', S(space.id))).json?.status === 'active', 60_000, 100)
  return space.id as string
}

/** B's event stream: arrival times by the `i` each event carries. */
async function stream(url: string) {
  const ctrl = new AbortController()
  const res = await fetch(url, { signal: ctrl.signal })
  const reader = res.body!.getReader()
  const arrived = new Map<number, number>()
  let text = ''
  let ready = false
  void (async () => {
    for (;;) {
      const { value, done } = await reader.read().catch(() => ({ value: undefined, done: true }))
      if (done) return
      text += new TextDecoder().decode(value)
      let at: number
      while ((at = text.indexOf('\n\n')) >= 0) {
        const frame = text.slice(0, at)
        text = text.slice(at + 2)
        if (frame.startsWith('event: ready')) ready = true
        const data = /^event: event\ndata: (.*)$/m.exec(frame)?.[1]
        if (data) arrived.set((JSON.parse(data) as { data: { i: number } }).data.i, performance.now())
      }
    }
  })()
  await until('the stream is ready', async () => ready, 10_000, 10)
  return { arrived, close: () => ctrl.abort() }
}

export async function benchHubLive(): Promise<Record<string, unknown>> {
  const fleet = new Fleet()
  const hubs = new HubFleet()
  try {
    progress('two daemons and a hub')
    const [alice, bob] = await Promise.all(['alice', 'bob'].map((n) => fleet.account(n, { mdns: false })))
    const hub = await hubs.start(['--allow', `${alice.identity},${bob.identity}`])
    await ok(alice.d, 'POST', '/v1/hubs', { multiaddr: hub.addr })
    await ok(bob.d, 'POST', '/v1/hubs', { multiaddr: hub.addr })
    const spaceId = await share(alice, bob)
    const s = await stream(`${bob.d.url}/v1/events/subscribe?scope=space&spaceId=${encodeURIComponent(spaceId)}&type=bench.*`)
    // Warm up until one lands (links may still be coming up), then time EVENTS events, 20 ms apart
    // (the bus's per-peer rate is 30/s after a burst of 60).
    await until(
      'a first event lands',
      async () => {
        await ok(alice.d, 'POST', '/v1/events', { type: 'bench.ping', scope: 'space', spaceId, data: { i: -1 } })
        return until('it lands', async () => s.arrived.has(-1), 1_000, 5).catch(() => false)
      },
      30_000,
      0,
    )
    progress(`${EVENTS} events`)
    const sent = new Map<number, number>()
    for (let i = 0; i < EVENTS; i++) {
      sent.set(i, performance.now())
      await ok(alice.d, 'POST', '/v1/events', { type: 'bench.ping', scope: 'space', spaceId, data: { i } })
      await new Promise((r) => setTimeout(r, 40))
    }
    await until('the last events land', async () => s.arrived.size >= EVENTS + 1, 10_000, 20).catch(() => undefined)
    s.close()
    const lat = [...sent].filter(([i]) => s.arrived.has(i)).map(([i, t]) => s.arrived.get(i)! - t)
    const p99 = Math.round(pct(lat, 99) * 10) / 10
    return {
      events: EVENTS,
      delivered: lat.length,
      p50Ms: Math.round(pct(lat, 50) * 10) / 10,
      p99Ms: p99,
      maxMs: Math.round(Math.max(...lat) * 10) / 10,
      target: { p99Ms: 100 },
      met: p99 <= 100 && lat.length === EVENTS,
    }
  } finally {
    hubs.close()
    await fleet.close()
  }
}
