import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { main } from '../../server/cli/dispatch.ts'
import { VERSION } from '../../server/version.ts'
import { memoryIO } from '../server/process.ts'
import { bootApp, listen, type Booted } from '../routes/helpers.ts'
import { svcAt } from './helpers.ts'

let b: Booted
let url: string
let space: string
let taskType: string
let doneProp: string
let prioProp: string
beforeAll(async () => {
  b = await bootApp()
  url = await listen(b.app)
  space = (await svc('spaces', 'create', 'CLI')).out.trim()
  taskType = (await svc('types', 'create', space, 'task', '--name', 'Task')).out.trim()
  doneProp = (await svc('props', 'create', space, 'task', 'Done', '--kind', 'boolean', '--key', 'done')).out.trim()
  prioProp = (await svc('props', 'create', space, 'task', 'Priority', '--kind', 'number', '--key', 'priority')).out.trim()
}, 60_000)
afterAll(() => b?.close())

const svc = (...args: string[]) => svcAt(url, args)

describe('svc types and props', () => {
  it('create prints ids; list shows xKey and name next to the id; --json prints the API answer', async () => {
    expect(space).toMatch(/^\w{20,}$/)
    expect(taskType).toMatch(/^\w{20,}$/)
    const types = await svc('types', space)
    expect(types.code).toBe(0)
    expect(types.out).toMatch(/^XKEY\s+NAME\s+ID$/m)
    expect(types.out).toMatch(new RegExp(`^task\\s+Task\\s+${taskType}$`, 'm'))
    const json = await svc('types', 'list', space, '--json')
    expect(json.json().types.map((t: { xKey: string }) => t.xKey)).toContain('task')
    const props = await svc('props', space, 'task')
    expect(props.out).toMatch(new RegExp(`^done\\s+Done\\s+boolean\\s+${doneProp}$`, 'm'))
    expect(props.out).toMatch(new RegExp(`^priority\\s+Priority\\s+number\\s+${prioProp}$`, 'm'))
    // The type by name works as well as by xKey or id.
    expect((await svc('types', 'get', space, 'Task', '--json')).json()).toMatchObject({ id: taskType, xKey: 'task' })
    expect((await svc('props', space, taskType, '--json')).json().properties).toHaveLength(2)
    const conflict = await svc('types', 'create', space, 'task')
    expect(conflict.code).toBe(1)
    expect(conflict.err).toContain('409 type.xkey_conflict')
    expect((await svc('props', 'create', space, 'task', 'X')).err).toContain('missing --kind')
  })
})

describe('svc objects with xKey paths', () => {
  it('creates, filters and sorts by note.status-style paths and shows values under readable names', async () => {
    const a = (await svc('objects', 'create', space, '--type', 'task', '--name', 'Alpha', '--set', 'task.done=false', '--set', 'task.priority=2')).out.trim()
    const c = (await svc('objects', 'create', space, '--type', 'task', '--name', 'Charlie', '--set', 'done=true', '--set', 'priority=1')).out.trim()
    const bb = (await svc('objects', 'create', space, '--type', 'task', '--name', 'Bravo', '--set', 'task.done=false', '--set', 'task.priority=3')).out.trim()
    const rows = await svc('objects', 'query', space, '--filter', '{"task.done":false}', '--sort', '-task.priority', '--json')
    expect(rows.code).toBe(0)
    expect(rows.json().records.map((r: { id: string }) => r.id)).toEqual([bb, a])
    expect(rows.json().records[0][taskType]).toEqual({ [doneProp]: false, [prioProp]: 3 })
    // `--sort -core.name` is a descending sort, not "argument is ambiguous"
    const byName = await svc('objects', 'query', space, '--sort', '-core.name', '--filter', '{"core.types":"' + taskType + '"}', '--json')
    expect(byName.err).toBe('')
    expect(byName.json().records.map((r: { core: { name: string } }) => r.core.name)).toEqual(['Charlie', 'Bravo', 'Alpha'])
    const eqForm = await svc('objects', 'query', space, '--sort=-priority', '--limit', '1', '--json')
    expect(eqForm.err).toBe('')
    expect(eqForm.json().records[0].id).toBe(bb)
    // $or branches resolve too
    const or = await svc('objects', 'query', space, '--filter', '{"$or":[{"priority":1},{"task.priority":2}]}', '--sort', 'core.name', '--json')
    expect(or.json().records.map((r: { id: string }) => r.id)).toEqual([a, c])

    const table = await svc('objects', 'query', space, '--filter', '{"task.done":false}', '--sort', 'core.name', '--total')
    expect(table.out).toMatch(/^ID\s+NAME\s+TYPES\s+task\.done\s+task\.priority$/m)
    expect(table.out).toMatch(new RegExp(`^${a}\\s+Alpha\\s+task\\s+false\\s+2$`, 'm'))
    expect(table.out).toContain('total 2')

    expect((await svc('objects', 'set', space, a, 'task.priority=9', 'core.name=Alpha 2')).code).toBe(0)
    const got = await svc('objects', 'get', space, a, '--json')
    expect(got.json().records[0]).toMatchObject({ core: { name: 'Alpha 2' }, [taskType]: { [prioProp]: 9 } })
    expect((await svc('objects', 'delete', space, c)).code).toBe(0)
    // A missing object is an error (issue 39 item 6): exit 1, the envelope's code on stderr, nothing on stdout.
    const gone = await svc('objects', 'get', space, c)
    expect(gone.code).toBe(1)
    expect(gone.out).toBe('')
    expect(gone.err).toContain('object.not_found')
    expect(gone.err).toContain(c)
  })

  it('says which types share a key when a bare key is ambiguous, and which properties exist when none matches', async () => {
    await svc('types', 'create', space, 'bug', '--name', 'Bug')
    await svc('props', 'create', space, 'bug', 'Priority', '--kind', 'number', '--key', 'priority')
    const amb = await svc('objects', 'query', space, '--sort', 'priority')
    expect(amb.code).toBe(1)
    expect(amb.err).toContain('"priority" is ambiguous')
    expect(amb.err).toContain('task.priority')
    expect(amb.err).toContain('bug.priority')
    // The qualified form still works
    expect((await svc('objects', 'query', space, '--sort', 'bug.priority')).code).toBe(0)
    const unknown = await svc('objects', 'query', space, '--filter', '{"task.colour":"red"}')
    expect(unknown.code).toBe(1)
    expect(unknown.err).toContain('type task has no property "colour" (properties: done, priority)')
    expect((await svc('objects', 'create', space, '--type', 'nosuch')).err).toContain('no type "nosuch"')
  })
})

