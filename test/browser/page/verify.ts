/**
 * The verify-workers page (test/browser/verify.browser.ts drives it): signatures made in the
 * page, verified through verifyInWorkers (sync/browser/verify-workers.ts) and through the
 * page's own provider, valid and forged alike, so the suite can compare every answer.
 */
import { browserCryptoProvider, verifyInWorkers } from '../../../sync/browser/index.ts'
import { keyPairFromSeed } from '../../../sync/crypto/keys.ts'

interface Case {
  pub: Uint8Array
  msg: Uint8Array
  sig: Uint8Array
  expect: boolean
  kind: string
}

/** `n` signatures by a few keys, and a forged copy of each: altered message, signature, key or length. */
async function cases(n: number): Promise<Case[]> {
  const base = await browserCryptoProvider()
  const keys = [1, 2, 3].map((s) => keyPairFromSeed(new Uint8Array(32).fill(s)))
  const out: Case[] = []
  for (let i = 0; i < n; i++) {
    const k = keys[i % keys.length]
    const msg = new Uint8Array(100 + (i % 300)).map((_, j) => (i * 31 + j) & 255)
    const sig = await base.sign(k.privateKey, msg)
    out.push({ pub: k.publicKey, msg, sig, expect: true, kind: 'valid' })
    const forged = i % 5
    if (forged === 0) {
      const m = msg.slice()
      m[i % m.length] ^= 1
      out.push({ pub: k.publicKey, msg: m, sig, expect: false, kind: 'altered message' })
    } else if (forged === 1) {
      const s = sig.slice()
      s[i % 64] ^= 0x80
      out.push({ pub: k.publicKey, msg, sig: s, expect: false, kind: 'altered signature' })
    } else if (forged === 2) {
      out.push({ pub: keys[(i + 1) % keys.length].publicKey, msg, sig, expect: false, kind: 'another key' })
    } else if (forged === 3) {
      out.push({ pub: k.publicKey, msg, sig: sig.subarray(0, 63), expect: false, kind: 'short signature' })
    } else {
      out.push({ pub: new Uint8Array(32).fill(0xff), msg, sig, expect: false, kind: 'not a point' })
    }
  }
  return out
}

const until = async (f: () => boolean, ms = 10_000) => {
  const end = performance.now() + ms
  while (!f()) {
    if (performance.now() > end) throw new Error('timed out')
    await new Promise((r) => setTimeout(r, 10))
  }
}

const verify = {
  /**
   * Every case through the workers (once ready) and through the page's provider. `closeEarly`:
   * the workers are stopped while the requests are in flight (they must still be answered,
   * on the page). `workers`: as verifyInWorkers takes it.
   */
  async run(n: number, o: { workers?: number; closeEarly?: boolean } = {}) {
    const base = await browserCryptoProvider()
    const all = await cases(n)
    const v = verifyInWorkers(base, { workers: o.workers })
    await until(() => v.workersReady() >= (o.workers ?? 1))
    const ready = v.workersReady()
    const pending = Promise.all(all.map((c) => v.verify(c.pub, c.msg, c.sig)))
    if (o.closeEarly) {
      // Once the first chunks went out (the pool hands them out in a microtask): some are in
      // a worker, the rest still queued.
      await new Promise<void>((r) => queueMicrotask(r))
      v.close()
    }
    const got = await pending
    const onPage = await Promise.all(all.map((c) => base.verify(c.pub, c.msg, c.sig)))
    const by = v.verifiedBy()
    v.close()
    // After close, answers still come (from the page's provider).
    const after = await v.verify(all[0].pub, all[0].msg, all[0].sig)
    const wrong = all.flatMap((c, i) => (got[i] !== c.expect || onPage[i] !== c.expect ? [`${i} ${c.kind}: workers ${got[i]}, page ${onPage[i]}`] : []))
    return { ready, name: v.name, cases: all.length, forged: all.filter((c) => !c.expect).length, wrong, by, after }
  },
}
;(window as unknown as { verify: typeof verify }).verify = verify
