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
  api: async () => (await import('./api.ts')).benchApi,
  lanBacklog: async () => (await import('./lan.ts')).benchLan,
  aggregate: async () => (await import('./aggregate.ts')).benchAggregate,
  editor: async () => (await import('./editor.ts')).benchEditor,
  history: async () => (await import('./history.ts')).benchHistory,
  hostile: async () => (await import('./hostile.ts')).benchHostile,
  sharing: async () => (await import('./sharing.ts')).benchSharing,
  identities: async () => (await import('./identities.ts')).benchIdentities,
  acl: async () => (await import('./acl.ts')).benchAcl,
  chat: async () => (await import('./chat.ts')).benchChat,
  events: async () => (await import('./events.ts')).benchEvents,
  browser: async () => (await import('./browser.ts')).benchBrowser,
  agents: async () => (await import('./agents.ts')).benchAgents,
  search: async () => (await import('./search.ts')).benchSearch,
  ytext: async () => (await import('./ytext.ts')).benchYtext,
  peers: async () => (await import('./peers.ts')).benchPeers,
  files: async () => (await import('./files.ts')).benchFiles,
  push: async () => (await import('./push.ts')).benchPush,
  sqliteLayout: async () => (await import('./sqlite-layout.ts')).benchSqliteLayout,
  hub: async () => (await import('./hub.ts')).benchHub,
  scale: async () => (await import('./scale.ts')).benchScale,
  scaleRss: async () => (await import('./scale-rss.ts')).benchScaleRss,
  app: async () => (await import('./app.ts')).benchApp,
  cli: async () => (await import('./cli.ts')).benchCli,
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
