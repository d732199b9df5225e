import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { main } from '../../server/cli/dispatch.ts'
import { memoryIO } from '../server/process.ts'
import { pairSpaceId } from '../../sync/space/one-to-one.ts'
import { idFor } from '../helpers.ts'
import { bootApp, listen, type Booted } from './helpers.ts'

let b: Booted
let url: string
beforeAll(async () => {
  b = await bootApp()
  url = await listen(b.app)
})
afterAll(() => b.close())

async function svc(...args: string[]) {
  const m = memoryIO('', { SVC_URL: url })
  const code = await main(args, m.io)
  return { code, out: m.out(), err: m.err(), json: () => JSON.parse(m.out()) }
}

describe('svc one-to-one', () => {
  it('start, register, pending, accept, decline, with the exit codes of the spec', async () => {
    const started = await svc('one-to-one', idFor(5))
    expect(started.code).toBe(0)
    expect(started.json()).toMatchObject({ id: pairSpaceId(b.accountId, idFor(5)), spaceType: 'svc.onetoone', status: 'active' })

    expect(await svc('one-to-one', 'register', idFor(6), '--hint', 'Bo')).toMatchObject({ code: 0, out: '' })
    const pendingId = pairSpaceId(b.accountId, idFor(6))
    expect((await svc('one-to-one', 'pending')).json().map((s: { id: string }) => s.id)).toEqual([pendingId])
    expect((await svc('one-to-one', 'accept', pendingId)).json()).toMatchObject({ id: pendingId, status: 'active' })
    expect(await svc('one-to-one', 'decline', pendingId)).toMatchObject({ code: 0, out: '' })

    const self = await svc('one-to-one', b.accountId)
    expect(self.code).toBe(1)
    expect(self.err).toContain('request.invalid_field')
    expect((await svc('one-to-one', 'accept', 'nope')).err).toContain('404 space.not_found')
    expect((await svc('one-to-one')).code).toBe(1)
    expect((await svc('one-to-one', 'accept')).code).toBe(1)
  })
})
