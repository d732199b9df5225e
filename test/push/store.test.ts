import { afterAll, beforeAll, describe, it } from 'vitest'
import { SqliteSubscriptionStore } from '../../node/push-node/sqlite-store.ts'
import { PgSubscriptionStore } from '../../node/push-node/pg-store.ts'
import { runSubscriptionStoreConformance } from '../../node/push-node/store-conformance.ts'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { startPg, type PgCluster } from './pg-fixture.ts'

runSubscriptionStoreConformance('sqlite (memory)', async () => new SqliteSubscriptionStore())

const fileDir = mkdtempSync(join(tmpdir(), 'svc-push-store-'))
let fileN = 0
afterAll(() => rmSync(fileDir, { recursive: true, force: true }))
{
  // Two handles on one file: each test gets a fresh file, and the second handle opens the same one.
  let current = ''
  runSubscriptionStoreConformance(
    'sqlite (file, two handles)',
    async () => new SqliteSubscriptionStore((current = join(fileDir, `s${++fileN}.db`))),
    async () => new SqliteSubscriptionStore(current),
  )
}

{
  let pg: PgCluster | undefined
  let db = 0
  let currentUrl = ''
  beforeAll(() => {
    pg = startPg()
  }, 120_000)
  afterAll(() => pg?.stop())
  const fresh = async () => {
    // A database per test, so tests share the cluster but no rows.
    const name = `push_${++db}`
    const admin = await PgSubscriptionStore.open(pg!.url)
    await (admin as unknown as { pool: { query(q: string): Promise<unknown> } }).pool.query(`CREATE DATABASE ${name}`)
    await admin.close()
    currentUrl = pg!.url.replace('/postgres?', `/${name}?`)
    return PgSubscriptionStore.open(currentUrl)
  }
  runSubscriptionStoreConformance('postgres', fresh, () => PgSubscriptionStore.open(currentUrl))
}
