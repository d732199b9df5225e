/**
 * The few parts of vitest's API that suites shared with the page use (describe, it, hooks,
 * expect), for running such a suite inside Chromium, where vitest's own runner does not go.
 * The build aliases `vitest` to this file for the conformance page only. `expect` is vitest's
 * own (@vitest/expect, the Jest matchers as a chai plugin, which vitest's browser mode also
 * runs), so the suite's assertions mean exactly what they mean under `npm test`.
 */
import * as chai from 'chai'
import { GLOBAL_EXPECT, JestAsymmetricMatchers, JestChaiExpect, JestExtend, getState, setState } from '@vitest/expect'

chai.use(JestExtend)
chai.use(JestChaiExpect)
chai.use(JestAsymmetricMatchers)

type Fn = () => unknown

export const expect = ((value: unknown, message?: string) => {
  const { assertionCalls } = getState(expect as never)
  setState({ assertionCalls: assertionCalls + 1 }, expect as never)
  return chai.expect(value, message)
}) as unknown as typeof import('vitest').expect
Object.assign(expect, chai.expect)
;(expect as unknown as { getState: () => unknown }).getState = () => getState(expect as never)
;(expect as unknown as { setState: (s: unknown) => void }).setState = (s) => setState(s as never, expect as never)
setState(
  { assertionCalls: 0, isExpectingAssertions: false, isExpectingAssertionsError: null, expectedAssertionsNumber: null, expectedAssertionsNumberErrorGen: null },
  expect as never,
)
;(globalThis as Record<symbol, unknown>)[GLOBAL_EXPECT] = expect

interface Suite {
  name: string
  parent?: Suite
  before: Fn[]
  after: Fn[]
}
interface Test {
  name: string
  suite: Suite
  fn: Fn
}

const rootSuite: Suite = { name: '', before: [], after: [] }
let current = rootSuite
const tests: Test[] = []

export function describe(name: string, body: () => void): void {
  const parent = current
  current = { name, parent, before: [], after: [] }
  try {
    body()
  } finally {
    current = parent
  }
}

export function it(name: string, fn: Fn): void {
  tests.push({ name, suite: current, fn })
}
export const test = it

export const beforeEach = (fn: Fn) => void current.before.push(fn)
export const afterEach = (fn: Fn) => void current.after.push(fn)

const chain = (s: Suite | undefined): Suite[] => (s ? [...chain(s.parent), s] : [])
const fullName = (t: Test) =>
  [
    ...chain(t.suite)
      .map((s) => s.name)
      .filter(Boolean),
    t.name,
  ].join(' > ')

export interface TestResult {
  name: string
  ok: boolean
  ms: number
  error?: string
}

/** Runs every registered test in order, hooks outermost first (afterEach innermost first). */
export async function run(onResult?: (r: TestResult) => void): Promise<TestResult[]> {
  const out: TestResult[] = []
  for (const t of tests) {
    const suites = chain(t.suite)
    const start = performance.now()
    let error: string | undefined
    try {
      for (const s of suites) for (const h of s.before) await h()
      await t.fn()
    } catch (err) {
      error = err instanceof Error ? `${err.message}\n${err.stack ?? ''}` : String(err)
    }
    for (const s of [...suites].reverse()) {
      for (const h of s.after) {
        try {
          await h()
        } catch (err) {
          error ??= `afterEach: ${err instanceof Error ? err.message : String(err)}`
        }
      }
    }
    const r = { name: fullName(t), ok: error === undefined, ms: Math.round(performance.now() - start), ...(error ? { error } : {}) }
    out.push(r)
    onResult?.(r)
  }
  return out
}
