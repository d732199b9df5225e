import { isSvcError } from '../sync/core/errors.ts'
import type { Json } from '../sync/crdt/ops.ts'
import type { UserOp } from '../sync/crdt/resolve.ts'
import type { Prng } from './prng.ts'
import type { SimPeer } from './peer.ts'
import { SimCrash } from './storage.ts'
import { modifyRecords } from '../sync/space/modify.ts'
import { textEdit } from './ytext-workload.ts'
import { moduleWrite } from './module-workload.ts'

/** A write the engine acknowledged (its promise resolved): it must never be lost. */
export interface AckedWrite {
  id: string
  tree: string
  peer: string
  account: number
  kind: string
  at: number
  /** Identities the writer had seen removed when it sealed this write (sim/checks.ts, sealLeaks). */
  removedInView?: string[]
  /** Its place in the run's global order (sim/timeline.ts), for object writes. */
  seq?: number
}

/** Few datasets, records and paths, so writes on different peers collide on the same paths. */
export const DATASETS = ['tasks', 'notes'] as const
const RECORDS = ['r0', 'r1', 'r2', 'r3']
const PATHS = ['a', 'b', 'c.d', 'c.e']

const value = (r: Prng): Json => {
  switch (r.int(4)) {
    case 0:
      return r.int(1000)
    case 1:
      return `v${r.int(100)}`
    case 2:
      return { k: r.int(10), t: r.chance(0.5) }
    default:
      return [r.int(5), r.int(5)]
  }
}

const KINDS: Array<[string, number]> = [
  ['set', 34],
  ['multi', 8],
  ['unset', 10],
  ['upsert', 12],
  ['inc', 6],
  ['deleteRecord', 8],
  ['row', 8],
  ['deleteObject', 2],
  ['create', 4],
  ['text', 30],
  ['module', 24],
]

function weighted(r: Prng): string {
  const total = KINDS.reduce((n, [, w]) => n + w, 0)
  let x = r.int(total)
  for (const [k, w] of KINDS) {
    if (x < w) return k
    x -= w
  }
  return KINDS[0][0]
}

/**
 * One random write at a peer: concurrent sets of shared paths, unsets, upserts of whole
 * records, increments (resolved at write time), record deletes, object-row sets, object
 * deletes, new objects, and contested writes in the module datasets that merge under a rule
 * (sim/module-workload.ts). Returns a trace label; acknowledged writes go into `acked`.
 */
export async function randomWrite(p: SimPeer, r: Prng, acked: AckedWrite[], now: number): Promise<string> {
  const rep = p.replica
  if (!rep.known || !rep.acl.current().canWrite(p.identity)) return 'skip: cannot write'
  const objects = rep.treeIds().filter((t) => !rep.treeMeta(t)?.deleted)
  const kind = objects.length === 0 ? 'create' : weighted(r)
  const obj = objects.length ? r.pick(objects) : ''
  const ds = r.pick(DATASETS)
  const id = r.pick(RECORDS)
  // A write that changed nothing signs no change (changeId ''): there is nothing it could lose.
  const ack = (changeId: string, tree: string) => {
    if (changeId) acked.push({ id: changeId, tree, peer: p.id, account: p.account, kind, at: now })
  }
  const modify = async (dset: string, records: Array<{ id: string; ops: UserOp[] }>) => {
    const res = await modifyRecords(rep, obj, dset, records)
    ack(res.changeId, obj)
    return res.changeId
  }
  try {
    switch (kind) {
      case 'create': {
        const o = await rep.createObject()
        ack(o, o)
        return `create ${o}`
      }
      case 'set':
        return `set ${await modify(ds, [{ id, ops: [{ type: '$set', path: r.pick(PATHS), value: value(r) }] }])}`
      case 'multi':
        return `multi ${await modify(ds, [
          { id, ops: [{ type: '$set', path: r.pick(PATHS), value: value(r) }] },
          {
            id: r.pick(RECORDS),
            ops: [
              { type: '$unset', path: r.pick(PATHS) },
              { type: '$set', path: 'b', value: value(r) },
            ],
          },
        ])}`
      case 'unset':
        return `unset ${await modify(ds, [{ id, ops: [{ type: '$unset', path: r.pick(PATHS) }] }])}`
      case 'upsert':
        return `upsert ${await modify(ds, [{ id, ops: [{ type: '$set', path: '', value: { a: value(r), c: { d: value(r) } } }] }])}`
      case 'inc':
        return `inc ${await modify(ds, [{ id, ops: [{ type: '$inc', path: 'n', value: 1 + r.int(3) }] }])}`
      case 'row':
        return `row ${await modify('', [{ id: '', ops: [{ type: '$set', path: r.pick(['title', 'done']), value: value(r) }] }])}`
      case 'text': {
        // Per device and incarnation of the peer: its Yjs client id (sim/ytext-workload.ts).
        const label = await textEdit(rep, obj, r, `${p.id}.${p.incarnation}`)
        const last = label.split(' ')[1]
        if (last) ack(last, obj)
        return label
      }
      case 'module': {
        const { label, changeId, tree } = await moduleWrite(rep, objects, r)
        ack(changeId, tree)
        return label
      }
      case 'deleteRecord': {
        const res = await rep.write(obj, [{ op: 'delete', ds, id }])
        ack(res.changeId, obj)
        return `delete ${res.changeId}`
      }
      case 'deleteObject': {
        const res = await rep.write(obj, [{ op: 'deleteObject' }])
        ack(res.changeId, obj)
        return `deleteObject ${res.changeId}`
      }
    }
    return 'skip'
  } catch (err) {
    if (err instanceof SimCrash) return `${kind}: crashed`
    if (isSvcError(err)) return `${kind}: refused ${err.code}`
    throw err
  }
}
