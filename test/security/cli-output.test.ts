import { Writable } from 'node:stream'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { main } from '../../server/cli/dispatch.ts'
import { memoryIO } from '../server/process.ts'
import { bootApp, listen, type Booted } from '../routes/helpers.ts'
import { svcAt } from '../cli/helpers.ts'

/**
 * Names, xKeys and documents in a space are written by its members; the CLI prints them to the
 * user's terminal. Control sequences must be shown, never obeyed (a member could otherwise
 * rewrite the screen, set the window title or write the clipboard with OSC 52).
 */

const ESC = '\u001b'
const HOSTILE = `${ESC}[2J${ESC}]52;c;ZXZpbA==\u0007pwned\r`

let b: Booted
let url: string
let space: string
beforeAll(async () => {
  b = await bootApp()
  url = await listen(b.app)
  space = (await svcAt(url, ['spaces', 'create', 'shared'])).out.trim()
}, 60_000)
afterAll(() => b?.close())

describe('a member names types and objects with terminal control sequences', () => {
  it('tables, sync-status and error messages show them escaped', async () => {
    await svcAt(url, ['types', 'create', space, 'evil', '--name', HOSTILE])
    await svcAt(url, ['objects', 'create', space, '--type', 'evil', '--name', HOSTILE])
    for (const args of [['types', space], ['objects', 'query', space], ['sync-status']]) {
      const r = await svcAt(url, args)
      expect(r.code).toBe(0)
      // eslint-disable-next-line no-control-regex -- control characters are what this test looks for
      expect(r.out).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f]/)
    }
    const table = (await svcAt(url, ['objects', 'query', space])).out
    expect(table).toContain('\\u001b[2J\\u001b]52;c;ZXZpbA==\\u0007pwned\\u000d')
    // A type whose name is the escape: "no property" lists names from the space, escaped.
    const err = (await svcAt(url, ['objects', 'query', space, '--sort', 'evil.nope'])).err
    expect(err).not.toContain(ESC)
  })
})

describe('a member writes control sequences into a document', () => {
  it('md get prints them raw into a pipe (round trip) and escaped on a terminal', async () => {
    await svcAt(url, ['types', 'part', space, 'evil', 'body', '--editor'])
    const obj = (await svcAt(url, ['objects', 'create', space, '--type', 'evil', '--name', 'doc'])).out.trim()
    await svcAt(url, ['md', 'put', space, obj], { stdin: `Hello ${ESC}[31mred\n` })
    const piped = await svcAt(url, ['md', 'get', space, obj])
    expect(piped.out).toContain(ESC)
    let tty = ''
    const m = memoryIO('', { SVC_URL: url })
    const terminal = Object.assign(new Writable({ write: (c, _e, cb) => ((tty += String(c)), cb()) }), { isTTY: true })
    expect(await main(['md', 'get', space, obj], { ...m.io, stdout: terminal })).toBe(0)
    expect(tty).not.toContain(ESC)
    expect(tty).toContain('Hello \\u001b')
  })
})
