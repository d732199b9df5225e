#!/usr/bin/env -S node --max-semi-space-size=64
// `svc` launcher, the package's bin (issue 39, items 1 and 2).
//
// - It runs the CLI on the bundled Node (the `node` package, Node 22), whatever Node started
//   it: on another Node (Node 20 lacks `isMarkedAsUntransferable`, libp2p needs
//   `Promise.withResolvers`) it starts the bundled one as a child with the same arguments and
//   standard streams, passes SIGINT, SIGTERM and SIGHUP on, and exits as the child does.
//   Without a bundled Node it runs on the current one if that is Node 22 or later.
// - It loads the compiled CLI, dist/cli/main.js (`npm run build`, scripts/build.ts), so that
//   no command compiles TypeScript at its start. Without a build (a clone before its first
//   `npm install`), or with SVC_FROM_SOURCE=1, it loads the TypeScript through tsx.
// - The young generation is raised to 64 MB (docs/operations.md, "Memory and GC"): ingest of a
//   sync backlog allocates many short-lived objects, and the default 16 MB semi-space let
//   scavenges take a large share of the daemon's main thread. The shebang passes it when the
//   bundled Node is the one on the PATH (npm scripts, `npx`); the child gets it otherwise.
import { spawn } from 'node:child_process'
import { existsSync, realpathSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'

const here = dirname(fileURLToPath(import.meta.url))
const root = join(here, '..', '..')
const V8_FLAGS = ['--max-semi-space-size=64']

/** The bundled Node's binary (`node` package), wherever npm placed the package; or undefined. */
function bundledNode() {
  // Beside the launcher's package: a clone, or a global install (npm nests dependencies there).
  const local = fileURLToPath(new URL('../../node_modules/node/bin/node', import.meta.url))
  if (existsSync(local)) return local
  try {
    const bin = join(dirname(createRequire(import.meta.url).resolve('node/package.json')), 'bin', 'node')
    return existsSync(bin) ? bin : undefined
  } catch {
    return undefined
  }
}

const real = (p) => {
  try {
    return realpathSync(p)
  } catch {
    return p
  }
}

const node = process.env.SVC_LAUNCHED === '1' ? undefined : bundledNode()
if (node !== undefined && real(node) !== real(process.execPath)) {
  const child = spawn(node, [...V8_FLAGS, fileURLToPath(import.meta.url), ...process.argv.slice(2)], {
    stdio: 'inherit',
    env: { ...process.env, SVC_LAUNCHED: '1' },
  })
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) process.on(signal, () => child.kill(signal))
  child.on('error', (err) => {
    process.stderr.write(`svc: cannot start the bundled Node (${node}): ${err.message}\n`)
    process.exit(1)
  })
  child.on('exit', (code, signal) => {
    if (signal) {
      process.removeAllListeners(signal)
      process.kill(process.pid, signal)
    }
    process.exit(code ?? 1)
  })
} else {
  const major = Number(process.versions.node.split('.')[0])
  if (major < 22) {
    process.stderr.write(
      `svc: needs Node 22 or later, this is Node ${process.versions.node}, and the bundled Node (the \`node\` package) is not installed; reinstall svc, or run it with Node 22\n`,
    )
    process.exit(1)
  }
  const built = join(root, 'dist', 'cli', 'main.js')
  if (process.env.SVC_FROM_SOURCE !== '1' && existsSync(built)) {
    await import(pathToFileURL(built).href)
  } else {
    const { register } = await import('tsx/esm/api')
    register()
    await import('./main.ts')
  }
}
