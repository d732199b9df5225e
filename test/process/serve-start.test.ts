import { rmSync } from 'node:fs'
import { afterEach, describe, expect, it } from 'vitest'
import { spaceOpenProgress } from '../../server/cli/serve-messages.ts'
import { tempRoot } from '../server/helpers.ts'
import { serve, stop, type Served } from '../server/process.ts'

const running: Served[] = []
const roots: string[] = []
afterEach(async () => {
  for (const s of running.splice(0)) await stop(s)
  for (const r of roots.splice(0)) rmSync(r, { recursive: true, force: true })
})

async function start(args: string[]): Promise<Served> {
  const s = await serve(args)
  running.push(s)
  return s
}

async function until(what: string, check: () => boolean, timeoutMs = 20_000): Promise<void> {
  const end = Date.now() + timeoutMs
  while (!check()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`)
    await new Promise((r) => setTimeout(r, 50))
  }
}

const post = (url: string, path: string, body: unknown) => fetch(`${url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) })

describe('svc serve at start (real processes)', () => {
  it('a first start without an account says how to create one; with one, it does not', async () => {
    const data = tempRoot()
    roots.push(data)
    const s = await start(['--data', data])
    await until('the hint', () => s.stderr().includes('no account'))
    expect(s.stderr()).toContain('no account on this data directory yet')
    expect(s.stderr()).toContain(`auth create --url ${s.url}`)
    expect((await post(s.url, '/v1/auth', {})).status).toBe(201)
    await stop(s)
    const again = await start(['--data', data])
    await until('the boot line', () => again.stderr().includes('booted'))
    expect(again.stderr()).not.toContain('no account')
  }, 120_000)

  it('reports the spaces it lists at start, with their count', async () => {
    const data = tempRoot()
    roots.push(data)
    const s = await start(['--data', data])
    expect((await post(s.url, '/v1/auth', {})).status).toBe(201)
    for (let i = 0; i < 3; i++) expect((await post(s.url, '/v1/spaces', { name: `s${i}` })).status).toBe(201)
    await stop(s)
    const again = await start(['--data', data])
    expect(again.stderr()).toMatch(/listed 3 spaces in \d+\.\d s; they open on demand/)
  }, 120_000)

  it('--log writes a request log line per request through the pino logger', async () => {
    const data = tempRoot()
    roots.push(data)
    const s = await start(['--data', data, '--log'])
    expect((await fetch(`${s.url}/v1/health`)).status).toBe(200)
    await until('a request log line', () => s.stderr().includes('request completed'))
    const line = s
      .stderr()
      .split('\n')
      .find((l) => l.includes('request completed'))!
    const entry = JSON.parse(line) as { level: number; msg: string; res: { statusCode: number } }
    expect(entry).toMatchObject({ level: 30, msg: 'request completed', res: { statusCode: 200 } })
    // Without --log: warnings only.
    const quietData = tempRoot()
    roots.push(quietData)
    const quiet = await start(['--data', quietData])
    expect((await fetch(`${quiet.url}/v1/health`)).status).toBe(200)
    await new Promise((r) => setTimeout(r, 300))
    expect(quiet.stderr()).not.toContain('request completed')
  }, 120_000)
})

describe('start-up progress lines', () => {
  it('print at most once a second, then the total and the time', () => {
    const lines: string[] = []
    let t = 0
    const progress = spaceOpenProgress(
      (l) => lines.push(l.trim()),
      () => t,
    )
    for (let i = 0; i < 500; i++) {
      progress(i, 500)
      t += 10
    }
    progress(500, 500)
    expect(lines[0]).toBe('svc serve: listing spaces 0/500')
    expect(lines.filter((l) => l.startsWith('svc serve: listing'))).toHaveLength(5)
    expect(lines.at(-1)).toBe('svc serve: listed 500 spaces in 5.0 s; they open on demand')
  })

  it('say nothing for an account without spaces', () => {
    const lines: string[] = []
    const progress = spaceOpenProgress((l) => lines.push(l))
    progress(0, 0)
    expect(lines).toEqual([])
  })
})
