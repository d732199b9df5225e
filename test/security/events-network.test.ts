import { beforeAll, describe, expect, it } from 'vitest'
import { encodeCanonical, decodeCanonical } from '../../sync/core/encoding.ts'
import { EVENTS } from '../../sync/core/events-limits.ts'
import { SpaceReplica } from '../../sync/replica/space-replica.ts'
import { EventsReceiver, type EventsReceiverHost } from '../../sync/protocol/events-receiver.ts'
import { encodeEventFrame, type EventBody } from '../../sync/protocol/events-wire.ts'
import { ownerToken, ownsType } from '../../sync/modules/events/namespace.ts'
import { defaultCryptoProvider, type CryptoProvider } from '../../sync/crypto/provider.ts'
import type { Env } from '../../sync/core/env.ts'
import { deps, idFor, keyFor, seededEnv } from '../helpers.ts'

/**
 * Hostile peers on `/svc/events/1.0.0` (docs/security.md "Event bus"): what the receiving step
 * (sync/protocol/events-receiver.ts) drops, with real replicas, keys and signatures. One
 * `describe` per attack.
 */
const OWNER = 1
const WRITER = 2
const GUEST = 3
const STRANGER = 4
const OTHER_SPACE_OWNER = 5

let owner: SpaceReplica
let other: SpaceReplica
let crypto: CryptoProvider
let clock = 1_800_000_000_000
const env: Env = { ...seededEnv(9), now: () => clock }

beforeAll(async () => {
  crypto = await defaultCryptoProvider()
  owner = await SpaceReplica.create(await deps(OWNER), keyFor(OWNER))
  await owner.addMember(idFor(WRITER), 'writer')
  await owner.addMember(idFor(GUEST), 'guest')
  other = await SpaceReplica.create(await deps(OTHER_SPACE_OWNER), keyFor(OTHER_SPACE_OWNER))
})

/** We are the owner's daemon: we hold `owner` (and a tech space named `tech`, not held here). */
function receiver(accept: EventsReceiverHost['accept'] = (b, _s, signer) => ownsType(b.type, signer)) {
  return new EventsReceiver({ accountId: idFor(OWNER), techSpaceId: 'tech', replica: (id) => (id === owner.spaceId ? owner : undefined), accept }, crypto, () => clock)
}

const keyOf = (r: SpaceReplica) => {
  const id = r.acl.current().readKeyId!
  return { readKeyId: id, readKey: r.keyring.get(id)! }
}

/** A frame signed by member `n` (a real signature by its account key), sealed under `r`'s current key. */
const frame = (n: number, body: EventBody = { type: 'ui.open_object', target: 'o1' }, r: SpaceReplica = owner, scope: 'space' | 'account' = 'space') =>
  encodeEventFrame({ scope, spaceId: r.spaceId, ...keyOf(r), body, key: keyFor(n), crypto, env })

describe('attack: a stranger or a guest publishes into a space', () => {
  it('only full members are delivered; guests and non-members are dropped as not_member', async () => {
    const rx = receiver()
    expect(await rx.receive('p-writer', idFor(WRITER), await frame(WRITER))).toMatchObject({
      identity: idFor(WRITER),
      spaceId: owner.spaceId,
      body: { type: 'ui.open_object', target: 'o1' },
    })
    expect(await rx.receive('p-guest', idFor(GUEST), await frame(GUEST))).toBe('not_member')
    expect(await rx.receive('p-stranger', idFor(STRANGER), await frame(STRANGER))).toBe('not_member')
  })
})

describe("attack: forging another member's event", () => {
  it("a frame whose signature is not the named signer's is dropped as bad_signature", async () => {
    const real = decodeCanonical<[Uint8Array, string, Uint8Array]>(await frame(STRANGER))
    // The stranger claims to be the writer, on a link where it proved the writer's account (the worst case).
    const forged = encodeCanonical([real[0], idFor(WRITER), real[2]])
    expect(await receiver().receive('p', idFor(WRITER), forged)).toBe('bad_signature')
  })

  it("a member relaying (replaying) another member's signed event is dropped as signer_mismatch", async () => {
    const writers = await frame(WRITER)
    expect(await receiver().receive('p-stranger', idFor(STRANGER), writers)).toBe('signer_mismatch')
  })

  it("a presence type in another account's namespace is refused, in its own delivered", async () => {
    const rx = receiver()
    expect(await rx.receive('p', idFor(WRITER), await frame(WRITER, { type: `editor.cursor.${ownerToken(idFor(OWNER))}` }))).toBe('refused')
    expect(await rx.receive('p', idFor(WRITER), await frame(WRITER, { type: `editor.cursor.${ownerToken(idFor(WRITER))}` }))).toMatchObject({ identity: idFor(WRITER) })
  })

  it('an account event from another account is dropped, even sealed under a key we hold', async () => {
    const rx = new EventsReceiver(
      { accountId: idFor(OWNER), techSpaceId: owner.spaceId, replica: (id) => (id === owner.spaceId ? owner : undefined), accept: () => true },
      crypto,
      () => clock,
    )
    expect(await rx.receive('p', idFor(WRITER), await frame(WRITER, { type: 'a' }, owner, 'account'))).toBe('not_member')
    expect(await rx.receive('p', idFor(OWNER), await frame(OWNER, { type: 'a' }, owner, 'account'))).toMatchObject({ scope: 'account' })
    // A space event naming the tech space is not one.
    expect(await rx.receive('p', idFor(OWNER), await frame(OWNER, { type: 'a' }, owner, 'space'))).toBe('unknown_space')
  })
})

