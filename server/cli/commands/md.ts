import { spawn } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fetchApi, need, parseClientArgs, show } from '../client.ts'
import { EXIT, readAll, UsageError, type Command } from '../io.ts'
import { COMMON_HELP } from './args.ts'
import { terminalSafe } from '../table.ts'

const USAGE = `usage: svc md get SPACE_ID OBJECT_ID
       svc md put SPACE_ID OBJECT_ID [--file FILE]        (markdown on stdin without --file)
       svc md append SPACE_ID OBJECT_ID [--file FILE]
       svc md replace SPACE_ID OBJECT_ID OLD_TEXT NEW_TEXT [--all]
       svc md edit SPACE_ID OBJECT_ID                     (opens $VISUAL or $EDITOR, saves on exit)
  The object's editor document as markdown (docs/editor.md); --collection picks another editor
  dataset than editor_blocks (a type's own: TYPEID_KEY). get prints the markdown; put, append,
  replace and edit print what changed (inserted, updated, deleted, unchanged blocks).
${COMMON_HELP}`

const SUBCOMMANDS = ['get', 'put', 'append', 'replace', 'edit']

/** Runs the user's editor on a file, through the shell so `EDITOR="code -w"` works. */
function runEditor(editor: string, file: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const child = spawn('sh', ['-c', `${editor} "$1"`, 'svc-md-edit', file], { stdio: 'inherit' })
    child.on('error', reject)
    child.on('exit', (code) => resolve(code ?? 1))
  })
}

const summary = (d: { inserted: number; updated: number; deleted: number; unchanged: number }) =>
  `inserted ${d.inserted}, updated ${d.updated}, deleted ${d.deleted}, unchanged ${d.unchanged}\n`

export const mdCommand: Command = {
  name: 'md',
  summary: "read, write or edit an object's markdown (the editor document)",
  usage: USAGE,
  async run(args, io) {
    const { ctx, values, positionals } = parseClientArgs(args, { collection: { type: 'string' }, file: { type: 'string' }, all: { type: 'boolean' } }, io, USAGE)
    const [sub, ...rest] = positionals
    if (sub === undefined || !SUBCOMMANDS.includes(sub))
      throw new UsageError(`svc md: ${sub === undefined ? 'missing a subcommand' : `unknown subcommand ${sub}`} (${SUBCOMMANDS.join(', ')})\n${USAGE}`)
    const names = sub === 'replace' ? ['SPACE_ID', 'OBJECT_ID', 'OLD_TEXT', 'NEW_TEXT'] : ['SPACE_ID', 'OBJECT_ID']
    const [spaceId, objectId, oldText, newText] = need(`md ${sub}`, rest, names, USAGE) as [string, string, string?, string?]
    const path = { spaceId, objectId, collection: (values.collection as string | undefined) ?? 'editor_blocks' }
    const params = { params: { path } }
    // GET /markdown answers markdown text by default (spec); the client reads the JSON form.
    const jsonForm = { ...params, headers: { accept: 'application/json' } }
    const textOf = (d: string | { markdown: string }) => (typeof d === 'string' ? d : d.markdown)
    const content = async () => (values.file !== undefined ? readFileSync(values.file as string, 'utf8') : readAll(io.stdin))
    switch (sub) {
      case 'get':
        // Raw into a file or a pipe (`svc md get ... > doc.md` round-trips); on a terminal, control
        // characters a member wrote into the document are shown, not obeyed.
        return show(
          ctx,
          (c) => c.GET('/v1/spaces/{spaceId}/objects/{objectId}/editor/{collection}/markdown', jsonForm),
          (d) => ((io.stdout as { isTTY?: boolean }).isTTY ? terminalSafe(textOf(d), '\n\t') : textOf(d)),
        )
      case 'put': {
        const body = { content: await content() }
        return show(ctx, (c) => c.PUT('/v1/spaces/{spaceId}/objects/{objectId}/editor/{collection}/markdown', { ...params, body }), summary)
      }
      case 'append': {
        const body = { content: await content() }
        return show(ctx, (c) => c.POST('/v1/spaces/{spaceId}/objects/{objectId}/editor/{collection}/markdown/append', { ...params, body }), summary)
      }
      case 'replace': {
        const body = { edits: [{ oldText: oldText!, newText: newText!, ...(values.all === true ? { replaceAll: true } : {}) }] }
        return show(ctx, (c) => c.PATCH('/v1/spaces/{spaceId}/objects/{objectId}/editor/{collection}/markdown', { ...params, body }), summary)
      }
      case 'edit': {
        const editor = io.env.VISUAL || io.env.EDITOR
        if (!editor) throw new UsageError('svc md edit: set $EDITOR (or $VISUAL) to your editor, e.g. EDITOR=nano')
        const before = await fetchApi(ctx, (c) => c.GET('/v1/spaces/{spaceId}/objects/{objectId}/editor/{collection}/markdown', jsonForm))
        if (!before.ok) return before.code
        const dir = mkdtempSync(join(tmpdir(), 'svc-md-'))
        const file = join(dir, `${objectId.slice(0, 12)}.md`)
        try {
          writeFileSync(file, textOf(before.data))
          const code = await runEditor(editor, file)
          if (code !== 0) {
            io.stderr.write(`svc md edit: the editor exited ${code}; nothing saved\n`)
            return EXIT.user
          }
          const after = readFileSync(file, 'utf8')
          if (after === textOf(before.data)) {
            io.stderr.write('svc md edit: no change\n')
            return EXIT.ok
          }
          return await show(ctx, (c) => c.PUT('/v1/spaces/{spaceId}/objects/{objectId}/editor/{collection}/markdown', { ...params, body: { content: after } }), summary)
        } finally {
          rmSync(dir, { recursive: true, force: true })
        }
      }
    }
    throw new UsageError(USAGE)
  },
}
