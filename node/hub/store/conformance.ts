/**
 * The conformance suite every HubStore must pass (SQLite's and PostgreSQL's), as automerge-repo
 * does for its storage adapters: one list of cases, run by each store's test against itself.
 * Test-only: it imports vitest.
 *
 * `open` makes a store on a fresh, empty database (a file, a PostgreSQL database) for each call.
 * `opts.reopen`, when given, opens another store on the database the last `open` made: another
 * hub process, or the same one after a restart. The durability and concurrency cases need it.
 */
import { afterEach, describe, expect, it } from 'vitest'
import { NotAdmittedError, type HubChange, type HubStore } from './hub-store.ts'

export interface HubStoreConformanceOptions {
  reopen?: () => Promise<HubStore>
}

const S1 = '8Lfjp9NzrnB4cL1d7i3m6fKcAXydk3mSHoQzJ5WFm1dN'
const S2 = '6WmcPqkd9cvvSMc2DqF3wnNRPErAU3uZ1ZyAd5Dm7Lk2'
const S3 = 'GqTJ4q1kVpAo6QdtnGZaSh5rYxE8hT6n3BzHkpVe9Ucs'
const A1 = 'acct-Aa'
const A2 = 'acct-b'

/** A change whose bytes say which it is: `n` bytes, all 256 values in turn, starting at `i`. */
const change = (id: string, i: number, n = 20 + (i % 7)): HubChange => ({ id, treeId: `tree-${i % 3}`, raw: Uint8Array.from({ length: n }, (_, k) => (i + k) & 255) })
const changes = (prefix: string, from: number, count: number): HubChange[] => Array.from({ length: count }, (_, k) => change(`${prefix}${from + k}`, from + k))
const rawBytes = (cs: readonly HubChange[]) => cs.reduce((n, c) => n + c.raw.byteLength, 0)
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

interface Ctx {
  make: (f: () => Promise<HubStore>) => Promise<HubStore>
  open: () => Promise<HubStore>
  forget: (s: HubStore) => void
}

export function hubStoreConformance(name: string, open: () => Promise<HubStore>, opts: HubStoreConformanceOptions = {}): void {
  describe(`hub store conformance: ${name}`, () => {
    const opened: HubStore[] = []
    const ctx: Ctx = {
      open,
      make: async (f) => {
        const s = await f()
        opened.push(s)
        return s
      },
      forget: (s) => void opened.splice(opened.indexOf(s), 1),
    }
    afterEach(async () => {
      for (const s of opened.splice(0)) await s.close()
    })
    changeCases(ctx)
    blockCases(ctx)
    accountCases(ctx)
    usageCases(ctx)
    listenerCases(ctx)
    if (opts.reopen) sharedCases(ctx, opts.reopen)
  })
}