describe('attack: replaying an event', () => {
  it('the same frame is delivered once; an old one is dropped as stale', async () => {
    const rx = receiver()
    const f = await frame(WRITER)
    expect(typeof (await rx.receive('p', idFor(WRITER), f))).toBe('object')
    expect(await rx.receive('p', idFor(WRITER), f)).toBe('duplicate')
    const old = await frame(WRITER)
    clock += EVENTS.maxClockSkewMs + 1
    expect(await rx.receive('p2', idFor(WRITER), old)).toBe('stale')
  })

  it('the dedupe table stays bounded under a flood of valid ids', async () => {
    const bound = 64
    const rx = new EventsReceiver({ accountId: idFor(OWNER), techSpaceId: 'tech', replica: () => owner, accept: () => true }, crypto, () => clock, undefined, bound)
    const first = await frame(WRITER)
    // Many peers (each its own bucket), each with fresh frames: the table never passes its bound.
    for (let i = 0; i < bound + 50; i++) expect(typeof (await rx.receive(`p${i}`, idFor(WRITER), i === 0 ? first : await frame(WRITER)))).toBe('object')
    expect((rx as unknown as { seen: { size: number } }).seen.size).toBe(bound)
    // The evicted oldest id could come back once: still one delivery per id while remembered.
    expect(typeof (await rx.receive('late', idFor(WRITER), first))).toBe('object')
  }, 60_000)
})

describe('attack: flooding events', () => {
  it('one peer gets a burst of 60, then 30 per second; nothing of the rest is even decoded', async () => {
    const rx = receiver()
    const f = await frame(WRITER)
    const results = []
    for (let i = 0; i < EVENTS.publishBurst + 5; i++) results.push(await rx.receive('flooder', idFor(WRITER), i === 0 ? f : new Uint8Array([0xff])))
    expect(results.filter((r) => r === 'rate')).toHaveLength(5)
    expect(results.slice(1, EVENTS.publishBurst).every((r) => r === 'malformed')).toBe(true)
    clock += 1001
    let ok = 0
    for (let i = 0; i < 40; i++) if ((await rx.receive('flooder', idFor(WRITER), new Uint8Array([0xff]))) !== 'rate') ok++
    expect(ok).toBe(30)
    // Another peer has its own bucket.
    expect(await rx.receive('other', idFor(WRITER), new Uint8Array([0xff]))).toBe('malformed')
  })
})

describe('attack: malformed and unopenable frames', () => {
  it('garbage, a wrong shape, a frame over the size bound, an unknown key and a tampered seal are all dropped', async () => {
    const rx = receiver()
    expect(await rx.receive('a', idFor(WRITER), new Uint8Array(0))).toBe('malformed')
    expect(await rx.receive('b', idFor(WRITER), encodeCanonical([1, 2, 3]))).toBe('malformed')
    expect(await rx.receive('c', idFor(WRITER), new Uint8Array(EVENTS.maxFrameBytes + 1))).toBe('malformed')
    // A link that proved no account is refused before anything is decoded.
    expect(await rx.receive('d', undefined, await frame(WRITER))).toBe('unauthenticated')
    // A space we do not hold (the other space's owner is nobody here).
    expect(await rx.receive('e', idFor(OTHER_SPACE_OWNER), await frame(OTHER_SPACE_OWNER, { type: 'x' }, other))).toBe('unknown_space')
    // A key id we cannot reach: signed over the right space, sealed under another space's key.
    const wrongKey = await encodeEventFrame({ scope: 'space', spaceId: owner.spaceId, ...keyOf(other), body: { type: 'x' }, key: keyFor(WRITER), crypto, env })
    expect(await rx.receive('f', idFor(WRITER), wrongKey)).toBe('no_key')
    // A seal that does not open under the named key (re-signed, so the signature holds).
    const { readKeyId } = keyOf(owner)
    const bogus = await encodeEventFrame({
      scope: 'space',
      spaceId: owner.spaceId,
      readKeyId,
      readKey: new Uint8Array(32).fill(1),
      body: { type: 'x' },
      key: keyFor(WRITER),
      crypto,
      env,
    })
    expect(await rx.receive('g', idFor(WRITER), bogus)).toBe('bad_payload')
    expect(rx.drops).toMatchObject({ malformed: 3, unauthenticated: 1, unknown_space: 1, no_key: 1, bad_payload: 1 })
  })

  it("a body a local publisher could not send (bad grammar, over the budget) is refused by the daemon's rule", async () => {
    const { dataBytes, validType, withinTopicBudget } = await import('../../sync/modules/events/envelope.ts')
    const rx = receiver((b) => validType(b.type) && withinTopicBudget(b.type, b.target) && dataBytes(b.data) <= EVENTS.maxDataBytes)
    expect(await rx.receive('a', idFor(WRITER), await frame(WRITER, { type: 'Bad Type' }))).toBe('refused')
    expect(await rx.receive('b', idFor(WRITER), await frame(WRITER, { type: Array(17).fill('s').join('.') }))).toBe('refused')
  })
})
