/**
 * Chat benchmark (issue 14): real daemons of two accounts, each its own process, sharing a space
 * whose general chat holds CHAT_MESSAGES messages written by the other account
 * (`scripts/netns-run.sh npm run bench -- --json --only chat`; outside the namespace mDNS
 * stays off and the daemons are introduced through `POST /v1/peers`). Every figure with a target
 * also comes as a ratio against a baseline timed in the same run, on the same daemon.
 *
 * - windowOpenP50Ms: a live window of 50 (`{S}/query/subscribe`, sort `-_ver.id`, limit 50)
 *   from the request until its `snapshot` frame has arrived (target <= 10 ms). Baseline: the
 *   same body through `POST {S}/query`.
 * - firstUnreadP50Ms: `{unread: true}`, sort `_ver.id`, limit 1, after reading up to 90% of the
 *   chat, so the answer sits near the end (target <= 5 ms). Baseline: the same answer asked of the
 *   synced index (`_ver.id` greater than the last read message).
 * - sendToAddedP50Ms: from the sender's `POST {O}/chat/messages` until the other daemon's open
 *   window frames the message as `added` (target <= 300 ms). Baseline: the sender's own window on
 *   its own daemon, for the same message.
 * - fanout: the event bus's one publish to 1,000 local subscribers, p99 against a raw `res.write`
 *   loop (target <= 2x), from bench/events.ts.
 */
import { addPeer, Fleet, inviteAndAccept, S, type Account } from '../test/e2e/accounts.ts'
import { ok } from '../test/e2e/daemons.ts'
import { benchEvents } from './events.ts'

const progress = (m: string) => process.stderr.write(`[bench chat] ${m}\n`)
const MESSAGES = Number(process.env.BENCH_CHAT_MESSAGES ?? 10_000)
const SAMPLES = Number(process.env.BENCH_CHAT_SAMPLES ?? 40)
const SEND_CONCURRENCY = 8
const IN_NETNS = process.env.NETNS_RUN_INSIDE === '1'
const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b)
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]
}
const r3 = (x: number) => Math.round(x * 1000) / 1000
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

async function timed(fn: () => Promise<unknown>): Promise<number> {
  const t0 = performance.now()
  await fn()
  return performance.now() - t0
}

/** An SSE stream read frame by frame: `next(pred)` resolves at the first frame `pred` accepts. */
async function openStream(url: string, body: unknown) {
  const ctrl = new AbortController()
  const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body), signal: ctrl.signal })
  if (res.status !== 200) throw new Error(`subscribe -> ${res.status} ${await res.text()}`)
  const reader = res.body!.getReader()
  const decoder = new TextDecoder()
  let buf = ''
  const waiters: Array<{ pred: (event: string, data: any) => boolean; resolve: (t: number) => void }> = []
  void (async () => {
    for (;;) {
      const { value, done } = await reader.read().catch(() => ({ value: undefined, done: true }))
      if (done) return
      buf += decoder.decode(value, { stream: true })
      let at: number
      while ((at = buf.indexOf('\n\n')) >= 0) {
        const frame = buf.slice(0, at)
        buf = buf.slice(at + 2)
        const event = /^event: (.*)$/m.exec(frame)?.[1] ?? ''
        const raw = /^data: (.*)$/m.exec(frame)?.[1]
        const data = raw ? JSON.parse(raw) : undefined
        const now = performance.now()
        for (let i = waiters.length - 1; i >= 0; i--) if (waiters[i].pred(event, data)) waiters.splice(i, 1)[0].resolve(now)
      }
    }
  })()
  return {
    next: (pred: (event: string, data: any) => boolean) => new Promise<number>((resolve) => waiters.push({ pred, resolve })),
    close: () => ctrl.abort(),
  }
}

const addedId = (id: string) => (event: string, data: any) => event === 'changes' && Array.isArray(data) && data.some((c: any) => c.added?.some((r: any) => r.id === id))

