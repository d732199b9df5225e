/**
 * Identity directory benchmark: one recomputation of `identityDirectory` (what
 * `GET /v1/identities` answers and what the identities stream recomputes after an ACL move) for
 * an account holding SPACES spaces of MEMBERS members each, every member with a profile record
 * in every space (so every recomputation opens SPACES x MEMBERS sealed profiles). Memory storage:
 * the directory reads ACL state and profile records, which are in memory once a space is open.
 * No target; `p50Ms` is what one ACL move costs a daemon with a subscriber attached.
 */
import { AccountEngine } from '../sync/space/account-engine.ts'
import { identityDirectory } from '../sync/space/directory.ts'
import { SpaceReplica } from '../sync/replica/space-replica.ts'
import { MemoryStorageAdapter } from '../sync/storage/memory.ts'
import { defaultCryptoProvider } from '../sync/crypto/provider.ts'
import { keyPairFromSeed, identityOf } from '../sync/crypto/keys.ts'
import { systemEnv } from '../sync/core/env.ts'

const SPACES = Number(process.env.BENCH_IDENTITIES_SPACES ?? 20)
const MEMBERS = Number(process.env.BENCH_IDENTITIES_MEMBERS ?? 20)
const RUNS = 21

export async function benchIdentities(): Promise<Record<string, unknown>> {
  const crypto = await defaultCryptoProvider()
  const key = (n: number) => keyPairFromSeed(new Uint8Array(32).map((_, i) => (i < 4 ? (n >> (8 * i)) & 0xff : 7)))
  const account = await AccountEngine.open({ storage: new MemoryStorageAdapter(), crypto, env: systemEnv, accountKey: key(1) })
  await account.setProfile({ name: 'Owner' })
  for (let s = 0; s < SPACES; s++) {
    const space = account.space((await account.createSpace({ name: `s${s}` })).id)
    for (let m = 0; m < MEMBERS; m++) await space.replica.addMember(identityOf(key(10 + m).publicKey), 'writer')
    const acl = (await space.replica.allChanges()).filter((c) => c.treeId === space.spaceId).map(({ id, raw }) => ({ id, raw }))
    for (let m = 0; m < MEMBERS; m++) {
      const member = await SpaceReplica.open({ storage: new MemoryStorageAdapter(), crypto, env: systemEnv }, space.spaceId, key(10 + m))
      await member.ingest(acl)
      await member.setProfile({ name: `member ${m}`, description: 'x'.repeat(100) })
      await space.replica.ingest((await member.allChanges()).filter((c) => c.treeId === space.spaceId).map(({ id, raw }) => ({ id, raw })))
    }
  }
  const first = await identityDirectory(account)
  const named = [...first.values()].filter((e) => e.name?.startsWith('member')).length
  const runs: number[] = []
  for (let i = 0; i < RUNS; i++) {
    const t = performance.now()
    await identityDirectory(account)
    runs.push(performance.now() - t)
  }
  runs.sort((a, b) => a - b)
  await account.close()
  const ms = (x: number) => Math.round(x * 100) / 100
  return {
    spaces: SPACES,
    membersPerSpace: MEMBERS,
    profileRecords: SPACES * MEMBERS,
    identities: first.size,
    named,
    p50Ms: ms(runs[RUNS >> 1]),
    minMs: ms(runs[0]),
    maxMs: ms(runs[RUNS - 1]),
  }
}
