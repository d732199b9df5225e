/**
 * ACL ingest benchmark: a space whose ACL has grown to RECORDS records (members added, roles
 * changed, members removed with a key rotation, plain rotations: a seeded mix by the owner, with
 * at most MEMBERS members at a time), synced to another replica that already holds the space's
 * objects, one record per ingest: the way a peer that has been offline catches up record by
 * record, each one cited by the next. Reports the time per record and in all; what it measures
 * is the ACL fold's cost as the log grows (issue 11: 3,000 records took 12 s, a full fold each).
 */
import { nodeCryptoProvider } from '../node/crypto/node-provider.ts'
import { systemEnv } from '../sync/core/env.ts'
import { identityOf, keyPairFromSeed } from '../sync/crypto/keys.ts'
import type { GrantRole } from '../sync/acl/records.ts'
import { SpaceReplica } from '../sync/replica/space-replica.ts'
import { MemoryStorageAdapter } from '../sync/storage/memory.ts'

const progress = (m: string) => process.stderr.write(`[bench acl] ${m}\n`)
const RECORDS = Number(process.env.BENCH_ACL_RECORDS ?? 3000)
const MEMBERS = Number(process.env.BENCH_ACL_MEMBERS ?? 24)
const OBJECTS = 10
const crypto = nodeCryptoProvider({ verify: 'threadpool' })
const deps = () => ({ storage: new MemoryStorageAdapter(), crypto, env: systemEnv })

export async function benchAcl(): Promise<Record<string, unknown>> {
  const owner = keyPairFromSeed(new Uint8Array(32).fill(1))
  const src = await SpaceReplica.create(deps(), owner)
  for (let o = 0; o < OBJECTS; o++) {
    const obj = await src.createObject()
    for (let i = 0; i < 10; i++) await src.write(obj, [{ op: 'set', ds: 'd', id: `r${i}`, path: 'v', value: i }])
  }
  // The receiver holds the objects (and the ACL root) before the ACL records arrive.
  const dst = await SpaceReplica.open(deps(), src.spaceId, owner)
  await dst.ingest((await src.allChanges()).map(({ id, raw }) => ({ id, raw })))

  progress(`writing ${RECORDS} ACL records`)
  let seed = 0x9e3779b9
  const rand = (n: number) => {
    seed ^= seed << 13
    seed ^= seed >>> 17
    seed ^= seed << 5
    return (seed >>> 0) % n
  }
  const roles: GrantRole[] = ['writer', 'reader', 'guest', 'admin']
  const members: string[] = []
  let next = 2
  const ids: string[] = []
  const counts = { add: 0, role: 0, remove: 0, rotate: 0 }
  const t0 = performance.now()
  while (ids.length < RECORDS) {
    const pick = rand(100)
    if (members.length < 2 || (pick < 40 && members.length < MEMBERS)) {
      const id = identityOf(keyPairFromSeed(new Uint8Array(32).fill(0).map((_, i) => (i === 0 ? next & 255 : i === 1 ? next >> 8 : 3))).publicKey)
      next++
      ids.push(await src.addMember(id, roles[rand(roles.length)]))
      members.push(id)
      counts.add++
    } else if (pick < 80) {
      ids.push(await src.setRole(members[rand(members.length)], roles[rand(roles.length)]))
      counts.role++
    } else if (pick < 92) {
      const [gone] = members.splice(rand(members.length), 1)
      ids.push(await src.removeMember(gone))
      counts.remove++
    } else {
      ids.push(await src.rotateReadKey())
      counts.rotate++
    }
  }
  const writeMs = performance.now() - t0
  const raws = await src.rawChanges(src.spaceId, ids)
  if (raws.length !== ids.length) throw new Error('lost ACL records')

  progress(`ingesting them one by one`)
  const times: number[] = []
  const t1 = performance.now()
  for (const item of raws) {
    const s = performance.now()
    const rep = await dst.ingest([item])
    times.push(performance.now() - s)
    if (rep.accepted.length !== 1) throw new Error(`record refused: ${rep.rejected[0]?.reason ?? rep.missing.join(',')}`)
  }
  const ingestMs = performance.now() - t1
  if (dst.acl.current().readKeyId !== src.acl.current().readKeyId) throw new Error('replicas disagree on the read key')
  const slice = (a: number, b: number) => Math.round((times.slice(a, b).reduce((x, y) => x + y, 0) / Math.max(1, b - a)) * 100) / 100
  return {
    records: RECORDS,
    maxMembers: MEMBERS,
    mix: counts,
    writeMs: Math.round(writeMs),
    ingestOneByOneMs: Math.round(ingestMs),
    perRecordMs: Math.round((ingestMs / RECORDS) * 100) / 100,
    // The fold's cost grows with the log: the first and last tenth, per record.
    firstTenthPerRecordMs: slice(0, RECORDS / 10),
    lastTenthPerRecordMs: slice(RECORDS - RECORDS / 10, RECORDS),
    // Merged states the receiver built by extending the previous one, and by a full fold.
    ...('foldStats' in dst.acl ? { folds: (dst.acl as { foldStats: unknown }).foldStats } : {}),
  }
}