describe('svc subscribe', () => {
  it('resolves xKey paths and stops after --frames frames', async () => {
    const m = memoryIO('', { SVC_URL: url })
    const done = main(['subscribe', space, '--filter', '{"task.done":false}', '--sort', '-task.priority', '--limit', '5', '--frames', '3'], m.io)
    for (let i = 0; i < 400 && !m.out().includes('"snapshot"'); i++) await new Promise((r) => setTimeout(r, 25))
    expect(m.out()).toContain('"snapshot"')
    await svc('objects', 'create', space, '--type', 'task', '--name', 'Live', '--set', 'task.done=false', '--set', 'task.priority=100')
    expect(await done).toBe(0)
    const frames = m
      .out()
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { event: string; data: any })
    expect(frames.map((f) => f.event)).toEqual(['ready', 'snapshot', 'changes'])
    expect(frames[2].data[0].added[0].doc.core.name).toBe('Live')
    expect((await svc('subscribe', space, '--sort', 'task.nope')).err).toContain('has no property "nope"')
  })
})

describe('svc md', () => {
  it('put, get, replace, append and edit through $EDITOR', async () => {
    expect((await svc('types', 'part', space, 'task', 'body', '--editor')).code).toBe(0)
    const obj = (await svc('objects', 'create', space, '--type', 'task', '--name', 'Doc')).out.trim()
    const put = await svc('md', 'put', space, obj, '--json')
    expect(put.code).toBe(0)
    const written = await svcAt(url, ['md', 'put', space, obj], { stdin: '# Title\n\nSome *text*.\n' })
    expect(written.out).toBe('inserted 2, updated 0, deleted 0, unchanged 0\n')
    expect((await svc('md', 'get', space, obj)).out).toBe('# Title\n\nSome *text*.\n')
    expect((await svc('md', 'replace', space, obj, 'Some', 'More')).out).toBe('inserted 0, updated 1, deleted 0, unchanged 1\n')
    const noMatch = await svc('md', 'replace', space, obj, 'absent', 'x')
    expect(noMatch.code).toBe(1)
    expect(noMatch.err).toContain('400 markdown.no_match')
    await svcAt(url, ['md', 'append', space, obj], { stdin: '- a list item\n' })
    expect((await svc('md', 'get', space, obj, '--json')).json()).toEqual({ markdown: '# Title\n\nMore *text*.\n\n- a list item\n' })

    const dir = mkdtempSync(join(tmpdir(), 'svc-editor-'))
    try {
      const editor = join(dir, 'editor.sh')
      writeFileSync(editor, '#!/bin/sh\nsed -i "s/Title/Edited title/" "$1"\n')
      chmodSync(editor, 0o755)
      const edited = await svcAt(url, ['md', 'edit', space, obj], { env: { EDITOR: editor } })
      expect(edited).toMatchObject({ code: 0, out: 'inserted 0, updated 1, deleted 0, unchanged 2\n' })
      expect((await svc('md', 'get', space, obj)).out).toBe('# Edited title\n\nMore *text*.\n\n- a list item\n')
      const same = await svcAt(url, ['md', 'edit', space, obj], { env: { EDITOR: 'true' } })
      expect(same).toMatchObject({ code: 0, err: 'svc md edit: no change\n' })
      const failed = await svcAt(url, ['md', 'edit', space, obj], { env: { EDITOR: 'false' } })
      expect(failed.code).toBe(1)
      expect(failed.err).toContain('nothing saved')
      expect((await svcAt(url, ['md', 'edit', space, obj], { env: {} })).err).toContain('set $EDITOR')
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
    const notEditor = await svc('md', 'get', space, obj, '--collection', 'nope')
    expect(notEditor.code).toBe(1)
  })
})

describe('svc history, bundles, catalog, aggregate', () => {
  it('history lists changes with object fields labelled, and diff/at/record read a version', async () => {
    const obj = (await svc('objects', 'create', space, '--type', 'task', '--name', 'Tracked')).out.trim()
    await svc('modify', space, obj, 'notes', '--record', 'n', '--set', 'text=hello')
    const list = await svc('history', space, obj, '--json')
    expect(list.code).toBe(0)
    const changes = list.json().changes as { version: string; datasets: string[] }[]
    expect(changes[0].datasets).toEqual(['notes'])
    const table = await svc('history', space, obj)
    expect(table.out).toMatch(/^VERSION\s+TIME\s+AUTHOR\s+DATASETS\s+RECORDS\s+OPS$/m)
    expect(table.out).toMatch(new RegExp(`^${changes[0].version}\\s+\\S+\\s+\\S+\\s+notes\\s+n\\s+1$`, 'm'))
    const v = changes[0].version
    expect((await svc('history', 'diff', space, obj, v)).json().datasets.notes[0]).toMatchObject({ id: 'n', before: null, after: { text: 'hello' } })
    expect((await svc('history', 'at', space, obj, v, '--dataset', 'notes')).code).toBe(0)
    expect((await svc('history', 'record', space, obj, v, 'notes', 'n')).json()).toMatchObject({ exists: true })
    expect((await svc('history', 'diff', space, obj)).err).toContain('missing VERSION')
    // The object's own fields are the row record, listed as @row and filterable by it.
    const rowChanges = await svc('history', space, obj, '--dataset', '@row')
    expect(rowChanges.out).toMatch(/^\S+\s+\S+\s+\S+\s+@row\s+@row\s+\d+$/m)
    expect(rowChanges.out).not.toMatch(/\snotes\s/)
  })

  it('catalog list/get/setup and bundles list/get', async () => {
    const list = await svc('catalog')
    expect(list.out).toMatch(/^task-tracker\s+/m)
    expect((await svc('catalog', 'get', 'task-tracker', '--json')).json().id).toBe('task-tracker')
    expect((await svc('catalog', 'get', 'nope')).err).toContain('404 catalog.not_found')
    expect((await svc('catalog', 'setup', 'task-tracker', space)).code).toBe(0)
    const bundles = await svc('bundles', space)
    expect(bundles.out).toMatch(/^system:task-tracker\/v1\s+/m)
    expect((await svc('bundles', 'get', space, 'system:task-tracker/v1', '--json')).json().id).toBe('system:task-tracker/v1')
    const installed = await svcAt(url, ['bundles', 'install', space], { stdin: JSON.stringify({ id: 'notes/v1', name: 'Notes', derived: true, xKey: 'cli-note' }) })
    expect(installed.code).toBe(0)
    expect(installed.json()).toMatchObject({ installed: true })
  })

  it('aggregate over objects (xKeys in a leading $match) and over a dataset', async () => {
    const agg = await svc('aggregate', space, '--pipeline', '[{"$match":{"task.done":false}},{"$group":{"_id":null,"n":{"$sum":1}}}]', '--json')
    expect(agg.code).toBe(0)
    expect(agg.json().records[0].n).toBeGreaterThanOrEqual(2)
    const obj = (await svc('objects', 'create', space, '--name', 'Rows')).out.trim()
    await svc('modify', space, obj, 'rows', '--record', 'r1', '--set', 'cat=a', '--set', 'amount=2')
    await svc('modify', space, obj, 'rows', '--record', 'r2', '--set', 'cat=a', '--set', 'amount=4')
    const rows = await svc('aggregate', space, '--object', obj, '--dataset', 'rows', '--pipeline', '[{"$group":{"_id":"$cat","total":{"$sum":"$amount"}}}]')
    expect(rows.out).toMatch(/^_ID\s+TOTAL\na\s+6\n$/)
    expect((await svc('aggregate', space, '--pipeline', '{}')).err).toContain('JSON array')
    expect((await svc('aggregate', space)).err).toContain('missing --pipeline')
    expect((await svc('aggregate', space, '--pipeline', '[{"$bogus":1}]')).err).toContain('aggregate.bad_pipeline')
  })
})

describe('svc conventions', () => {
  it('--version, missing arguments named, unknown commands, cannot reach says how to start the daemon', async () => {
    const v = await svc('--version')
    expect(v).toMatchObject({ code: 0, out: `svc ${VERSION}\n` })
    expect(await svc('-v')).toMatchObject({ code: 0, out: `svc ${VERSION}\n` })
    const missing = await svc('query', space)
    expect(missing.code).toBe(1)
    for (const [args, what] of [
      [['md', 'get', space], 'missing OBJECT_ID'],
      [['objects', 'set', space], 'missing OBJECT_ID PATH=VALUE'],
      [['types', 'create', space], 'missing XKEY'],
      [['spaces', 'create'], 'missing NAME'],
      [['history'], 'missing SPACE_ID OBJECT_ID'],
      [['catalog', 'setup', 'task-tracker'], 'missing SPACE_ID'],
      [['spaces', 'get', 'a', 'b'], 'unexpected argument b'],
      [['join'], 'missing TOKEN'],
      [['invite', 'create'], 'missing SPACE_ID'],
      [['members', 'set'], 'missing SPACE_ID'],
      [['chat', 'send'], 'missing SPACE_ID'],
      [['auth'], 'missing a subcommand'],
      [['auth', 'select'], 'missing ACCOUNT_ID'],
      [['modify', space, 'o', 'd'], 'missing --record ID'],
    ] as const) {
      const r = await svc(...args)
      expect({ args, code: r.code, err: r.err.split('\n')[0] }).toMatchObject({ code: 1, err: expect.stringContaining(what) })
    }
    const down = await svcAt('http://127.0.0.1:1', ['types', space])
    expect(down.code).toBe(3)
    expect(down.err).toContain('cannot reach http://127.0.0.1:1: is the daemon running? Start it with `npm start -- --data DIR`')
    expect((await svcAt('http://127.0.0.1:1', ['spaces'])).err).toContain('npm start')
    expect((await svcAt('http://127.0.0.1:1', ['sync-status'])).err).toContain('npm start')
  })

  it('--json works on every command; sync-status shows names and labels the internal space', async () => {
    const status = await svc('sync-status')
    expect(status.code).toBe(0)
    expect(status.out).toMatch(new RegExp(`^CLI\\s+${space}\\s`, 'm'))
    expect(status.out).toContain("(internal: this account's devices)")
    const json = await svc('sync-status', '--json')
    expect(
      json.out
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l).spaceId),
    ).toContain(space)
    for (const args of [['health'], ['auth', 'status'], ['spaces'], ['catalog'], ['types', space], ['members', space], ['invite', 'list', space]]) {
      const r = await svc(...args, '--json')
      expect({ args, code: r.code }).toEqual({ args, code: 0 })
      expect(() => JSON.parse(r.out)).not.toThrow()
    }
  })
})

describe('svc open', () => {
  it('opens the web app with the browser opener ($BROWSER), prints it with --print, and refuses a daemon that does not answer', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'svc-open-'))
    try {
      const seen = join(dir, 'opened.txt')
      const browser = join(dir, 'browser.sh')
      writeFileSync(browser, `#!/bin/sh\nprintf '%s' "$1" > '${seen}'\n`)
      chmodSync(browser, 0o755)
      const opened = await svcAt(url, ['open'], { env: { BROWSER: browser } })
      expect(opened.code).toBe(0)
      expect(opened.out).toBe(`opened ${url}/\n`)
      await expect.poll(() => import('node:fs').then((fs) => (fs.existsSync(seen) ? fs.readFileSync(seen, 'utf8') : ''))).toBe(`${url}/`)
      expect((await svc('open', '--print')).out).toBe(`${url}/\n`)
      expect((await svcAt('http://127.0.0.1:9', ['open', '--print'])).code).toBe(3)
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })
})
