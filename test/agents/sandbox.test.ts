import { describe, expect, it } from 'vitest'
import { systemEnv } from '../../sync/core/env.ts'
import type { Json } from '../../sync/crdt/ops.ts'
import { runSandboxed, type Capability } from '../../node/agents/sandbox.ts'

const budgets = { fuel: 2000, memoryBytes: 8 * 1024 * 1024, timeoutMs: 20_000 }
const run = (source: string, capabilities: Record<string, Capability> = {}, args: Json = {}, b = budgets) =>
  runSandboxed({ source, args, capabilities, budgets: b, env: systemEnv, runId: 'r1' })

describe('the QuickJS sandbox', () => {
  it('runs main(args) and returns its value in the envelope', async () => {
    const res = await run('function main(args) { return { sum: args.a + args.b } }', {}, { a: 2, b: 3 })
    expect(res).toMatchObject({ status: 'ok', traceRef: 'r1', value: { sum: 5 }, error: null })
    expect(res.fuelUsed).toBeGreaterThanOrEqual(0)
    expect(res.memPages).toBeGreaterThan(0)
  })

  it('an infinite loop is stopped by fuel, and the envelope says so', async () => {
    const res = await run('function main() { for (;;) {} }', {}, {}, { ...budgets, fuel: 20 })
    expect(res.status).toBe('failed')
    expect(res.error).toMatch(/fuel/)
    expect(res.fuelUsed).toBe(20)
  })

  it('an infinite loop after an await is stopped by fuel too', async () => {
    const res = await run('async function main(a, svc) { await svc.echo(1); for (;;) {} }', { echo: async (x) => x }, {}, { ...budgets, fuel: 20 })
    expect(res.status).toBe('failed')
    expect(res.error).toMatch(/fuel/)
  })

  it('unbounded allocation is stopped by the memory limit', async () => {
    const res = await run('function main() { const a = []; for (;;) a.push("x".repeat(20000) + a.length) }', {}, {}, { ...budgets, fuel: 1_000_000, memoryBytes: 2 * 1024 * 1024 })
    expect(res.status).toBe('failed')
    expect(res.error).toMatch(/out of memory/)
  })

  it('a program cannot reach process, require, fetch, the filesystem, timers or the host realm', async () => {
    const res = await run(`function main() {
      return [typeof process, typeof require, typeof fetch, typeof std, typeof os, typeof setTimeout, typeof globalThis.__svcHost, typeof XMLHttpRequest, typeof WebAssembly, typeof import_meta_dummy]
    }`)
    expect(res.value).toEqual(Array(10).fill('undefined'))
    const imp = await run('async function main() { const fs = await import("node:fs"); return typeof fs }')
    expect(imp.status).toBe('failed')
    const ctor = await run('function main() { return (function(){}).constructor("return typeof process")() }')
    expect(ctor.value).toBe('undefined')
  })

  it('a thrown error becomes a failed run carrying its message', async () => {
    const res = await run('function main() { throw new Error("boom at step 3") }')
    expect(res).toMatchObject({ status: 'failed', error: 'boom at step 3', value: null })
    const rej = await run('async function main() { throw new TypeError("async boom") }')
    expect(rej).toMatchObject({ status: 'failed', error: 'TypeError: async boom' })
  })

  it('a program without main fails with a clear error; a syntax error fails with its message', async () => {
    expect((await run('const x = 1')).error).toMatch(/main/)
    expect((await run('function main( {')).status).toBe('failed')
  })

  it('capabilities are awaited; their errors reach the program as exceptions; unknown ones do not exist', async () => {
    const caps: Record<string, Capability> = {
      echo: async (x) => ({ got: x }),
      fail: async () => {
        throw new Error('not in this space')
      },
    }
    const res = await run(
      `async function main(args, svc) {
      const a = await svc.echo({ n: 1 })
      let err = ''
      try { await svc.fail({}) } catch (e) { err = e.message }
      return { a, err, keys: Object.keys(svc), frozen: Object.isFrozen(svc) }
    }`,
      caps,
    )
    expect(res.value).toEqual({ a: { got: { n: 1 } }, err: 'not in this space', keys: ['echo', 'fail'], frozen: true })
  })

  it('console.log lines become the trace, kept whole up to the capture bound', async () => {
    const res = await run(
      'function main() { console.log("hello", {a: 1}); for (let i = 0; i < 2000; i++) console.log("line " + i); return 1 }',
      {},
      {},
      { ...budgets, fuel: 100_000 },
    )
    expect(res.trace[0]).toBe('hello {"a":1}')
    // The run record decides inline or file (node/agents/traces.ts); the sandbox keeps every line up to 1 MiB.
    expect(res.trace).toHaveLength(2001)
    expect(res.trace[2000]).toBe('line 1999')
  })

  it('a program awaiting a promise nothing settles fails instead of hanging', async () => {
    const res = await run('async function main() { await new Promise(() => {}) }')
    expect(res.status).toBe('failed')
    expect(res.error).toMatch(/never|nothing/)
  })

  it('a slow capability hits the timeout', async () => {
    const res = await run('async function main(a, svc) { await svc.slow(1) }', { slow: () => new Promise((r) => setTimeout(() => r(1), 5000)) }, {}, { ...budgets, timeoutMs: 50 })
    expect(res).toMatchObject({ status: 'failed', error: expect.stringMatching(/timeout/) })
  })
})
