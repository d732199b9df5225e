import type { Logger } from '../../../sync/core/log.ts'
import type { HubStore } from './hub-store.ts'
import { PgHubStore } from './pg-hub-store.ts'
import { SqliteHubStore } from './sqlite-hub-store.ts'

/** The store `svc hub` runs on: a PostgreSQL URL (many processes), else one SQLite file. */
export async function openHubStore(spec: string | { sqlite: string }, log: Logger): Promise<HubStore> {
  if (typeof spec === 'string') return PgHubStore.open(spec, { log })
  return new SqliteHubStore(spec.sqlite, { synchronous: 'full' })
}
