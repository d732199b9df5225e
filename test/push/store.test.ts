import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import Database from 'better-sqlite3'
import pgLib from 'pg'
import type { SubscriptionStore } from '../../node/push-node/store.ts'
import { SqliteSubscriptionStore } from '../../node/push-node/sqlite-store.ts'
import { PgSubscriptionStore } from '../../node/push-node/pg-store.ts'
import { runSubscriptionStoreConformance } from '../../node/push-node/store-conformance.ts'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { startPg, type PgCluster } from '../fixtures/pg-fixture.ts'

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

  it('postgres: a database of the first schema (one row per topic) is migrated when opened', async () => {
    await (await fresh()).close()
    const c = new pgLib.Pool({ connectionString: currentUrl, max: 1 })
    try {
      await c.query(
        'DROP TABLE push_topics; DROP TABLE push_registrations; CREATE TABLE push_subscriptions (space_key TEXT NOT NULL, topic TEXT NOT NULL, platform TEXT NOT NULL, token TEXT NOT NULL, PRIMARY KEY (space_key, topic, platform, token))',
      )
      await c.query(FIRST_SCHEMA_ROWS_SQL)
    } finally {
      await c.end()
    }
    await expectMigrated(await PgSubscriptionStore.open(currentUrl))
  })
}

const FIRST_SCHEMA_ROWS_SQL = `INSERT INTO push_subscriptions (space_key, topic, platform, token) VALUES
  ('k1', 'chats', 'ntfy', 'https://n/1'), ('k1', 'x', 'ntfy', 'https://n/1'), ('k1', 'chats', 'android', 'tok'), ('k2', 'chats', 'android', 'tok')`

async function expectMigrated(s: SubscriptionStore) {
  try {
    expect(await s.targetsFor('k1', ['chats'])).toEqual([
      { platform: 'android', token: 'tok' },
      { platform: 'ntfy', token: 'https://n/1' },
    ])
    expect(await s.topicsOf('k1', { platform: 'ntfy', token: 'https://n/1' })).toEqual(['chats', 'x'])
    expect(await s.totals()).toEqual({ subscriptions: 4, spaceKeys: 2 })
    expect(await s.removeToken({ platform: 'android', token: 'tok' })).toBe(2)
    expect((await s.registrationOf('k1', { platform: 'ntfy', token: 'https://n/1' }))?.topics).toBe(2)
  } finally {
    await s.close()
  }
}

describe('stores of the first schema', () => {
  it('sqlite: a file of the first schema (one row per topic, the token in each) is migrated when opened', async () => {
    const path = join(fileDir, 'first-schema.db')
    const old = new Database(path)
    old.exec(
      'CREATE TABLE push_subscriptions (space_key TEXT NOT NULL, topic TEXT NOT NULL, platform TEXT NOT NULL, token TEXT NOT NULL, PRIMARY KEY (space_key, topic, platform, token)) WITHOUT ROWID',
    )
    old.exec(FIRST_SCHEMA_ROWS_SQL)
    old.close()
    await expectMigrated(new SqliteSubscriptionStore(path))
    // Opened again: nothing left to migrate, nothing lost.
    const again = new SqliteSubscriptionStore(path)
    expect(await again.totals()).toEqual({ subscriptions: 2, spaceKeys: 1 })
    await again.close()
  })
})
