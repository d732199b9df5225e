import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { ERROR_STATUS, ErrorStatuses, errorBody } from '../../server/errors.ts'
import { SERVER_MODULES } from '../../server/modules/index.ts'
import { ERROR_CODES, isCoreErrorCode, SvcError } from '../../sync/core/errors.ts'
import { REPO } from './process.ts'

// The contract, as the repository carries it (docs/spec/, copied verbatim); the table must follow it.
const SPEC = join(REPO, 'docs', 'spec')
const core = readFileSync(join(SPEC, 'core.md'), 'utf8')
const chat = readFileSync(join(SPEC, 'chat.md'), 'utf8')

const section = (text: string, heading: string) => {
  const start = text.indexOf(`\n${heading}\n`)
  const end = text.indexOf('\n## ', start + heading.length + 2)
  expect(start).toBeGreaterThan(0)
  return text.slice(start, end < 0 ? undefined : end)
}

// What the release's app answers with: the core table plus the modules' own codes.
const table = Object.fromEntries(new ErrorStatuses(SERVER_MODULES).all()) as Record<string, number>

describe('error status table', () => {
  it('has every code of the core Errors section, with the status the spec gives', () => {
    const errors = section(core, '## Errors')
    const withStatus = [...errors.matchAll(/`([a-z_]+\.[a-z_]+)` \((\d{3})/g)]
    expect(withStatus.length).toBeGreaterThan(70)
    for (const [, code, status] of withStatus) expect([code, table[code]]).toEqual([code, Number(status)])
    // codes named without a status (space.not_joined) still need a row; upsert.* live inside 200s
    const named = new Set([...errors.matchAll(/`([a-z_]+\.[a-z_]+)`/g)].map((m) => m[1]).filter((c) => !c.startsWith('details.')))
    expect(named.has('space.not_joined')).toBe(true)
    for (const code of named) if (!code.startsWith('upsert.') || code === 'upsert.requires_user_ids') expect(table).toHaveProperty([code])
    expect(table.internal).toBe(500)
  })

  it('has every code of Authentication 5 with its status', () => {
    const auth = section(core, '## Authentication')
    const listed = [...auth.matchAll(/(\d{3}) `([a-z_]+\.[a-z_]+)`/g)]
    expect(listed.length).toBeGreaterThanOrEqual(10)
    for (const [, status, code] of listed) expect([code, table[code]]).toEqual([code, Number(status)])
  })

  it('has every chat, events, push and process code', () => {
    const rows = [...section(chat, '## Errors').matchAll(/^\| ([a-z_]+\.[a-z_]+) \| (\d{3}) \|/gm)]
    expect(rows.length).toBeGreaterThan(10)
    for (const [, code, status] of rows) expect([code, table[code]]).toEqual([code, Number(status)])
  })

  it('gives every code of the core union a status, and no code outside it', () => {
    expect(Object.keys(ERROR_STATUS).sort()).toEqual([...ERROR_CODES].sort())
    expect(new Set(ERROR_CODES).size).toBe(ERROR_CODES.length)
    for (const code of ERROR_CODES) expect([code, typeof ERROR_STATUS[code]]).toEqual([code, 'number'])
  })

  it("gives every module's declared code a status, from its server module", () => {
    const statuses = new ErrorStatuses(SERVER_MODULES)
    for (const m of SERVER_MODULES) for (const code of m.errorCodes ?? []) expect([code, statuses.has(code)]).toEqual([code, true])
    expect(statuses.statusOf('markdown.no_match')).toBe(400)
    expect(statuses.statusOf('chat.not_author')).toBe(403)
    // a module's code is not core: an app serving no editor does not know it
    expect(isCoreErrorCode('markdown.no_match')).toBe(false)
    expect(new ErrorStatuses([]).has('markdown.no_match')).toBe(false)
  })

  it('refuses a module that leaves a code without a status, restates a core code, or names one it does not declare', () => {
    expect(() => new ErrorStatuses([{ name: 'm', errorCodes: ['markdown.no_match'] }])).toThrow(/no HTTP status/)
    expect(() => new ErrorStatuses([{ name: 'm', errorCodes: ['space.not_found'], errorStatus: { 'space.not_found': 404 } as never }])).toThrow(/already declared/)
    expect(() => new ErrorStatuses([{ name: 'm', errorStatus: { 'chat.not_found': 404 } }])).toThrow(/does not declare/)
    const twice = { name: 'm', errorCodes: ['chat.not_found'], errorStatus: { 'chat.not_found': 404 } } as const
    expect(() => new ErrorStatuses([twice, { ...twice, name: 'n' }])).toThrow(/already declared/)
  })

  it('makes a misspelled code a type error', () => {
    // @ts-expect-error: 'space.not_fonud' is not an ErrorCode (typecheck fails if this compiles)
    const err = new SvcError('space.not_fonud', 'typo')
    expect(new ErrorStatuses(SERVER_MODULES).has(err.code)).toBe(false)
    expect(isCoreErrorCode('space.not_found')).toBe(true)
  })

  it('uses only statuses the API answers with', () => {
    for (const status of Object.values(table)) expect([400, 401, 403, 404, 405, 408, 409, 413, 415, 431, 500, 501, 503]).toContain(status)
  })

  it('builds the envelope, with details only when given', () => {
    expect(errorBody('request.schema', 'm')).toEqual({ error: { code: 'request.schema', message: 'm' } })
    expect(errorBody('request.schema', 'm', { pid: 1 })).toEqual({ error: { code: 'request.schema', message: 'm', details: { pid: 1 } } })
  })
})
