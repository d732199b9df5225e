import { spawn, spawnSync } from 'node:child_process'
import { chownSync, existsSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

/**
 * A throwaway PostgreSQL cluster for tests: initdb in a temp dir, started with pg_ctl listening
 * only on a unix socket in that dir (no TCP port to collide on). Debian's postgresql-15 binaries,
 * which `.ci/run` installs when missing: where they are absent the tests fail, never skip.
 */
export const PG_BIN = '/usr/lib/postgresql/15/bin'

export interface PgCluster {
  /** A connection string for the `postgres` database over the unix socket. */
  url: string
  dir: string
  stop(): void
}

/**
 * PostgreSQL refuses to run as root: when the tests do, the cluster runs as Debian's `postgres`
 * user (setpriv), which then owns the temp dir. Otherwise as whoever runs the tests.
 */
function asOwner(dir: string): string[] {
  if (process.getuid?.() !== 0) return ['env']
  const pw = spawnSync('id', ['-u', 'postgres'], { encoding: 'utf8' })
  const gid = spawnSync('id', ['-g', 'postgres'], { encoding: 'utf8' })
  if (pw.status !== 0) throw new Error('running as root and no postgres user to run PostgreSQL as')
  chownSync(dir, Number(pw.stdout.trim()), Number(gid.stdout.trim()))
  return ['setpriv', `--reuid=${pw.stdout.trim()}`, `--regid=${gid.stdout.trim()}`, '--clear-groups']
}

export function startPg(): PgCluster {
  for (const bin of ['initdb', 'pg_ctl']) {
    if (!existsSync(join(PG_BIN, bin))) throw new Error(`PostgreSQL's ${bin} is not in ${PG_BIN}: install Debian's postgresql (apt-get install -y postgresql; .ci/run does)`)
  }
  const dir = mkdtempSync(join(tmpdir(), 'svc-pg-'))
  const data = join(dir, 'data')
  const as = asOwner(dir)
  const init = spawnSync(as[0], [...as.slice(1), join(PG_BIN, 'initdb'), '-D', data, '-U', 'svc', '--auth=trust', '-E', 'UTF8', '--no-sync'], { encoding: 'utf8', timeout: 60_000 })
  if (init.status !== 0) throw new Error(`initdb failed: ${init.stderr}`)
  const start = spawnSync(
    as[0],
    [...as.slice(1), join(PG_BIN, 'pg_ctl'), '-D', data, '-w', '-t', '60', '-l', join(dir, 'log'), '-o', `-k ${dir} -c listen_addresses='' -c fsync=off`, 'start'],
    { encoding: 'utf8', timeout: 90_000 },
  )
  if (start.status !== 0) throw new Error(`pg_ctl start failed: ${start.stderr}${start.stdout}`)
  return {
    url: `postgresql://svc@/postgres?host=${encodeURIComponent(dir)}`,
    dir,
    stop() {
      spawnSync(as[0], [...as.slice(1), join(PG_BIN, 'pg_ctl'), '-D', data, '-m', 'immediate', '-w', '-t', '30', 'stop'], { timeout: 40_000 })
      rmSync(dir, { recursive: true, force: true })
    },
  }
}

export { spawn }
