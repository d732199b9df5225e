import { connect } from 'node:net'
import { afterEach, describe, expect, it } from 'vitest'
import { AgentsHost } from '../../node/agents/host.ts'
import { HEADERS_TIMEOUT_MS } from '../../server/app.ts'
import { BODY_TIMEOUT_MS } from '../../server/http/body-timeout.ts'
import * as control from '../../server/modules/agents.ts'
import { agentAccount } from '../agents/helpers.ts'

/**
 * Issue 33, item C: the agent control API held a partial request 80-90 s, while the main API
 * answers 408 at 10 s. The listener here gets shortened timeouts (the defaults are asserted
 * equal to the main API's), and a raw socket sends half a request.
 */

const cleanup: Array<() => Promise<unknown>> = []
afterEach(async () => {
  for (const c of cleanup.splice(0)) await c()
})

async function listening(timeoutMs: number) {
  const a = await agentAccount()
  const host = new AgentsHost(a.account, a.env, 'peer-A', { timers: false })
  cleanup.push(() => host.stop())
  await host.start()
  const build = control.buildAgentControlApp
  const app = build(() => host, { headersTimeoutMs: timeoutMs, bodyTimeoutMs: timeoutMs })
  cleanup.push(() => app.close())
  return control.listenAgentControl(app, { port: 0 })
}

/** Sends `text` and waits for the daemon to answer and close, or `giveUpMs`. */
function halfRequest(port: number, text: string, giveUpMs: number): Promise<{ answer: string; closedAfterMs: number | undefined }> {
  return new Promise((resolve) => {
    const t0 = performance.now()
    let answer = ''
    const s = connect(port, '127.0.0.1', () => s.write(text))
    const timer = setTimeout(() => {
      s.destroy()
      resolve({ answer, closedAfterMs: undefined })
    }, giveUpMs)
    s.on('data', (d) => (answer += d.toString()))
    s.on('error', () => undefined)
    s.on('close', () => {
      clearTimeout(timer)
      resolve({ answer, closedAfterMs: performance.now() - t0 })
    })
  })
}

describe('a client sends half a request to the agent control API', () => {
  it('the defaults are the main API’s', () => {
    expect((control as Record<string, unknown>).CONTROL_TIMEOUTS).toEqual({ headersTimeoutMs: HEADERS_TIMEOUT_MS, bodyTimeoutMs: BODY_TIMEOUT_MS })
  })

  it('headers that never end: 408 request.timeout and the connection closes', async () => {
    const port = await listening(500)
    const { answer, closedAfterMs } = await halfRequest(port, 'GET /election HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ', 4000)
    expect(closedAfterMs).toBeDefined()
    expect(closedAfterMs!).toBeLessThan(2000)
    expect(answer).toMatch(/^HTTP\/1\.1 408 /)
    expect(answer).toContain('"code":"request.timeout"')
  })

  it('a body that never arrives in full: 408 request.timeout and the connection closes', async () => {
    const port = await listening(500)
    const { answer, closedAfterMs } = await halfRequest(port, 'POST /run HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"sour', 4000)
    expect(closedAfterMs).toBeDefined()
    expect(closedAfterMs!).toBeLessThan(2000)
    expect(answer).toMatch(/^HTTP\/1\.1 408 /)
    expect(answer).toContain('"code":"request.timeout"')
  })
})
