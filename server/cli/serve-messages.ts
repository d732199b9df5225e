import type { AuthStatus } from '../../node/daemon/account-lifecycle.ts'

/** Between two progress lines while the account's spaces are listed at start (the first and last always print). */
export const PROGRESS_EVERY_MS = 1000

/**
 * Start-up progress for stderr: "listing spaces 120/500", at most once a second, then the
 * total and the time it took. The spaces open after, on demand and by recency
 * (sync/space/residency.ts). Silent when the account holds no space.
 */
export function spaceOpenProgress(write: (line: string) => void, now: () => number = Date.now) {
  const started = now()
  let last = -Infinity
  return (opened: number, total: number) => {
    if (total === 0) return
    const t = now()
    if (opened === total) {
      write(`svc serve: listed ${total} space${total === 1 ? '' : 's'} in ${((t - started) / 1000).toFixed(1)} s; they open on demand\n`)
      return
    }
    if (t - last < PROGRESS_EVERY_MS) return
    last = t
    write(`svc serve: listing spaces ${opened}/${total}\n`)
  }
}

/**
 * What a standalone server that booted no account tells its user: how to create one, or how
 * to pick one of several on disk. Undefined when nothing needs saying.
 */
export function noAccountHint(status: AuthStatus, url: string): string | undefined {
  if (status.authorized || status.mode !== 'standalone') return undefined
  if (status.accounts.length === 0) {
    return (
      'svc serve: no account on this data directory yet. Create one (prints its recovery phrase once):\n' +
      `  svc auth create --url ${url}\n` +
      `  or: curl -X POST -H 'content-type: application/json' -d '{}' ${url}/v1/auth\n`
    )
  }
  const ids = status.accounts.map((a) => a.id).join(', ')
  return (
    `svc serve: ${status.accounts.length} accounts on this data directory (${ids}); none booted. Pick one:\n` +
    `  svc auth select ACCOUNT_ID --url ${url}   (or start with --account ACCOUNT_ID)\n`
  )
}
