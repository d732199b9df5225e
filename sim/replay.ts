import type { DrawOptions } from './config.ts'

/**
 * The command that runs `seed` again exactly as a sweep ran it: every option that changes what a
 * seed draws or does (`--jobs` does not; `--verbose` prints the seed's line and trace hash). The
 * CLI sets no other RunOptions field that changes a run (`maxLivenessRounds` has no flag).
 */
export function replayCommand(seed: number, opts: DrawOptions): string {
  const flags = [`--seed ${seed}`, `--peers ${opts.maxPeers}`]
  if (opts.exactPeers) flags.push('--exact-peers')
  if (opts.scale !== undefined && opts.scale !== 1) flags.push(`--scale ${opts.scale}`)
  if (opts.adversaries) flags.push(`--adversaries ${opts.adversaries}`)
  if (opts.hubs) flags.push(`--hubs ${opts.hubs}`)
  if (opts.concurrentAdmins === true) flags.push('--concurrent-admins')
  if (opts.concurrentAdmins === false) flags.push('--owner-admin')
  return `npm run sim -- ${flags.join(' ')} --verbose`
}
