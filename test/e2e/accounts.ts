/**
 * Daemons of different accounts (issue 13), and the sharing routes as a joiner, an owner and a
 * member call them (core.md "Spaces", "Invites and guest key", "One-to-one and direct-add",
 * docs/api.md "Members"). Every route a sharing test calls goes through here, so a test reads as
 * the flow it proves.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join as joinPath } from 'node:path'
import { accountKeyFromMnemonic, type KeyPair } from '../../sync/crypto/keys.ts'
import { api, ok, startDaemon, stopDaemon, until, type Daemon } from './daemons.ts'

export interface Account {
  name: string
  d: Daemon
  mnemonic: string
  /** The account id (its identity: base58 of the account public key). */
  identity: string
  key: KeyPair
}

/** Starts and stops daemons of fresh accounts; `close()` kills them all and removes their data. */
export class Fleet {
  private readonly dirs: string[] = []
  readonly daemons: Daemon[] = []

  /** A daemon with a fresh account of its own. */
  async account(name: string, opts: { mdns?: boolean } = {}): Promise<Account> {
    const dir = mkdtempSync(joinPath(tmpdir(), `svc-share-${name}-`))
    this.dirs.push(dir)
    const d = await startDaemon(dir, opts)
    this.daemons.push(d)
    const { accountId, mnemonic } = await ok(d, 'POST', '/v1/auth', {})
    return { name, d, mnemonic, identity: accountId, key: accountKeyFromMnemonic(mnemonic) }
  }

  async close() {
    for (const d of this.daemons) await stopDaemon(d, 'SIGKILL')
    for (const d of this.dirs) rmSync(d, { recursive: true, force: true })
  }
}

export const S = (spaceId: string) => `/v1/spaces/${encodeURIComponent(spaceId)}`

// ------------------------------------------------------------------ the network

/** The daemon's peer id and a loopback address to dial it at. */
export async function p2pAddress(a: Account): Promise<{ peerId: string; multiaddr: string }> {
  const p = await ok(a.d, 'GET', '/v1/debug/p2p')
  const listen = (p.listen as string[]).find((x) => x.includes('/127.0.0.1/')) ?? (p.listen as string[])[0]
  return { peerId: p.peerId, multiaddr: listen.includes('/p2p/') ? listen : `${listen}/p2p/${p.peerId}` }
}

/** Tells `a` to dial `b` (and keep redialling it): the only way they meet with mDNS off. */
export async function addPeer(a: Account, b: Account) {
  const { multiaddr } = await p2pAddress(b)
  return api(a.d, 'POST', '/v1/peers', { multiaddr })
}

/** Whether `a` has an open connection to `b`'s daemon. */
export async function connected(a: Account, b: Account): Promise<boolean> {
  const { peerId } = await p2pAddress(b)
  return (await ok(a.d, 'GET', '/v1/debug/p2p')).peers.some((p: any) => p.peerId === peerId)
}

// ------------------------------------------------------------------ invites and joining

/** Mints an invite (replacing any prior one); the token travels out of band. */
export async function invite(owner: Account, spaceId: string, permission: 'reader' | 'writer'): Promise<string> {
  return (await ok(owner.d, 'POST', `${S(spaceId)}/invites`, { permission })).inviteToken
}

/** The owner's guest key token (idempotent). */
export async function guestKey(owner: Account, spaceId: string): Promise<string> {
  return (await ok(owner.d, 'POST', `${S(spaceId)}/guest-key`)).inviteToken
}

export const join = (a: Account, inviteToken: string, name = a.name) => api(a.d, 'POST', '/v1/spaces/join', { inviteToken, metadata: { name } })

/** The member records `a` lists for a space (pending join requests included). */
export async function members(a: Account, spaceId: string): Promise<any[]> {
  return (await ok(a.d, 'GET', `${S(spaceId)}/members`)).members
}

export const memberOf = async (a: Account, spaceId: string, identity: string) => (await members(a, spaceId)).find((m) => m.identity === identity)

/** Waits until `owner` lists `joiner`'s join request as pending; returns its member record. */
export const pendingRequest = (owner: Account, spaceId: string, joiner: Account, ms = 60_000) =>
  until(
    `${owner.name} sees ${joiner.name}'s join request`,
    async () => {
      const m = await memberOf(owner, spaceId, joiner.identity)
      return m?.status === 'pending' ? m : undefined
    },
    ms,
    100,
  )

export const accept = (owner: Account, spaceId: string, joiner: Account) => ok(owner.d, 'POST', `${S(spaceId)}/acl/accept`, { identity: joiner.identity })

/** The joiner's own view of its membership (`GET {S}/members/me`). */
export const me = (a: Account, spaceId: string) => api(a.d, 'GET', `${S(spaceId)}/members/me`)

/** Waits until `a` lists the space as active (its join was accepted and its replica opened). */
export const active = (a: Account, spaceId: string, ms = 60_000) =>
  until(`${a.name} holds the space as active`, async () => (await ok(a.d, 'GET', S(spaceId))).status === 'active', ms, 100)

/** Removes a member: the owner's side rotates the read key to everyone who stays. */
export const removeMember = (owner: Account, spaceId: string, member: Account) => ok(owner.d, 'DELETE', `${S(spaceId)}/members/${encodeURIComponent(member.identity)}`)

/** Invite, join, request seen, accept, active on the joiner's side: the whole flow, timed. */
export async function inviteAndAccept(owner: Account, spaceId: string, joiner: Account, permission: 'reader' | 'writer' | 'guest') {
  const token = permission === 'guest' ? await guestKey(owner, spaceId) : await invite(owner, spaceId, permission)
  const j = await join(joiner, token)
  if (j.status !== 202) throw new Error(`join -> ${j.status} ${JSON.stringify(j.json)}`)
  // Guests are accepted automatically by the owner's device; others wait for the owner.
  if (permission !== 'guest') {
    await pendingRequest(owner, spaceId, joiner)
    await accept(owner, spaceId, joiner)
  }
  await active(joiner, spaceId)
  return j.json
}

// ------------------------------------------------------------------ content

/** Writes one record; returns the HTTP result (a non-writer gets 403 `space.read_only`). */
export const put = (a: Account, spaceId: string, objectId: string, dataset: string, id: string, value: unknown) =>
  api(a.d, 'POST', `${S(spaceId)}/modify`, { objectId, dataset, records: [{ id, ops: [{ type: '$set', path: 'v', value }] }] })

/** The ids of every record `a` holds in a dataset of an object (none when it cannot read it). */
export async function recordIds(a: Account, spaceId: string, objectId: string, dataset: string): Promise<string[]> {
  const r = await api(a.d, 'POST', `${S(spaceId)}/query`, { objectId, dataset, sort: ['id'], limit: 10_000 })
  return r.status === 200 ? r.json.records.map((x: any) => x.id) : []
}

export const holdsRecords = (a: Account, spaceId: string, objectId: string, dataset: string, ids: string[], ms = 60_000) =>
  until(
    `${a.name} holds ${ids.length} records of ${dataset}`,
    async () => {
      const have = new Set(await recordIds(a, spaceId, objectId, dataset))
      return ids.every((id) => have.has(id))
    },
    ms,
    100,
  )
