import { Type } from '@sinclair/typebox'
import { MAX_NAME_LENGTH, MAX_OBJECTS_PER_CREATE, MAX_TYPES_PER_OBJECT } from '../../sync/core/limits.ts'
import { Id } from './spaces.ts'

export const ObjectParams = Type.Object({ spaceId: Id('space id'), objectId: Id('object id') })

/** `POST {S}/objects`: closed vocabulary; nothing is appended server-side. */
export const ObjectCreateBody = Type.Object(
  {
    types: Type.Optional(
      Type.Array(Type.String({ minLength: 1, maxLength: MAX_NAME_LENGTH }), { maxItems: MAX_TYPES_PER_OBJECT, description: 'type ids the object carries for its life' }),
    ),
    initialProperties: Type.Optional(
      Type.Record(Type.String(), Type.Record(Type.String(), Type.Unknown()), {
        description: 'values grouped by type key (`core` for name, description, icon, tags; a carried type id for its properties)',
      }),
    ),
  },
  { additionalProperties: false },
)

export const ObjectCreated = Type.Object({ objectId: Type.String() })

/** `POST {S}/objects/batch`: many creates in one request, each entry a `POST {S}/objects` body. */
export const ObjectBatchCreateBody = Type.Object(
  {
    objects: Type.Array(ObjectCreateBody, {
      minItems: 1,
      maxItems: MAX_OBJECTS_PER_CREATE,
      description: `create bodies ({types?, initialProperties?}), at most ${MAX_OBJECTS_PER_CREATE}; all are created or none`,
    }),
  },
  { additionalProperties: false },
)

export const ObjectsCreated = Type.Object({ objectIds: Type.Array(Type.String(), { description: 'the new ids, in input order' }) })

export const Backlinks = Type.Object({
  backlinks: Type.Array(Type.Object({ objectId: Type.String(), typeId: Type.String(), propId: Type.String() })),
})
