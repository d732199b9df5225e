import { describe, expect, it } from 'vitest'
import { SpaceReplica } from '../../sync/replica/space-replica.ts'
import { encKeyIdOf, payloadKeyOf, pushKeysOf, spacePushKeyOf } from '../../sync/modules/push/keys.ts'
import { openPayload, sealPayload } from '../../sync/modules/push/seal.ts'
import { openEnvelope, sealEnvelope, truncateRunes, type PushPayload } from '../../sync/modules/push/payload.ts'
import { chatHash, groupIdOf, mentionTopics, sendTopics } from '../../sync/modules/push/topics.ts'
import { isTopic } from '../../sync/protocol/push-wire.ts'
import { PushReceiver } from '../../sync/modules/push/receiver.ts'
import { toBase64 } from '../../sync/core/base64.ts'
import { toHex, utf8 } from '../../sync/core/encoding.ts'
import { sha256 } from '../../sync/crypto/hash.ts'
import { deps, idFor, keyFor, pushAll, seededEnv } from '../helpers.ts'

const payload = (text: string): PushPayload => ({
  spaceId: 's',
  spaceUxType: 'data',
  spaceType: 'svc.space',
  senderId: idFor(1),
  type: 1,
  newMessage: { chatId: 'c', msgId: 'm', spaceName: 'S', chatName: 'C', senderName: 'A', text, hasAttachments: false, attachments: [] },
})

describe('push keys', () => {
  it('every member derives the same space push key; it survives rotations; the payload key rotates with the read key', async () => {
    const owner = await SpaceReplica.create(await deps(1), keyFor(1))
    await owner.addMember(idFor(2), 'writer')
    await owner.addMember(idFor(3), 'writer')
    const member = await SpaceReplica.open(await deps(2), owner.spaceId, keyFor(2))
    const removed = await SpaceReplica.open(await deps(3), owner.spaceId, keyFor(3))
    await pushAll(owner, member)
    await pushAll(owner, removed)
    const a = pushKeysOf(owner)!
    const b = pushKeysOf(member)!
    const c0 = pushKeysOf(removed)!
    expect(a.spaceKey).toBe(b.spaceKey)
    expect(a.encKeyId).toBe(b.encKeyId)
    expect(c0.encKeyId).toBe(a.encKeyId)
    expect(a.encKeyId).toBe(toHex(sha256(a.encKey)))

    await owner.removeMember(idFor(3))
    await pushAll(owner, member)
    await pushAll(owner, removed)
    const a2 = pushKeysOf(owner)!
    const b2 = pushKeysOf(member)!
    expect(a2.spaceKey).toBe(a.spaceKey)
    expect(a2.encKeyId).not.toBe(a.encKeyId)
    expect(b2.encKeyId).toBe(a2.encKeyId)
    // The removed member reaches no new payload key.
    const c2 = pushKeysOf(removed)
    expect(c2?.encKeyId).not.toBe(a2.encKeyId)
    const sealed = sealPayload(seededEnv(1), a2.encKey, utf8('after'))
    expect(() => openPayload(a.encKey, sealed)).toThrow()
  })

  it('derivations are one-way and domain-separated', () => {
    const k = new Uint8Array(32).fill(7)
    expect(toHex(payloadKeyOf(k))).not.toBe(toHex(k))
    expect(toHex(spacePushKeyOf(k).privateKey)).not.toBe(toHex(payloadKeyOf(k)))
    expect(encKeyIdOf(k)).toMatch(/^[0-9a-f]{64}$/)
  })
})

describe('payload sealing', () => {
  it('AES-256-GCM with a 12-byte nonce prefix opens with the key only; tampering fails', () => {
    const key = new Uint8Array(32).fill(3)
    const sealed = sealPayload(seededEnv(2), key, utf8('hello'))
    expect(sealed.length).toBe(12 + 5 + 16)
    expect(new TextDecoder().decode(openPayload(key, sealed))).toBe('hello')
    sealed[20] ^= 1
    expect(() => openPayload(key, sealed)).toThrow()
    expect(() => openPayload(key, new Uint8Array(10))).toThrow()
  })

  it('interoperates with the platform AES-GCM (a phone decrypts with its native cipher)', async () => {
    const key = new Uint8Array(32).fill(9)
    const sealed = sealPayload(seededEnv(3), key, utf8('native'))
    const ck = await globalThis.crypto.subtle.importKey('raw', key, 'AES-GCM', false, ['decrypt'])
    const plain = await globalThis.crypto.subtle.decrypt({ name: 'AES-GCM', iv: sealed.slice(0, 12) }, ck, sealed.slice(12))
    expect(new TextDecoder().decode(plain)).toBe('native')
  })

  it('text is truncated to 1024 runes without splitting a surrogate pair', () => {
    expect(truncateRunes('a'.repeat(2000))).toHaveLength(1024)
    const emoji = '😀'.repeat(1500)
    const t = truncateRunes(emoji)
    expect(Array.from(t)).toHaveLength(1024)
    expect(t.length).toBe(2048)
    expect(truncateRunes('short')).toBe('short')
  })
})

