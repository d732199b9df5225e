import { SvcError } from '../../core/errors.ts'
import { checkValue, InvalidOp, type Json } from '../../crdt/ops.ts'
import type { BoundRowGroup } from '../services.ts'
import type { SpaceEngine } from '../space-engine.ts'
import { valuesOfBody, type PropertySetResult, type ScopedKey, type ScopedValueStore } from './values.ts'

/**
 * `POST {S}/properties/:objectId/set/<group>` for a row group a module owns (module.ts
 * `rowGroups`, e.g. chat's `chat`): the object must carry the group (400
 * `object.type_required`), every field must be one of the group's (404 `property.not_found`),
 * engine-computed fields refuse the write (400 `property.immutable`, `details.path`), and a
 * value its check refuses is 400 `property.format_violation`. All or nothing; then the
 * account- and local-scope values go to the scoped store (null unsets).
 */
export async function setModuleGroupValues(
  engine: SpaceEngine,
  store: ScopedValueStore,
  group: BoundRowGroup,
  objectId: string,
  groupName: string,
  body: unknown,
): Promise<PropertySetResult> {
  const entries = valuesOfBody(body)
  const row = engine.requireObject(objectId)
  if (!(await group.accepts(objectId, row))) throw new SvcError('object.type_required', `the object does not carry the ${groupName} group`, { objectId, typeId: groupName })
  const writes: Array<[ScopedKey, Json | null]> = []
  const result: PropertySetResult = { recordIds: [objectId] }
  for (const [propId, value] of entries) {
    const field = Object.hasOwn(group.fields, propId) ? group.fields[propId] : undefined
    if (!field) throw new SvcError('property.not_found', 'no such field in this group', { propId, typeId: groupName })
    if (field.scope === 'engine') throw new SvcError('property.immutable', 'this field is computed by the engine; clients cannot write it', { path: `${groupName}.${propId}` })
    try {
      checkValue(value)
    } catch (err) {
      throw new SvcError('request.invalid_field', `value is not storable: ${err instanceof InvalidOp ? err.reason : 'invalid'}`, { field: propId })
    }
    if (value !== null) {
      const reason = field.check(value)
      if (reason) throw new SvcError('property.format_violation', reason, { propId, reason })
    }
    writes.push([{ scope: field.scope, spaceId: engine.spaceId, objectId, typeKey: groupName, propId }, value])
    ;((result.scoped ??= {})[field.scope] ??= []).push(propId)
  }
  await store.setMany(writes)
  return result
}
