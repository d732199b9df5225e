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
  for (const d of await typeDatasets(engine, typeId)) {
    if (d.module && engine.modules.kind(d.module)?.reservedCarrier) return d.module
  }
  return undefined
}

export async function refuseReservedCarriers(engine: SpaceEngine, typeIds: readonly string[], field: string): Promise<void> {
  for (const typeId of typeIds) {
    const kind = await reservedKindOf(engine, typeId)
    if (kind) throw new SvcError('type.reserved_carrier', `only the object the system installs may carry a ${kind} type`, { typeId, field, module: kind })
  }
}
