import { Type } from '@sinclair/typebox'
import { CURSOR_LIMITS } from '../../sync/modules/editor/cursor-limits.ts'

/** Bodies and answers of the cursor routes (docs/editor.md "Cursors"). */
export const CursorBody = Type.Object(
  {
    blockId: Type.String({ minLength: 1, maxLength: CURSOR_LIMITS.maxIdChars, description: 'the block the cursor is in' }),
    anchor: Type.Integer({ minimum: 0, maximum: CURSOR_LIMITS.maxIndex, description: 'index in the block text where the selection starts' }),
    head: Type.Optional(Type.Integer({ minimum: 0, maximum: CURSOR_LIMITS.maxIndex, description: 'index where it ends (the caret); default anchor' })),
    name: Type.Optional(Type.String({ maxLength: CURSOR_LIMITS.maxNameChars, description: 'display name shown with the cursor' })),
  },
  { additionalProperties: false },
)

const Pos = Type.Object({
  rel: Type.String({ description: 'Yjs relative position (base64 of Y.encodeRelativePosition)' }),
  index: Type.Union([Type.Integer(), Type.Null()], { description: "its index in the block's text on this device; null until the text it names arrives" }),
})

export const Cursor = Type.Object({
  clientId: Type.Integer({ description: 'awareness client id (one per device)' }),
  identity: Type.String({ description: 'account of the device (the signer of its presence)' }),
  self: Type.Boolean(),
  name: Type.String(),
  objectId: Type.String(),
  collection: Type.String(),
  blockId: Type.String(),
  anchor: Pos,
  head: Pos,
  updatedAt: Type.Integer({ description: 'ms since the epoch, when this device last heard it' }),
})

export const CursorList = Type.Object({ cursors: Type.Array(Cursor) })
export const CursorCleared = Type.Object({ cleared: Type.Boolean({ description: 'false when this device had no cursor in the object' }) })
