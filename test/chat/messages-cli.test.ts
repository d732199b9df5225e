import { afterEach, describe, expect, it } from 'vitest'
import { main } from '../../server/cli/dispatch.ts'
import { bundleRootId } from '../../sync/space/bundles/model.ts'
import { memoryIO } from '../server/process.ts'
import { bootApp, call, listen, newSpace, ok, openSse, type Booted } from '../routes/helpers.ts'

/*
 * `svc chat send|list|watch` against a listening daemon, and the live window a chat client
 * opens (chat.md "Chat live updates"): sends arrive as `added`, edits and reactions as
 * `updated`, deletes as `removed` with reason `deleted`.
 */

let b: Booted | undefined
afterEach(async () => {
  await b?.close()
  b = undefined
})

async function setup() {
  b = await bootApp()
  const url = await listen(b.app)
  const spaceId = await newSpace(b.app, 'Chat CLI')
  await ok(call(b.app, 'POST', '/v1/catalog/general-chat/setup', { spaceId }))
  const chat = bundleRootId(spaceId, 'system:general-chat/v1')
  const svc = async (stdin: string, ...args: string[]) => {
    const m = memoryIO(stdin, { SVC_URL: url })
    const code = await main(args, m.io)
    return { code, out: m.out(), err: m.err(), json: () => JSON.parse(m.out()) }
  }
  return { b, url, spaceId, chat, svc }
}

const waitFor = async (pred: () => boolean) => {
  for (let i = 0; i < 200 && !pred(); i++) await new Promise((r) => setTimeout(r, 25))
  expect(pred()).toBe(true)
}

describe('svc chat', () => {
  it('send (argument, stdin, reply, attachment) and list (newest first, --before pages back)', async () => {
    const { spaceId, svc } = await setup()
    const first = await svc('', 'chat', 'send', spaceId, 'hello from the cli')
    expect(first.code).toBe(0)
    const id1 = first.json().recordIds[0] as string
    const id2 = (await svc('piped text\n', 'chat', 'send', spaceId, '--reply', id1)).json().recordIds[0] as string
    const id3 = (await svc('', 'chat', 'send', spaceId, '--attach', 'pic=svc://f/s/f1,image')).json().recordIds[0] as string
    const list = (await svc('', 'chat', 'list', spaceId)).json().records as any[]
    expect(list.map((r) => r.id)).toEqual([id3, id2, id1])
    expect(list[1]).toMatchObject({ text: 'piped text', replyToMessageId: id1 })
    expect(list[0].attachments).toEqual({ pic: { type: 'image', link: 'svc://f/s/f1' } })
    const page = (await svc('', 'chat', 'list', spaceId, '--limit', '1', '--before', list[1]._ver.id)).json().records as any[]
    expect(page.map((r) => r.id)).toEqual([id1])
    // Errors keep the spec's exit codes.
    const empty = await svc('', 'chat', 'send', spaceId, '')
    expect(empty.code).toBe(1)
    expect(empty.err).toContain('chat.text_required')
    expect((await svc('', 'chat', 'send', spaceId, 'x', '--chat', 'nope')).err).toContain('object.not_found')
    expect((await svc('', 'chat', 'frobnicate', spaceId)).code).toBe(1)
    expect((await svc('', 'chat', 'list', spaceId, '--reply', 'x')).code).toBe(1)
  })

  it('watch prints the live window as JSON lines and ends on the closed frame', async () => {
    const { url, spaceId, svc } = await setup()
    await svc('', 'chat', 'send', spaceId, 'before watching')
    const m = memoryIO('', { SVC_URL: url })
    const done = main(['chat', 'watch', spaceId, '--limit', '10'], m.io)
    const lines = () =>
      m
        .out()
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l) as { event: string; data: any })
    await waitFor(() => lines().some((l) => l.event === 'snapshot'))
    expect(
      lines()
        .find((l) => l.event === 'snapshot')!
        .data.records.map((r: any) => r.text),
    ).toEqual(['before watching'])
    const sent = (await svc('', 'chat', 'send', spaceId, 'while watching')).json().recordIds[0]
    await waitFor(() => lines().some((l) => l.event === 'changes'))
    expect(lines().find((l) => l.event === 'changes')!.data[0].added[0]).toMatchObject({ id: sent, doc: { text: 'while watching' } })
    // Shutting the daemon down sends `closed`: watch exits 0.
    await b!.close()
    b = undefined
    expect(await done).toBe(0)
    expect(lines().at(-1)!.event).toBe('closed')
  })

  it('the live window: added on send, updated on edit and on a reaction set or unset, removed (deleted) on delete', async () => {
    const { url, spaceId, chat } = await setup()
    const M = `/v1/spaces/${spaceId}/objects/${chat}/chat/messages`
    const sse = await openSse(`${url}/v1/spaces/${spaceId}/query/subscribe`, { objectId: chat, dataset: 'chat_messages', sort: ['-_ver.id'], limit: 2 })
    try {
      await sse.until((f) => f.some((x) => x.event === 'snapshot'))
      const changes = () => sse.frames.filter((f) => f.event === 'changes').flatMap((f) => f.data as any[])
      const id = (await ok(call(b!.app, 'POST', M, { text: 'one' }), 201)).recordIds[0]
      await sse.until(() => changes().some((c) => c.added.some((a: any) => a.id === id)))
      await ok(call(b!.app, 'PATCH', `${M}/${id}`, { text: 'one, edited' }))
      await sse.until(() => changes().some((c) => c.updated.some((u: any) => u.id === id && u.doc.text === 'one, edited')))
      await ok(call(b!.app, 'POST', `${M}/${id}/reactions/${encodeURIComponent('🎉')}`))
      await sse.until(() => changes().some((c) => c.updated.some((u: any) => u.id === id && u.doc.reactions)))
      // Removing the reaction is an update of the message (its leaf unset); it stays in the window.
      await ok(call(b!.app, 'POST', `${M}/${id}/reactions/${encodeURIComponent('🎉')}`))
      await sse.until(() => changes().some((c) => c.updated.some((u: any) => u.id === id && u.ops.some((o: any) => o.type === '$unset' && o.path.startsWith('reactions.🎉.')))))
      const id2 = (await ok(call(b!.app, 'POST', M, { text: 'two' }), 201)).recordIds[0]
      await ok(call(b!.app, 'DELETE', `${M}/${id2}`))
      await sse.until(() => changes().some((c) => c.removed.some((r: any) => r.id === id2 && r.reason === 'deleted')))
    } finally {
      sse.destroy()
    }
  })
})