describe('topics', () => {
  it('send gets the full set; an edit only mention topics; groupId is the hex SHA-256 of the chat id', () => {
    const h = toHex(sha256(utf8('chat1')))
    expect(chatHash('chat1')).toBe(h)
    expect(groupIdOf('chat1')).toBe(h)
    expect(sendTopics('chat1', [idFor(2)])).toEqual(['chats', `chats/${h}`, `chats/${h}/${idFor(2)}`, idFor(2)])
    expect(mentionTopics('chat1', [idFor(3)])).toEqual([`chats/${h}/${idFor(3)}`, idFor(3)])
    for (const t of sendTopics('chat1', [idFor(2)])) expect(isTopic(t)).toBe(true)
    for (const bad of ['', 'chat', 'chats/xyz', `chats/${h}/x/y`, `other/${h}`, 'a'.repeat(300), 'chats/' + h.toUpperCase()]) expect(isTopic(bad)).toBe(false)
  })
})

describe('receiver cache', () => {
  it('a hit decrypts to the spec payload; a miss gives the generic notice; old keys stay after a rotation', () => {
    const env = seededEnv(4)
    const k1 = new Uint8Array(32).fill(1)
    const k2 = new Uint8Array(32).fill(2)
    const keys1 = { spaceKey: 'sk', encKey: k1, encKeyId: encKeyIdOf(k1) }
    const keys2 = { spaceKey: 'sk', encKey: k2, encKeyId: encKeyIdOf(k2) }
    const r = new PushReceiver()
    const before = sealEnvelope(env, keys1, payload('first'), { groupId: 'g', silent: false })
    const after = sealEnvelope(env, keys2, payload('second'), { groupId: 'g', silent: false })
    expect(r.receive(before)).toEqual({ kind: 'generic' })
    r.remember('s', { spaceKey: 'sk', encKey: toBase64(k1), encKeyId: keys1.encKeyId })
    expect(r.receive(before)).toEqual({ kind: 'message', spaceId: 's', payload: payload('first') })
    expect(r.receive(after)).toEqual({ kind: 'generic' })
    // The rotation: the row shows a new key; the old one is never evicted.
    r.rememberRows([{ spaceId: 's', push: { spaceKey: 'sk', encKey: toBase64(k2), encKeyId: keys2.encKeyId } }])
    expect(r.receive(after)).toMatchObject({ kind: 'message', payload: { newMessage: { text: 'second' } } })
    expect(r.receive(before)).toMatchObject({ kind: 'message', payload: { newMessage: { text: 'first' } } })
    // Bytes that do not open under the cached key: generic, never a throw.
    expect(r.receive({ keyId: keys1.encKeyId, payload: after.payload })).toEqual({ kind: 'generic' })
    expect(openEnvelope(k2, after).newMessage?.text).toBe('second')
  })
})

describe('reconcile topics', () => {
  it('bulk topics without a per-chat override; per-chat topics for every chat once one overrides; none gives nothing', async () => {
    const { topicsFor } = await import('../../sync/modules/push/reconcile.ts')
    const { chatTopic, chatMentionTopic } = await import('../../sync/modules/push/topics.ts')
    const me = idFor(1)
    const chats = (o: Record<string, 'all' | 'mentions' | 'none' | undefined>) => new Map(Object.entries(o))
    expect(topicsFor({ space: undefined, chats: chats({ c1: undefined }) }, me)).toEqual(['chats', me])
    expect(topicsFor({ space: 'mentions', chats: chats({ c1: undefined }) }, me)).toEqual([me])
    expect(topicsFor({ space: 'none', chats: chats({}) }, me)).toEqual([])
    expect(topicsFor({ space: 'mentions', chats: chats({ c1: 'all', c2: undefined, c3: 'none' }) }, me)).toEqual([
      chatTopic('c1'),
      chatMentionTopic('c1', me),
      chatMentionTopic('c2', me),
    ])
  })
})