function changeCases({ make, open }: Ctx) {
  it('appendChanges is idempotent by (space, id): known changes, and repeats within one call, are skipped', async () => {
    const s = await make(open)
    const batch = changes('c', 0, 5)
    expect(await s.appendChanges(S1, batch)).toBe(5)
    expect(await s.appendChanges(S1, batch)).toBe(0)
    expect(await s.appendChanges(S1, [batch[1], change('c5', 5), change('c5', 5), batch[3]])).toBe(1)
    // The same id in another space is another change.
    expect(await s.appendChanges(S2, [batch[0]])).toBe(1)
    expect((await s.changesSince(S1, 0, 100)).map((c) => c.id)).toEqual(['c0', 'c1', 'c2', 'c3', 'c4', 'c5'])
    expect(await s.appendChanges(S1, [])).toBe(0)
  })

  it('changesSince pages in ascending seq, in the order appended, within one space', async () => {
    const s = await make(open)
    const all = [...changes('x', 0, 25)].reverse()
    await s.appendChanges(S1, all.slice(0, 10))
    await s.appendChanges(S2, changes('y', 0, 7))
    await s.appendChanges(S1, all.slice(10, 18))
    await s.appendChanges(S2, changes('y', 7, 3))
    await s.appendChanges(S1, all.slice(18))
    const got: string[] = []
    let after = 0
    for (let page = 0; page < 10; page++) {
      const p = await s.changesSince(S1, after, 10)
      if (p.length === 0) break
      expect(p.length).toBeLessThanOrEqual(10)
      for (const c of p) {
        expect(c.seq).toBeGreaterThan(after)
        after = c.seq
        got.push(c.id)
      }
    }
    expect(got).toEqual(all.map((c) => c.id))
    expect(await s.changesSince(S1, after, 10)).toEqual([])
    expect(await s.changesSince(S1, 0, 0)).toEqual([])
    expect((await s.changesSince(S2, 0, 100)).map((c) => c.id)).toEqual(changes('y', 0, 10).map((c) => c.id))
    expect(await s.changesSince(S3, 0, 100)).toEqual([])
  })

  it('a change comes back with its tree and exactly its bytes, as a Uint8Array', async () => {
    const s = await make(open)
    const big = change('big', 3, 70_000)
    await s.appendChanges(S1, [change('small', 0, 256), big])
    const [small, back] = await s.changesSince(S1, 0, 10)
    expect(back).toEqual({ seq: back.seq, id: 'big', treeId: 'tree-0', raw: big.raw })
    expect(back.raw).toBeInstanceOf(Uint8Array)
    expect(Buffer.from(small.raw).equals(Buffer.from(change('small', 0, 256).raw))).toBe(true)
  })

  it('spaceStats counts changes, their raw bytes and the last seq; an unknown space is all zero', async () => {
    const s = await make(open)
    expect(await s.spaceStats(S1)).toEqual({ changes: 0, bytes: 0, lastSeq: 0 })
    const a = changes('a', 0, 4)
    await s.appendChanges(S1, a)
    await s.appendChanges(S2, changes('b', 0, 2))
    await s.appendChanges(S1, [...a, change('a9', 9)])
    const seqs = (await s.changesSince(S1, 0, 100)).map((c) => c.seq)
    expect(await s.spaceStats(S1)).toEqual({ changes: 5, bytes: rawBytes([...a, change('a9', 9)]), lastSeq: seqs[4] })
    expect((await s.spaceStats(S2)).changes).toBe(2)
    expect(await s.spaceStats(S3)).toEqual({ changes: 0, bytes: 0, lastSeq: 0 })
  })
}

function blockCases({ make, open }: Ctx) {
  it('putBlock stores a block once per space; getBlock and hasBlocks answer per space', async () => {
    const s = await make(open)
    const b1 = Uint8Array.from({ length: 300_000 }, (_, i) => (i * 7) & 255)
    const b2 = Uint8Array.of(0, 255, 1)
    expect(await s.putBlock(S1, 'blk1', b1)).toBe(true)
    expect(await s.putBlock(S1, 'blk1', b1)).toBe(false)
    expect(await s.putBlock(S1, 'blk2', b2)).toBe(true)
    expect(await s.putBlock(S2, 'blk2', b2)).toBe(true)
    const back = await s.getBlock(S1, 'blk1')
    expect(back).toBeInstanceOf(Uint8Array)
    expect(Buffer.from(back!).equals(Buffer.from(b1))).toBe(true)
    expect(await s.getBlock(S2, 'blk2')).toEqual(b2)
    expect(await s.getBlock(S2, 'blk1')).toBeUndefined()
    expect(await s.hasBlocks(S1, ['blk2', 'nope', 'blk1', 'blk2'])).toEqual([true, false, true, true])
    expect(await s.hasBlocks(S2, ['blk1', 'blk2'])).toEqual([false, true])
    expect(await s.hasBlocks(S3, [])).toEqual([])
  })
}

function accountCases({ make, open }: Ctx) {
  it('admit, admitted and revoke; a revoke drops the account’s registrations and nobody else’s', async () => {
    const s = await make(open)
    expect(await s.admitted(A1)).toBe(false)
    await s.admit(A1, 'config', 1000)
    await s.admit(A1, 'token', 2000)
    await s.admit(A2, 'token', 1000)
    expect(await s.admitted(A1)).toBe(true)
    await s.register(A1, S1, 1000)
    await s.register(A1, S2, 1000)
    await s.register(A2, S2, 1000)
    await s.revoke(A1)
    expect(await s.admitted(A1)).toBe(false)
    expect(await s.registrations(A1)).toEqual([])
    expect(await s.registrants(S2)).toEqual([A2])
    expect(await s.keptSpaces()).toEqual([S2])
    await s.revoke('nobody')
    // Admitted again: the old registrations do not come back.
    await s.admit(A1, 'token', 3000)
    expect(await s.registrations(A1)).toEqual([])
  })

  it('register needs an admitted account; register and unregister are idempotent', async () => {
    const s = await make(open)
    await expect(s.register(A1, S1, 1000)).rejects.toBeInstanceOf(NotAdmittedError)
    expect(await s.registrants(S1)).toEqual([])
    await s.admit(A1, 'config', 1000)
    await s.register(A1, S1, 1000)
    await s.register(A1, S1, 2000)
    expect(await s.registrations(A1)).toEqual([S1])
    await s.unregister(A1, S1)
    await s.unregister(A1, S1)
    await s.unregister(A2, S1)
    expect(await s.registrations(A1)).toEqual([])
    expect(await s.keptSpaces()).toEqual([])
  })

  it('registrations, registrants and keptSpaces are sorted by their bytes, each space once', async () => {
    const s = await make(open)
    const accounts = ['b', 'a1', 'Z', 'B', 'a']
    for (const a of accounts) await s.admit(a, 'config', 0)
    for (const a of accounts) for (const sp of ['zz', 'Sp', 'sp', '1x']) await s.register(a, sp, 0)
    expect(await s.registrants('sp')).toEqual(['B', 'Z', 'a', 'a1', 'b'])
    expect(await s.registrations('a1')).toEqual(['1x', 'Sp', 'sp', 'zz'])
    expect(await s.keptSpaces()).toEqual(['1x', 'Sp', 'sp', 'zz'])
  })
}

