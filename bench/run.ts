/**
 * `npm run bench -- [--json] [--only name,name]`: runs every benchmark and prints one JSON
 * object (last on stdout). Progress goes to stderr. Every figure that has a target is a ratio
 * against a baseline measured in the same run.
 */
import { benchCore } from './core.ts'

type Bench = () => Promise<Record<string, unknown>>

const benches: Record<string, () => Promise<Bench>> = {
  core: async () => benchCore,
  headSync: async () => (await import('./headsync.ts')).benchHeadSync as Bench,
  api: async () => (await import('./api.ts')).benchApi as Bench,
  lanBacklog: async () => (await import('./lan.ts')).benchLan as Bench,
  aggregate: async () => (await import('./aggregate.ts')).benchAggregate as Bench,
  editor: async () => (await import('./editor.ts')).benchEditor as Bench,
  history: async () => (await import('./history.ts')).benchHistory as Bench,
  hostile: async () => (await import('./hostile.ts')).benchHostile as Bench,
  sharing: async () => (await import('./sharing.ts')).benchSharing as Bench,
  identities: async () => (await import('./identities.ts')).benchIdentities as Bench,
  acl: async () => (await import('./acl.ts')).benchAcl as Bench,
  chat: async () => (await import('./chat.ts')).benchChat as Bench,
  events: async () => (await import('./events.ts')).benchEvents as Bench,
  browser: async () => (await import('./browser.ts')).benchBrowser as Bench,
  agents: async () => (await import('./agents.ts')).benchAgents as Bench,
  search: async () => (await import('./search.ts')).benchSearch as Bench,
  ytext: async () => (await import('./ytext.ts')).benchYtext as Bench,
  files: async () => (await import('./files.ts')).benchFiles as Bench,
  push: async () => (await import('./push.ts')).benchPush as Bench,
  sqliteLayout: async () => (await import('./sqlite-layout.ts')).benchSqliteLayout as Bench,
}

const args = process.argv.slice(2)
const json = args.includes('--json')
const onlyArg = args.indexOf('--only')
const only = onlyArg >= 0 ? new Set(args[onlyArg + 1]?.split(',')) : undefined

const out: Record<string, unknown> = { node: process.version, startedAt: new Date().toISOString() }
for (const [name, load] of Object.entries(benches)) {
  if (only && !only.has(name)) continue
  let fn: Bench
  try {
    fn = await load()
  } catch (err) {
    out[name] = { error: `not available: ${(err as Error).message}` }
    continue
  }
  process.stderr.write(`[bench] ${name}...\n`)
  out[name] = await fn()
}
out.peakRssMB = Math.round(process.resourceUsage().maxRSS / 1024)
if (json) process.stdout.write(JSON.stringify(out) + '\n')
else process.stdout.write(JSON.stringify(out, null, 2) + '\n')
