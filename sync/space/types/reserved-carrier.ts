import { SvcError } from '../../core/errors.ts'
import type { SpaceEngine } from '../space-engine.ts'
import { typeDatasets } from './dataset-decls.ts'

/**
 * Reserved carriers: a module's dataset kind may be `reservedCarrier` (chat's is: chat.md "The
 * only object that may carry the chat type is the server-installed general-chat root of a
 * space"). A type whose parts declare a dataset of such a kind may be carried only by the
 * object the system installs for it: bundles refuse such types in `rootTypes` and in
 * children's `types`, and object creation in `types` (400 `type.reserved_carrier`); the
 * catalog's general-chat root carries its own chat type.
 */
export async function reservedKindOf(engine: SpaceEngine, typeId: string): Promise<string | undefined> {
  const cache = verdictsOf(engine)
  if (cache.byType.has(typeId)) return cache.byType.get(typeId)
  const epoch = cache.epoch
  cache.reading.set(typeId, (cache.reading.get(typeId) ?? 0) + 1)
  try {
    const kind = await readReservedKind(engine, typeId)
    // Kept only if no commit touched a type being read or cached while it was read.
    if (epoch === cache.epoch) {
      // Any string may be asked (a request names the types): bounded, not kept forever.
      if (cache.byType.size >= MAX_VERDICTS) cache.byType.clear()
      cache.byType.set(typeId, kind)
    }
    return kind
  } finally {
    const n = cache.reading.get(typeId)! - 1
    if (n) cache.reading.set(typeId, n)
    else cache.reading.delete(typeId)
  }
}

async function readReservedKind(engine: SpaceEngine, typeId: string): Promise<string | undefined> {
  for (const d of await typeDatasets(engine, typeId)) {
    if (d.module && engine.modules.kind(d.module)?.reservedCarrier) return d.module
  }
  return undefined
}

/**
 * Verdicts by type id, per open space: every create asks for each type it carries, and the
 * answer is a scan of the type's declarations in storage (about a tenth of a single create's
 * CPU). A commit that touches a type's tree (its declarations live there) drops its verdict as
 * it is announced, synchronously, so a verdict is never older than what storage holds; `epoch`
 * keeps a read that such a commit overtook from caching what it read before.
 */
interface Verdicts {
  byType: Map<string, string | undefined>
  /** Reads in flight, by type id. */
  reading: Map<string, number>
  epoch: number
}
const verdicts = new WeakMap<SpaceEngine, Verdicts>()
const MAX_VERDICTS = 1_024

function verdictsOf(engine: SpaceEngine): Verdicts {
  let v = verdicts.get(engine)
  if (!v) {
    const cache: Verdicts = { byType: new Map(), reading: new Map(), epoch: 0 }
    engine.replica.addCommitListener((info) => {
      for (const t of info.treeIds) {
        if (!cache.byType.has(t) && !cache.reading.has(t)) continue
        cache.byType.delete(t)
        cache.epoch++
      }
    })
    verdicts.set(engine, (v = cache))
  }
  return v
}

export async function refuseReservedCarriers(engine: SpaceEngine, typeIds: readonly string[], field: string): Promise<void> {
  for (const typeId of typeIds) {
    const kind = await reservedKindOf(engine, typeId)
    if (kind) throw new SvcError('type.reserved_carrier', `only the object the system installs may carry a ${kind} type`, { typeId, field, module: kind })
  }
}
