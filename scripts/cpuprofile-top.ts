/**
 * Prints where a V8 CPU profile spent its time: self time per function and per package or
 * source folder, as JSON. Used for the side-by-side benchmark's profiles (docs/performance.md):
 *
 *   SVC_SPAWN_NODE_FLAGS="--cpu-prof --cpu-prof-dir=/tmp/prof" npm run bench -- --only peers ...
 *   npx tsx scripts/cpuprofile-top.ts /tmp/prof/CPU.*.cpuprofile [--top 25]
 *
 * Every daemon the bench spawns (test/server/process.ts, spawnSvc) gets those flags and writes its
 * own profile when it exits cleanly (SIGTERM; a SIGKILLed one writes none); pass the ones of
 * interest (the daemons' are the large ones). Node 22 refuses --cpu-prof in NODE_OPTIONS.
 */
import { readFileSync } from 'node:fs'

interface ProfileNode {
  id: number
  callFrame: { functionName: string; url: string; lineNumber: number }
  hitCount?: number
}

interface Profile {
  nodes: ProfileNode[]
  samples: number[]
  timeDeltas: number[]
  startTime: number
  endTime: number
}

/** A folder a frame's time is charged to: its npm package, our source folder, or Node/V8. */
function area(url: string, name: string): string {
  if (!url) return name.startsWith('(') ? name : '(native)'
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url)
  if (pkg) return pkg[1]
  if (url.startsWith('node:')) return 'node:' + url.slice(5).split('/')[0]
  const own = /\/(sync|node|server|app|bench|sim|dist)\/([^/]+)/.exec(url)
  return own ? `${own[1]}/${own[2]}` : url
}

function summarize(path: string, top: number) {
  const p = JSON.parse(readFileSync(path, 'utf8')) as Profile
  const byId = new Map(p.nodes.map((n) => [n.id, n]))
  // Time per sample is the delta that follows it; attribute it to the sampled (leaf) frame.
  const selfUs = new Map<number, number>()
  for (let i = 0; i < p.samples.length; i++) selfUs.set(p.samples[i], (selfUs.get(p.samples[i]) ?? 0) + (p.timeDeltas[i + 1] ?? 0))
  const fns = new Map<string, number>()
  const areas = new Map<string, number>()
  let total = 0
  for (const [id, us] of selfUs) {
    const n = byId.get(id)
    if (!n) continue
    const { functionName, url, lineNumber } = n.callFrame
    if (functionName === '(idle)' || functionName === '(program)') continue
    total += us
    const key = `${functionName || '(anonymous)'} ${url.split('/').slice(-2).join('/')}:${lineNumber + 1}`
    fns.set(key, (fns.get(key) ?? 0) + us)
    const a = area(url, functionName)
    areas.set(a, (areas.get(a) ?? 0) + us)
  }
  const rank = (m: Map<string, number>) =>
    [...m]
      .sort((x, y) => y[1] - x[1])
      .slice(0, top)
      .map(([k, us]) => ({ name: k, ms: Math.round(us / 100) / 10, share: Math.round((us / total) * 1000) / 1000 }))
  return { profile: path, wallMs: Math.round((p.endTime - p.startTime) / 1000), busyMs: Math.round(total / 1000), functions: rank(fns), areas: rank(areas) }
}

const args = process.argv.slice(2)
const topAt = args.indexOf('--top')
const top = topAt >= 0 ? Number(args[topAt + 1]) : 20
const files = args.filter((a, i) => a !== '--top' && i !== topAt + 1)
if (!files.length) {
  process.stderr.write('usage: tsx scripts/cpuprofile-top.ts PROFILE... [--top N]\n')
  process.exit(2)
}
process.stdout.write(
  JSON.stringify(
    files.map((f) => summarize(f, top)),
    null,
    1,
  ) + '\n',
)