/** Sends `n` messages from `a`, a few at a time; their ids in send order. */
async function sendMany(a: Account, spaceId: string, chat: string, n: number): Promise<string[]> {
  const ids: string[] = new Array(n)
  let next = 0
  const worker = async () => {
    for (let i = next++; i < n; i = next++) ids[i] = (await ok(a.d, 'POST', `${S(spaceId)}/objects/${chat}/chat/messages`, { text: `message ${i} from ${a.name}` })).recordIds[0]
    return undefined
  }
  await Promise.all(Array.from({ length: SEND_CONCURRENCY }, worker))
  return ids
}

const held = async (a: Account, spaceId: string, chat: string) =>
  (await ok(a.d, 'POST', `${S(spaceId)}/query`, { objectId: chat, dataset: 'chat_messages', limit: 0, includeTotal: true })).total as number

interface ChatFixture {
  alice: Account
  bob: Account
  spaceId: string
  chat: string
}

/** Both accounts set the general chat up, as each daemon's user would before using it. */
async function openChatPair(fleet: Fleet): Promise<ChatFixture> {
  progress(`two daemons (mDNS ${IN_NETNS ? 'on' : 'off: introduced through POST /v1/peers'})`)
  const [alice, bob] = await Promise.all(['alice', 'bob'].map((n) => fleet.account(n, { mdns: IN_NETNS })))
  if (!IN_NETNS) await addPeer(bob, alice)
  const space = await ok(alice.d, 'POST', '/v1/spaces', { name: 'Bench chat' })
  const setup = await ok(alice.d, 'POST', '/v1/catalog/general-chat/setup', { spaceId: space.id })
  const chat: string = setup.bundles.find((b: any) => b.id === 'system:general-chat/v1').bundle.rootId
  await inviteAndAccept(alice, space.id, bob, 'writer')
  await ok(bob.d, 'POST', '/v1/catalog/general-chat/setup', { spaceId: space.id })
  return { alice, bob, spaceId: space.id, chat }
}

/** Bob sends MESSAGES messages; returns the send time, once alice holds them all. */
async function fillChat({ alice, bob, spaceId, chat }: ChatFixture): Promise<number> {
  progress(`bob sends ${MESSAGES} messages`)
  const t0 = performance.now()
  await sendMany(bob, spaceId, chat, MESSAGES)
  const sendMs = performance.now() - t0
  while ((await held(alice, spaceId, chat)) < MESSAGES) await sleep(200)
  progress(`alice holds them all ${Math.round(performance.now() - t0)} ms after the first send`)
  return sendMs
}

/** Alice reads up to 90% of the chat (in _ver.id order, which is bob's send order only roughly). */
async function readMostOfChat({ alice, spaceId, chat }: ChatFixture): Promise<any> {
  const byVer = (await ok(alice.d, 'POST', `${S(spaceId)}/query`, { objectId: chat, dataset: 'chat_messages', sort: ['_ver.id'], limit: MESSAGES, projection: { _ver: 1 } }))
    .records as any[]
  const lastRead = byVer[Math.floor(MESSAGES * 0.9) - 1]
  await ok(alice.d, 'POST', `${S(spaceId)}/objects/${chat}/chat/messages/${lastRead.id}/read`)
  return lastRead
}

const windowBodyOf = (chat: string) => ({ objectId: chat, dataset: 'chat_messages', sort: ['-_ver.id'], limit: 50 })

/** Window open and first unread, each beside its baseline; checks first the two answers agree. */
async function windowAndUnread({ alice, spaceId, chat }: ChatFixture, lastRead: any) {
  const Q = `${alice.d.url}${S(spaceId)}`
  const windowBody = windowBodyOf(chat)
  progress('window open and first unread')
  const windowMs: number[] = []
  const queryMs: number[] = []
  const unreadMs: number[] = []
  const indexMs: number[] = []
  const unreadBody = { objectId: chat, dataset: 'chat_messages', filter: { unread: true }, sort: ['_ver.id'], limit: 1 }
  const indexBody = { objectId: chat, dataset: 'chat_messages', filter: { '_ver.id': { $gt: lastRead._ver.id } }, sort: ['_ver.id'], limit: 1 }
  const first = (await ok(alice.d, 'POST', `${S(spaceId)}/query`, unreadBody)).records[0]
  const same = (await ok(alice.d, 'POST', `${S(spaceId)}/query`, indexBody)).records[0]
  if (!first || first.id !== same?.id) throw new Error(`first unread ${first?.id} is not the message after the last read ${same?.id}`)
  // Alternating, so drift in the machine's load falls on both sides alike; the first pair warms up.
  for (let i = 0; i <= SAMPLES; i++) {
    const w = await timed(async () => {
      const s = await openStream(`${Q}/query/subscribe`, windowBody)
      await s.next((e) => e === 'snapshot')
      s.close()
    })
    const q = await timed(() => ok(alice.d, 'POST', `${S(spaceId)}/query`, windowBody))
    const u = await timed(() => ok(alice.d, 'POST', `${S(spaceId)}/query`, unreadBody))
    const x = await timed(() => ok(alice.d, 'POST', `${S(spaceId)}/query`, indexBody))
    if (i > 0) {
      windowMs.push(w)
      queryMs.push(q)
      unreadMs.push(u)
      indexMs.push(x)
    }
  }
  return { windowMs, queryMs, unreadMs, indexMs }
}

