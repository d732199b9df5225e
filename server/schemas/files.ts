import { Type } from '@sinclair/typebox'
import { FILES } from '../../sync/modules/files/limits.ts'
import { Instant } from './common.ts'
import { Id } from './spaces.ts'

export const FileParams = Type.Object({ spaceId: Id('space id'), fileId: Id('file id (from `svc://f/<spaceId>/<fileId>`)') })
export const AttachParams = Type.Object({ spaceId: Id('space id'), objectId: Id('object that holds the file record') })

export const AttachQuery = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: FILES.nameMax, description: 'file name shown to members' }),
    mime: Type.Optional(Type.String({ minLength: 3, maxLength: FILES.mimeMax, description: 'media type; default application/octet-stream' })),
  },
  { additionalProperties: false },
)

export const ListQuery = Type.Object({ objectId: Type.Optional(Id('only files held by this object')) }, { additionalProperties: false })

export const VariantQuery = Type.Object(
  { variant: Type.Optional(Type.String({ maxLength: 16, description: `image variant: w<width>, width in ${FILES.variantWidths.join(', ')}; else 400 file.variant_invalid` })) },
  { additionalProperties: false },
)

const State = Type.Union([Type.Literal('durable'), Type.Literal('inflight'), Type.Literal('limited')])

export const FileInfo = Type.Object({
  id: Type.String(),
  objectId: Type.String(),
  spaceId: Type.String(),
  uri: Type.String({ description: 'svc://f/<spaceId>/<fileId>, the link chat attachments and editor blocks carry' }),
  name: Type.String(),
  mime: Type.String(),
  size: Type.Integer(),
  creator: Type.String(),
  createdAt: Instant,
  hash: Type.String({ description: 'keyed root content id: equal for equal content within one space only' }),
  inline: Type.Boolean({ description: `bytes in the record (files of at most ${FILES.inlineMax} bytes)` }),
  blocks: Type.Integer(),
  cachedBlocks: Type.Integer(),
  cached: Type.Boolean(),
  pinned: Type.Boolean(),
  state: State,
  width: Type.Optional(Type.Integer()),
  height: Type.Optional(Type.Integer()),
  attempts: Type.Optional(Type.Integer()),
  lastErr: Type.Optional(Type.String()),
})

export const FileList = Type.Object({ files: Type.Array(FileInfo) })

export const FileStatus = Type.Object({
  fileId: Type.String(),
  objectId: Type.String(),
  state: State,
  cached: Type.Boolean(),
  attempts: Type.Optional(Type.Integer()),
  lastErr: Type.Optional(Type.String()),
})

export const Attached = Type.Object({
  fileId: Type.String(),
  objectId: Type.String(),
  uri: Type.String(),
  size: Type.Integer(),
  inline: Type.Boolean(),
  hash: Type.String(),
  versionId: Type.String(),
  changeId: Type.String(),
  recordIds: Type.Array(Type.String()),
})

export const FileStats = Type.Object({
  files: Type.Integer(),
  inline: Type.Integer(),
  bytes: Type.Integer({ description: 'plaintext bytes of every live file' }),
  cachedFiles: Type.Integer(),
  pinned: Type.Integer(),
  durable: Type.Integer(),
  inflight: Type.Integer(),
  limited: Type.Integer(),
  storedBytes: Type.Integer({ description: 'encrypted block bytes stored on this device for the space (shared blocks once)' }),
})

export const Variants = Type.Object({ variants: Type.Array(Type.String()) })
export const CacheSize = Type.Object({ size: Type.Integer({ description: 'bytes of complete and partial copies, all spaces' }) })
export const FreeBody = Type.Object({ bytes: Type.Integer({ minimum: 0 }) }, { additionalProperties: false })
export const Freed = Type.Object({ freed: Type.Integer() })
