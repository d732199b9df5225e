import { SvcError } from '../../core/errors.ts'
import type { SpaceEngine } from '../space-engine.ts'
import { typeDatasets } from '../types/dataset-decls.ts'

/**
 * chat.md: "The only object that may carry the chat type is the server-installed general-chat
 * root of a space." A chat type is one whose parts declare a dataset of the `chat` module.
 * Bundles refuse such types in `rootTypes` and in children's `types` (400
 * `type.reserved_carrier`); the catalog's general-chat root carries its own chat type.
 */
export async function declaresChat(engine: SpaceEngine, typeId: string): Promise<boolean> {
  return (await typeDatasets(engine, typeId)).some((d) => d.module === 'chat')
}

export async function refuseChatCarriers(engine: SpaceEngine, typeIds: readonly string[], field: string): Promise<void> {
  for (const typeId of typeIds) {
    if (await declaresChat(engine, typeId)) throw new SvcError('type.reserved_carrier', 'only the general-chat root may carry a chat type', { typeId, field })
  }
}
