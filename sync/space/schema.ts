import type { MergePolicy } from '../crdt/record.ts'

/**
 * Fixed names of svc's data model inside a space's replica. An object's own row is the record
 * ('' dataset, '' id) of its tree; a type is an object carrying the `type` built-in, whose
 * property definitions and parts are records of its `properties` and `parts` datasets.
 */
export const ROW_DS = ''
export const ROW_ID = ''
export const PROPERTIES_DS = 'properties'
export const PARTS_DS = 'parts'
export const DATASETS_DS = 'datasets'
export const BUNDLES_DS = 'bundles'

/** Seeds of the derived objects every space has. */
export const SPACE_INDEX_SEED = 'system:spaceIndex'

/** Tech space: one per account, synced only across its own devices. */
export const TECH_SPACE_SEED = 'svc/tech/v1'
export const TECH_ACCOUNT_SEED = 'system:account'
/**
 * `invites`: tokens of the invites this account minted (record id = the invite's ACL record id):
 * the token is the invite's only secret, so it lives nowhere else.
 * `accountValues` is a prefix: account-scope property values live in `accountValues/<spaceId>` (scoped-values.ts). */
export const TECH_DS = { spaces: 'spaces', profile: 'profile', settings: 'settings', devices: 'devices', accountValues: 'accountValues', invites: 'invites' } as const
export const PROFILE_RECORD = 'me'

/**
 * Derived spaces an account may resolve by name (`POST /v1/spaces/derived/:name`); the seed
 * is `svc/space/<name>/v1`. The set is fixed by the release, so every device agrees on it.
 */
export const DERIVED_SPACE_NAMES = ['personal', 'inbox', 'archive'] as const
export const derivedSpaceSeed = (name: string) => `svc/space/${name}/v1`

/** Built-in types in listing order (spec "Type"): always-visible then registered hidden ones. */
export const BUILTIN_TYPES: ReadonlyArray<{ id: string; name: string; hidden: boolean; registered: boolean }> = [
  { id: 'core', name: 'Object', hidden: false, registered: false },
  { id: 'spaceIndex', name: 'Space index', hidden: true, registered: false },
  { id: 'type', name: 'Type', hidden: false, registered: false },
  { id: 'dataview', name: 'Data view', hidden: true, registered: true },
  { id: 'page', name: 'Page', hidden: true, registered: true },
  { id: 'miniapp', name: 'Mini app', hidden: true, registered: true },
  { id: 'bin', name: 'Bin', hidden: true, registered: true },
]
export const BUILTIN_TYPE_IDS = new Set(BUILTIN_TYPES.map((t) => t.id))

/** Pinned facts (first-write-wins on every peer): a property's kind, scope and nested shapes;
 * a tech-space row's deletion, which makes a deleted space a sticky tombstone. */
export const spacePolicy: MergePolicy = {
  pinnedPaths(ds: string) {
    if (ds === PROPERTIES_DS) return PROPERTY_PINS
    if (ds === TECH_DS.spaces) return SPACE_ROW_PINS
    if (ds === TECH_DS.devices) return DEVICE_PINS
    if (ds === DATASETS_DS) return DATASET_PINS
    return NONE
  },
}
const PROPERTY_PINS = ['kind', 'scope', 'items', 'properties', 'typeId']
const SPACE_ROW_PINS = ['deletedAt', 'derived', 'createdAt']
const DATASET_PINS = ['key', 'collection', 'module', 'shared', 'idRule', 'typeId', 'partId']
const DEVICE_PINS = ['prunedAt', 'createdAt']
const NONE: readonly string[] = []