function usageCases({ make, open }: Ctx) {
  it('usage counts the spaces an account registered and the bytes of their changes and blocks', async () => {
    const s = await make(open)
    await s.admit(A1, 'config', 0)
    await s.admit(A2, 'config', 0)
    expect(await s.usage(A1)).toEqual({ spaces: 0, bytes: 0 })
    const c1 = changes('u', 0, 3)
    await s.appendChanges(S1, c1)
    await s.putBlock(S1, 'b1', new Uint8Array(1000))
    await s.putBlock(S1, 'b1', new Uint8Array(1000))
    await s.appendChanges(S3, changes('v', 0, 4))
    await s.register(A1, S1, 0)
    // A space registered before anything of it is stored counts, with no bytes.
    await s.register(A1, S2, 0)
    await s.register(A2, S1, 0)
    await s.register(A2, S3, 0)
    expect(await s.usage(A1)).toEqual({ spaces: 2, bytes: rawBytes(c1) + 1000 })
    await s.appendChanges(S2, [change('w', 1, 50)])
    expect(await s.usage(A1)).toEqual({ spaces: 2, bytes: rawBytes(c1) + 1000 + 50 })
    expect(await s.usage(A2)).toEqual({ spaces: 2, bytes: rawBytes(c1) + 1000 + rawBytes(changes('v', 0, 4)) })
    await s.unregister(A1, S1)
    expect(await s.usage(A1)).toEqual({ spaces: 1, bytes: 50 })
  })

  it('totals sum the spaces held, changes, bytes, blocks and block bytes', async () => {
    const s = await make(open)
    expect(await s.totals()).toEqual({ spaces: 0, changes: 0, bytes: 0, blocks: 0, blockBytes: 0 })
    await s.appendChanges(S1, changes('t', 0, 3))
    await s.appendChanges(S1, changes('t', 0, 3))
    await s.appendChanges(S2, changes('t', 0, 2))
    await s.putBlock(S2, 'b', new Uint8Array(10))
    await s.putBlock(S3, 'b', new Uint8Array(20))
    await s.putBlock(S3, 'b', new Uint8Array(20))
    await s.admit(A1, 'config', 0)
    await s.register(A1, 'registered-only', 0)
    expect(await s.totals()).toEqual({ spaces: 3, changes: 5, bytes: rawBytes(changes('t', 0, 3)) + rawBytes(changes('t', 0, 2)), blocks: 2, blockBytes: 30 })
  })
}

function listenerCases({ make, open }: Ctx) {
  it('onAppend hears each append with new changes once, as local, before it resolves; never an append of known changes', async () => {
    const s = await make(open)
    const heard: Array<[string, number, boolean]> = []
    s.onAppend((space, lastSeq, local) => heard.push([space, lastSeq, local]))
    await s.appendChanges(S1, changes('n', 0, 3))
    const last1 = (await s.spaceStats(S1)).lastSeq
    expect(heard).toEqual([[S1, last1, true]])
    await s.appendChanges(S1, changes('n', 0, 3))
    await s.appendChanges(S1, [])
    await s.putBlock(S1, 'b', new Uint8Array(4))
    await s.appendChanges(S2, [...changes('n', 0, 1), ...changes('n', 5, 1)])
    // Long enough for a notice of this store's own appends to come back, which must not be heard again.
    await sleep(300)
    expect(heard).toEqual([
      [S1, last1, true],
      [S2, (await s.spaceStats(S2)).lastSeq, true],
    ])
  })

  it('a listener that throws fails neither the append nor the other listeners; a stopped listener hears nothing', async () => {
    const s = await make(open)
    const heard: string[] = []
    const stopThrower = s.onAppend(() => {
      throw new Error('listener bug')
    })
    const stop = s.onAppend((space) => heard.push(`a:${space}`))
    s.onAppend((space) => heard.push(`b:${space}`))
    expect(await s.appendChanges(S1, changes('l', 0, 1))).toBe(1)
    stop()
    stopThrower()
    await s.appendChanges(S2, changes('l', 0, 1))
    expect(heard).toEqual([`a:${S1}`, `b:${S1}`, `b:${S2}`])
  })
}

