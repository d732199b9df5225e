import { SpaceReplica } from '../../sync/replica/space-replica.ts'
import { SyncSession, type ExchangeEnd, type Outgoing } from '../../sync/protocol/session.ts'
import type { KeyPair } from '../../sync/crypto/keys.ts'
import { deps, keyFor, seededEnv } from '../helpers.ts'

export interface Node {
  name: string
  replica: SpaceReplica
  session: SyncSession
  key: KeyPair
}

export interface Frame {
  from: string
  to: string
  bytes: Uint8Array
}

/** A peer: account `account`'s key, a replica of `spaceId` (or a new space), a session. */
export async function node(name: string, account: number, spaceOrReplica?: string | SpaceReplica): Promise<Node> {
  const key = keyFor(account)
  const d = await deps(account * 7 + name.length)
  const replica = spaceOrReplica instanceof SpaceReplica ? spaceOrReplica : spaceOrReplica ? await SpaceReplica.open(d, spaceOrReplica, key) : await SpaceReplica.create(d, key)
  const session = new SyncSession({
    host: { space: (id) => (id === replica.spaceId ? replica : undefined) },
    key,
    peerId: name,
    crypto: d.crypto,
    env: seededEnv(account * 13 + 5),
  })
  return { name, replica, session, key }
}

/**
 * Delivers frames in FIFO order until nothing is left (or `max` frames), returning every frame
 * delivered. `tap` may drop or rewrite a frame (return undefined to drop).
 */
export async function pump(nodes: Node[], queue: Frame[], opts: { max?: number; tap?: (f: Frame) => Frame | undefined } = {}): Promise<Frame[]> {
  const byName = new Map(nodes.map((n) => [n.name, n]))
  const seen: Frame[] = []
  while (queue.length && seen.length < (opts.max ?? 10_000)) {
    const next = queue.shift()!
    const f = opts.tap ? opts.tap(next) : next
    if (!f) continue
    seen.push(f)
    const to = byName.get(f.to)
    if (!to) continue
    const out = await to.session.handle(f.from, f.bytes)
    const from = f.to
    queue.push(...out.map((o: Outgoing) => ({ from, to: o.to, bytes: o.bytes })))
  }
  return seen
}

export const frames = (from: Node, out: Outgoing[]): Frame[] => out.map((o) => ({ from: from.name, to: o.to, bytes: o.bytes }))

/** Brings a link up: both sides challenge, both answer. */
export async function link(a: Node, b: Node) {
  await pump([a, b], [...frames(a, a.session.peerUp(b.name)), ...frames(b, b.session.peerUp(a.name))])
}

/** Opens an exchange from `a` to `b` about a's space and runs it to the end. */
export async function exchange(a: Node, b: Node, opts: Parameters<typeof pump>[2] = {}) {
  let end: ExchangeEnd | undefined
  const off = a.session.events.on('exchangeEnd', (e) => (end = e))
  const opened = await a.session.open(b.name, a.replica.spaceId)
  const seen = await pump([a, b], frames(a, opened.out), opts)
  off()
  return { end, seen, opened }
}

export function headsOf(r: SpaceReplica): string {
  return [r.spaceId, ...r.treeIds()].map((t) => `${t}:${r.heads(t).join(',')}`).join(';')
}
