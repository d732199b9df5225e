/**
 * `npm run health:code`: the counts that say whether the code stays easy to carry on, printed as
 * JSON so two commits can be compared (issue 34's closing note quotes them before and after).
 * Counted with the TypeScript parser, not with text patterns, so `import * as x` is not a cast
 * and a comment inside an empty catch still leaves it silent.
 *
 * - asCasts: `x as T` and `<T>x` in source (not tests, not the generated client types); `as const`
 *   is not counted, it asserts nothing.
 * - silentCatches: `catch {}` blocks with no statement, and `.catch(fn)` whose handler does
 *   nothing (`() => undefined`, `() => {}`).
 * - filesOver400Lines, functionsOver80Lines: source and tests alike.
 * - configKeyPlaces: for sample `svc serve` keys, the top-level declarations of the config
 *   module that state the key (as a name, a `--flag` or an `SVC_` variable).
 * - chatMessageShapePlaces: the declarations that spell out a chat message's fields (probed by
 *   its `replyToMessageId` field) outside tests and generated files.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs'
import { join, relative, sep } from 'node:path'
import ts from 'typescript'

const root = join(import.meta.dirname, '..')
const SOURCE_DIRS = ['sync', 'node', 'server', 'sim', 'scripts', 'bench']
const TEST_DIRS = ['test']
const GENERATED = new Set(['server/client/api-types.ts'])
const CONFIG_KEYS: Record<string, RegExp> = {
  filesGcInterval: /filesGcInterval|gcInterval|files-gc-interval|SVC_FILES_GC_INTERVAL/,
  cursorTimeoutMs: /cursorTimeoutMs|cursor-timeout|SVC_CURSOR_TIMEOUT_MS/,
  modelUrl: /modelUrl|model-url|SVC_MODEL_URL/,
  noMdns: /noMdns|no-mdns|SVC_NO_MDNS/,
  p2pListen: /p2pListen|p2p-listen|SVC_P2P_LISTEN/,
  durability: /durability|SVC_DURABILITY/,
}

function files(dir: string): string[] {
  const abs = join(root, dir)
  let names: string[]
  try {
    names = readdirSync(abs)
  } catch {
    return [] // a folder this commit does not have
  }
  const out: string[] = []
  for (const name of names) {
    if (name === 'node_modules' || name === 'dist') continue
    const p = join(abs, name)
    if (statSync(p).isDirectory()) out.push(...files(relative(root, p)))
    else if (/\.(ts|mts)$/.test(name) && !name.endsWith('.d.ts')) out.push(relative(root, p).split(sep).join('/'))
  }
  return out
}

const parse = (f: string) => ts.createSourceFile(f, readFileSync(join(root, f), 'utf8'), ts.ScriptTarget.Latest, true)

function walk(node: ts.Node, visit: (n: ts.Node) => void): void {
  visit(node)
  node.forEachChild((c) => walk(c, visit))
}

const isNoOpHandler = (n: ts.Node): boolean => {
  if (!ts.isArrowFunction(n) && !ts.isFunctionExpression(n)) return false
  const body = n.body
  if (ts.isBlock(body)) return body.statements.length === 0
  return (ts.isIdentifier(body) && body.text === 'undefined') || ts.isVoidExpression(body)
}

const lineOf = (sf: ts.SourceFile, pos: number) => sf.getLineAndCharacterOfPosition(pos).line

function main(): void {
  const source = SOURCE_DIRS.flatMap(files).filter((f) => !GENERATED.has(f))
  const tests = TEST_DIRS.flatMap(files)
  let asCasts = 0
  let silentCatches = 0
  const longFiles: string[] = []
  const longFunctions: string[] = []
  const chatShape: string[] = []
  const silent: string[] = []
  const castsByFolder: Record<string, number> = {}
  for (const f of [...source, ...tests]) {
    const sf = parse(f)
    const isSource = !f.startsWith('test/')
    if (sf.getLineAndCharacterOfPosition(sf.end).line + 1 > 400) longFiles.push(f)
    walk(sf, (n) => {
      if (isSource && (ts.isAsExpression(n) || ts.isTypeAssertionExpression(n))) {
        const t = n.type
        const asConst = ts.isTypeReferenceNode(t) && ts.isIdentifier(t.typeName) && t.typeName.text === 'const'
        if (!asConst) {
          asCasts++
          const top = f.split('/')[0]
          castsByFolder[top] = (castsByFolder[top] ?? 0) + 1
        }
      }
      const emptyCatch = ts.isCatchClause(n) && n.block.statements.length === 0
      const noOpCatch =
        ts.isCallExpression(n) && ts.isPropertyAccessExpression(n.expression) && n.expression.name.text === 'catch' && n.arguments.length === 1 && isNoOpHandler(n.arguments[0])
      if (isSource && (emptyCatch || noOpCatch)) {
        silentCatches++
        silent.push(`${f}:${lineOf(sf, n.getStart(sf)) + 1}`)
      }
      if (ts.isFunctionDeclaration(n) || ts.isMethodDeclaration(n) || ts.isArrowFunction(n) || ts.isFunctionExpression(n) || ts.isConstructorDeclaration(n)) {
        const lines = lineOf(sf, n.end) - lineOf(sf, n.getStart(sf)) + 1
        // A test's describe/it callback is a list of cases, not a function anyone reads as one.
        const isTestBlock = !isSource && ts.isCallExpression(n.parent) && ts.isIdentifier(n.parent.expression) && ['describe', 'it', 'test'].includes(n.parent.expression.text)
        if (lines > 80 && !isTestBlock) longFunctions.push(`${f}:${lineOf(sf, n.getStart(sf)) + 1} (${lines})`)
      }
      // A declaration of the field (a type's member, or a schema's: its value a schema call or
      // object), not a use of it such as `{ replyToMessageId: event.messageId }`.
      const declaresField = ts.isPropertySignature(n) || (ts.isPropertyAssignment(n) && (ts.isCallExpression(n.initializer) || ts.isObjectLiteralExpression(n.initializer)))
      if (isSource && declaresField && n.name.getText(sf).replace(/['"]/g, '') === 'replyToMessageId') chatShape.push(`${f}:${lineOf(sf, n.getStart(sf)) + 1}`)
    })
  }
  const configFiles = files('server/cli').filter((f) => /serve-config|config-table/.test(f))
  const configKeyPlaces: Record<string, number> = {}
  for (const [key, re] of Object.entries(CONFIG_KEYS)) {
    let n = 0
    for (const f of configFiles) for (const st of parse(f).statements) if (!ts.isImportDeclaration(st) && re.test(st.getText())) n++
    configKeyPlaces[key] = n
  }
  const places = Object.values(configKeyPlaces)
  console.log(
    JSON.stringify(
      {
        asCasts,
        castsByFolder,
        silentCatches,
        filesOver400Lines: longFiles.length,
        functionsOver80Lines: longFunctions.length,
        configKeyPlaces,
        configKeyPlacesMean: Math.round((places.reduce((a, b) => a + b, 0) / places.length) * 10) / 10,
        chatMessageShapePlaces: chatShape.length,
        detail: process.argv.includes('--detail') ? { longFiles, longFunctions, chatShape, silentCatches: silent } : undefined,
      },
      null,
      2,
    ),
  )
}

main()