function sharedCases({ make, open, forget }: Ctx, reopen: () => Promise<HubStore>) {
  const fill = async (s: HubStore) => {
    await s.appendChanges(S1, changes('d', 0, 30))
    await s.putBlock(S1, 'blk', Uint8Array.of(9, 8, 7))
    await s.admit(A1, 'token', 5)
    await s.register(A1, S1, 5)
  }
  const expectFilled = async (s: HubStore) => {
    const stored = await s.changesSince(S1, 0, 100)
    expect(stored.map((c) => [c.id, c.treeId, Array.from(c.raw)])).toEqual(changes('d', 0, 30).map((c) => [c.id, c.treeId, Array.from(c.raw)]))
    expect(await s.spaceStats(S1)).toEqual({ changes: 30, bytes: rawBytes(changes('d', 0, 30)), lastSeq: stored[29].seq })
    expect(await s.getBlock(S1, 'blk')).toEqual(Uint8Array.of(9, 8, 7))
    expect(await s.admitted(A1)).toBe(true)
    expect(await s.keptSpaces()).toEqual([S1])
    expect(await s.usage(A1)).toEqual({ spaces: 1, bytes: rawBytes(changes('d', 0, 30)) + 3 })
  }

  it('another store on the same database sees everything at once; after closing and reopening nothing is lost and seq keeps growing', async () => {
    const s1 = await make(open)
    await fill(s1)
    // Not closed first: what a store acknowledged is on the database, not in the store.
    await expectFilled(await make(reopen))
    const lastSeq = (await s1.spaceStats(S1)).lastSeq
    forget(s1)
    await s1.close()
    const s3 = await make(reopen)
    await expectFilled(s3)
    await s3.appendChanges(S2, changes('e', 0, 1))
    expect((await s3.changesSince(S2, 0, 10))[0].seq).toBeGreaterThan(lastSeq)
  })

  it('the same changes appended at once through two stores are stored once', async () => {
    const s1 = await make(open)
    const s2 = await make(reopen)
    let added = 0
    for (let round = 0; round < 10; round++) {
      const c = changes(`r${round}-`, 0, 6)
      const results = await Promise.all([
        s1.appendChanges(S1, c.slice(0, 4)),
        s2.appendChanges(S1, c.slice(2, 6)),
        s1.appendChanges(S1, c.slice(3)),
        s2.appendChanges(S1, [c[0], c[5]]),
      ])
      added += results.reduce((a, b) => a + b, 0)
    }
    expect(added).toBe(60)
    const all = await s2.changesSince(S1, 0, 1000)
    expect(new Set(all.map((c) => c.id)).size).toBe(60)
    expect(all.length).toBe(60)
    expect(await s1.spaceStats(S1)).toEqual({ changes: 60, bytes: rawBytes(all), lastSeq: all[59].seq })
  })

  it('a reader following changesSince while two stores append to one space misses nothing', async () => {
    const s1 = await make(open)
    const s2 = await make(reopen)
    const reader = await make(reopen)
    const write = async (s: HubStore, prefix: string) => {
      for (let b = 0; b < 40; b++) await s.appendChanges(S1, changes(`${prefix}${b}-`, 0, 10))
    }
    let done = false
    const writers = Promise.all([write(s1, 'p'), write(s2, 'q')]).finally(() => (done = true))
    const seen: string[] = []
    let after = 0
    const follow = async () => {
      for (const c of await reader.changesSince(S1, after, 500)) {
        seen.push(c.id)
        after = c.seq
      }
    }
    while (!done) await follow()
    await writers
    await follow()
    expect(seen.length).toBe(800)
    expect(new Set(seen).size).toBe(800)
  })
}
