/**
 * `GET /v1/datasets`: the tech space's system datasets (`{name, schema}`), JSON Schema 2020-12
 * with `x-scope` per field. The tech space is synced only across the account's own devices.
 * Shapes as the engine writes them (sync/space/account-engine.ts); `spaces` and `profile` are
 * the rows `POST /v1/spaces/query` serves.
 */
const INSTANT = { type: 'object', properties: { $date: { type: 'string', format: 'date-time' } }, required: ['$date'], additionalProperties: false }
const synced = (s: Record<string, unknown>) => ({ ...s, 'x-scope': 'synced' })
const ID = synced({ type: 'string', readOnly: true })
const VER = synced({ type: 'object', readOnly: true, properties: { id: { type: 'string' } } })

export const TECH_DATASETS: ReadonlyArray<{ name: string; schema: Record<string, unknown> }> = [
  {
    name: 'spaces',
    schema: {
      type: 'object',
      description: 'one row per space the account knows; record id = space id; a deleted row is a sticky tombstone',
      properties: {
        id: ID,
        _ver: VER,
        spaceId: synced({ type: 'string' }),
        spaceType: synced({ enum: ['svc.space', 'svc.onetoone'] }),
        derived: synced({ type: 'boolean' }),
        derivedName: synced({ type: 'string' }),
        createdAt: synced(INSTANT),
        deletedAt: synced(INSTANT),
        deletedReason: synced({
          enum: ['deleted', 'declined', 'withdrawn'],
          description: 'why a row without deletedAt is deleted (docs/sharing.md): a later join, or a later one-to-one start, may revive it',
        }),
        join: synced({ type: 'object', description: 'the join this account sent while joining: invite id, join change id and bytes' }),
        offer: synced({ type: 'object', description: 'the direct add that offered this space: `from` identity and `addId`' }),
        oneToOne: synced({
          type: 'object',
          description:
            'a one-to-one row (docs/sharing.md "One-to-one"): the other account, the hint given to register-incoming, and its start count when this account declined or deleted it',
          properties: { peer: { type: 'string' }, displayHint: { type: 'string' }, peerStarts: { type: 'integer', minimum: 0 } },
        }),
        status: synced({ enum: ['active', 'joining', 'deleted', 'one_to_one_pending', 'invite_pending', 'guest_revoked'], readOnly: true }),
      },
      required: ['id', 'spaceId', 'spaceType', 'derived', 'createdAt'],
    },
  },
  {
    name: 'profile',
    schema: {
      type: 'object',
      description: 'the account profile; one record, id `me`',
      properties: { id: ID, _ver: VER, name: synced({ type: 'string' }), description: synced({ type: 'string' }), iconCid: synced({ type: 'string' }) },
      required: ['id'],
    },
  },
  {
    name: 'invites',
    schema: {
      type: 'object',
      description: "tokens of the invites this account minted; record id = the invite's ACL record id; never leaves the account's devices",
      properties: {
        id: ID,
        _ver: VER,
        spaceId: synced({ type: 'string' }),
        permission: synced({ enum: ['reader', 'writer', 'guest'] }),
        inviteToken: synced({ type: 'string' }),
        createdAt: synced(INSTANT),
      },
      required: ['id', 'spaceId', 'permission', 'inviteToken'],
    },
  },
  {
    name: 'settings',
    schema: {
      type: 'object',
      description: 'account-private settings per space; record id = space id; single-level scalar keys',
      properties: { id: ID, _ver: VER, notifyMode: synced({ enum: ['all', 'mentions', 'none'] }) },
      additionalProperties: synced({ type: ['string', 'number', 'boolean', 'null'] }),
      required: ['id'],
    },
  },
]
