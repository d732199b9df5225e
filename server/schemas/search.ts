import { Type } from '@sinclair/typebox'
import { SEARCH_LIMITS } from '../../sync/modules/search/limits.ts'

/**
 * `POST {S}/search` (spec core.md "Spaces"; docs/search.md). `mode` and `scopes` are checked by
 * the search module, so a bad one answers the spec's own codes (400 search.bad_mode,
 * search.bad_scope) rather than a schema failure.
 */
export const SearchBody = Type.Object(
  {
    query: Type.String({ maxLength: SEARCH_LIMITS.maxQueryChars, description: 'words; every word must match, the last also as a prefix' }),
    scopes: Type.Optional(
      Type.Array(Type.String(), {
        description: `slugs ([a-z0-9_-], 1 to 64), at most ${SEARCH_LIMITS.maxScopes}: basic, props, editor, chat, data or a property's named scope; 400 search.bad_scope`,
      }),
    ),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: SEARCH_LIMITS.maxLimit, description: `hits at most (default ${SEARCH_LIMITS.defaultLimit})` })),
    mode: Type.Optional(Type.String({ description: 'hybrid (default), fts or vector; 400 search.bad_mode' })),
    require: Type.Optional(Type.Array(Type.String({ maxLength: 256 }), { maxItems: SEARCH_LIMITS.maxTerms, description: 'words every hit must also contain' })),
    exclude: Type.Optional(Type.Array(Type.String({ maxLength: 256 }), { maxItems: SEARCH_LIMITS.maxTerms, description: 'words no hit may contain' })),
  },
  { additionalProperties: false },
)

export const SearchHit = Type.Object({
  objectId: Type.String(),
  recordId: Type.Optional(Type.String({ description: 'for a record: the block, message or dataset record that matched' })),
  collection: Type.Optional(Type.String({ description: "for a record: its collection (editor_blocks, chat_messages, '<typeId>_<key>')" })),
  scope: Type.String({ description: 'basic, props, a named property scope, editor, chat or data' }),
  score: Type.Number({ description: 'higher is better; BM25 (fts), cosine (vector) or fused reciprocal rank (hybrid); comparable within one reply only' }),
  snippet: Type.Object({
    text: Type.String({ description: 'a window of the matched text' }),
    ranges: Type.Array(Type.Tuple([Type.Integer(), Type.Integer()]), { description: '[start, end) UTF-16 offsets into text of the matched words' }),
  }),
})

export const SearchReply = Type.Object({
  hits: Type.Array(SearchHit),
  mode: Type.Union([Type.Literal('hybrid'), Type.Literal('fts'), Type.Literal('vector')], { description: 'what ran: hybrid degrades to fts without a working embedder' }),
  vectorStatus: Type.Union([Type.Literal('ready'), Type.Literal('unavailable'), Type.Literal('disabled')]),
})
