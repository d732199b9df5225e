/**
 * Issue 19, "How it is proven", end to end: real daemons of two accounts sharing a space over
 * mDNS (inside scripts/netns-run.sh only). A 50 MB file attached on A downloads on B byte
 * for byte, with a Range read from the middle before the full fetch; A turns durable once B
 * stores every block; offload on A then download on A refetches from B; B killed in the middle
 * of a transfer and restarted resumes without fetching the blocks it already stored.
 */
import { createHash, randomBytes } from 'node:crypto'
import { afterAll, describe, expect, it } from 'vitest'
import { Fleet, inviteAndAccept, S, type Account } from './accounts.ts'
import { IN_NETNS, ok, startDaemon, stopDaemon, until, type Daemon } from './daemons.ts'

const fleet = new Fleet()
afterAll(() => fleet.close())

const MB = 1024 * 1024
const sha = (b: Uint8Array) => createHash('sha256').update(b).digest('hex')

async function attach(d: Daemon, spaceId: string, objectId: string, bytes: Uint8Array, name: string): Promise<string> {
  const res = await fetch(`${d.url}${S(spaceId)}/objects/${objectId}/files?name=${name}`, {
    method: 'POST',
    headers: { 'content-type': 'application/octet-stream' },
    body: bytes as unknown as BodyInit,
  })
  const body = await res.json()
  if (res.status !== 201) throw new Error(`attach -> ${res.status} ${JSON.stringify(body)}`)
  return body.fileId
}

async function download(d: Daemon, spaceId: string, fileId: string, range?: string): Promise<{ status: number; bytes: Buffer; headers: Headers }> {
  const res = await fetch(`${d.url}${S(spaceId)}/files/${fileId}/content`, { headers: range ? { range } : {}, signal: AbortSignal.timeout(240_000) })
  return { status: res.status, bytes: Buffer.from(await res.arrayBuffer()), headers: res.headers }
}

const info = (a: Account, spaceId: string, fileId: string) => ok(a.d, 'GET', `${S(spaceId)}/files/${fileId}`)
const served = async (a: Account) => (await ok(a.d, 'GET', '/v1/files/exchange')).served?.blocks ?? 0

describe.runIf(IN_NETNS)('two accounts share files over mDNS', () => {
  it('a 50 MB file: Range from the middle, then byte-identical on the other account; durable after; offload refetches; a killed downloader resumes', async () => {
    const [alice, bob] = await Promise.all(['alice', 'bob'].map((n) => fleet.account(n)))
    const space = await ok(alice.d, 'POST', '/v1/spaces', { name: 'Files' })
    const { objectId } = await ok(alice.d, 'POST', `${S(space.id)}/objects`, {})
    await inviteAndAccept(alice, space.id, bob, 'writer')

    const bytes = randomBytes(50 * MB)
    const fileId = await attach(alice.d, space.id, objectId, bytes, 'big.bin')
    expect(await info(alice, space.id, fileId)).toMatchObject({ state: 'inflight', cached: true, blocks: 50 })

    // The record syncs like any record; the blocks stay on A until B asks.
    await until('bob holds the file record', async () => (await info(bob, space.id, fileId).catch(() => undefined)) ?? false, 120_000, 300)
    const mid = await download(bob.d, space.id, fileId, `bytes=${25 * MB + 12345}-${26 * MB + 999}`)
    expect(mid.status).toBe(206)
    expect(mid.headers.get('content-range')).toBe(`bytes ${25 * MB + 12345}-${26 * MB + 999}/${50 * MB}`)
    expect(sha(mid.bytes)).toBe(sha(bytes.subarray(25 * MB + 12345, 26 * MB + 1000)))
    const partial = await info(bob, space.id, fileId)
    expect(partial.cached).toBe(false)
    expect(partial.cachedBlocks).toBeGreaterThan(0)
    expect(partial.cachedBlocks).toBeLessThan(50)

    const whole = await download(bob.d, space.id, fileId)
    expect(whole.status).toBe(200)
    expect(whole.bytes.length).toBe(bytes.length)
    expect(sha(whole.bytes)).toBe(sha(bytes))
    expect(await info(bob, space.id, fileId)).toMatchObject({ cached: true, state: 'durable' })

    // A asks its peers in the background; B stores every block now.
    await until('alice turns durable', async () => (await info(alice, space.id, fileId)).state === 'durable', 120_000, 500)

    await ok(alice.d, 'POST', `${S(space.id)}/files/${fileId}/offload`)
    expect(await info(alice, space.id, fileId)).toMatchObject({ cached: false, cachedBlocks: 0 })
    const servedBefore = await served(bob)
    const back = await download(alice.d, space.id, fileId)
    expect(sha(back.bytes)).toBe(sha(bytes))
    expect((await served(bob)) - servedBefore).toBe(50)

    // A second file; B is killed while it pins it, then restarted.
    const second = randomBytes(50 * MB)
    const secondId = await attach(alice.d, space.id, objectId, second, 'second.bin')
    await until('bob holds the second record', async () => (await info(bob, space.id, secondId).catch(() => undefined)) ?? false, 120_000, 300)
    await ok(bob.d, 'POST', `${S(space.id)}/files/${secondId}/pin`)
    await until('bob stored a few blocks', async () => (await info(bob, space.id, secondId)).cachedBlocks >= 5, 120_000, 50)
    await stopDaemon(bob.d, 'SIGKILL')
    const bobDir = bob.d.dir
    bob.d = await startDaemon(bobDir)
    fleet.daemons.push(bob.d)
    await until('bob booted again', async () => (await ok(bob.d, 'GET', '/v1/health')).account !== '', 60_000)
    // Read before the counter: blocks B fetches in between count on both sides, so `after` below is at most 50 - kept.
    const kept = (await info(bob, space.id, secondId)).cachedBlocks
    expect(kept).toBeGreaterThanOrEqual(5)
    const servedStart = await served(alice)
    // The pin survived the restart: the background fetch finishes on its own.
    await until('bob finished the pinned file', async () => (await info(bob, space.id, secondId)).cached, 240_000, 500)
    const got = await download(bob.d, space.id, secondId)
    expect(sha(got.bytes)).toBe(sha(second))
    // After the restart A served only the blocks B had not stored.
    const after = (await served(alice)) - servedStart
    expect(after).toBeLessThanOrEqual(50 - kept)
  }, 600_000)
})