/** Bob sends; alice's window (over the LAN) and bob's own window (the baseline) both time the `added`. */
async function sendToAdded({ alice, bob, spaceId, chat }: ChatFixture) {
  const windowBody = windowBodyOf(chat)
  progress('send to added on the other daemon')
  const remote = await openStream(`${alice.d.url}${S(spaceId)}/query/subscribe`, windowBody)
  const local = await openStream(`${bob.d.url}${S(spaceId)}/query/subscribe`, windowBody)
  const lanMs: number[] = []
  const localMs: number[] = []
  for (let i = 0; i <= SAMPLES; i++) {
    const sent = performance.now()
    const id = (await ok(bob.d, 'POST', `${S(spaceId)}/objects/${chat}/chat/messages`, { text: `timed ${i}` })).recordIds[0]
    const [there, here] = await Promise.all([remote.next(addedId(id)), local.next(addedId(id))])
    if (i > 0) {
      lanMs.push(there - sent)
      localMs.push(here - sent)
    }
    await sleep(50)
  }
  remote.close()
  local.close()
  return { lanMs, localMs }
}

function chatReport(sendMs: number, w: Awaited<ReturnType<typeof windowAndUnread>>, s: Awaited<ReturnType<typeof sendToAdded>>) {
  const { windowMs, queryMs, unreadMs, indexMs } = w
  const { lanMs, localMs } = s
  return {
    messages: MESSAGES,
    samples: SAMPLES,
    mdns: IN_NETNS,
    sendPerSec: Math.round(MESSAGES / (sendMs / 1000)),
    windowOpenP50Ms: r3(pct(windowMs, 50)),
    windowOpenP99Ms: r3(pct(windowMs, 99)),
    windowQueryP50Ms: r3(pct(queryMs, 50)),
    windowOpenVsQuery: r3(pct(windowMs, 50) / pct(queryMs, 50)),
    windowOpenTargetMs: 10,
    firstUnreadP50Ms: r3(pct(unreadMs, 50)),
    firstUnreadP99Ms: r3(pct(unreadMs, 99)),
    afterLastReadP50Ms: r3(pct(indexMs, 50)),
    firstUnreadVsIndex: r3(pct(unreadMs, 50) / pct(indexMs, 50)),
    firstUnreadTargetMs: 5,
    sendToAddedP50Ms: r3(pct(lanMs, 50)),
    sendToAddedP99Ms: r3(pct(lanMs, 99)),
    sendToOwnAddedP50Ms: r3(pct(localMs, 50)),
    sendToAddedVsOwn: r3(pct(lanMs, 50) / pct(localMs, 50)),
    sendToAddedTargetMs: 300,
  }
}

export async function benchChat(): Promise<Record<string, unknown>> {
  const fleet = new Fleet()
  try {
    const fx = await openChatPair(fleet)
    const sendMs = await fillChat(fx)
    const lastRead = await readMostOfChat(fx)
    const w = await windowAndUnread(fx, lastRead)
    const s = await sendToAdded(fx)
    const out = chatReport(sendMs, w, s)
    progress(JSON.stringify(out))
    // The daemons go before the event bus bench, so they do not load the machine it measures.
    await fleet.close()
    progress('event bus fan-out')
    const events = await benchEvents()
    return { ...out, ...events }
  } finally {
    await fleet.close()
  }
}
