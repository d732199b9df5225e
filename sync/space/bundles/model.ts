import { SvcError } from '../../core/errors.ts'
import type { Json } from '../../crdt/ops.ts'
import { derivedObjectId } from '../../replica/space-replica.ts'
import type { PartCreateBody, PropertyCreateBody } from '../types/index.ts'

/**
 * Shapes of the bundles module and the pure functions every file of it shares: bundle id
 * rules and the seeds of derived roots and children. The design is described in index.ts.
 */

/** Bundle request (spec "Bundle"); the type fields declare a type on the root. */
export interface BundleRequest {
  id: string
  name?: string
  rootTypes?: string[]
  /** Values grouped by type key: `core` or one of `rootTypes` (like `initialProperties`). */
  rootProperties?: Record<string, Record<string, Json>>
  derived?: boolean
  xKey?: string | null
  properties?: PropertyCreateBody[]
  parts?: PartCreateBody[]
  layout?: string
  weight?: number
  hidden?: boolean
}

/** What only the server's own catalog may ask of an install. */
export interface InstallOptions {
  /** Lets `system:` ids through (the catalog installs them; `POST {S}/bundles` may not). */
  system?: boolean
  /**
   * The root carries the type it declares, so the root itself holds that type's datasets
   * (the general-chat root holds `chat_messages`). Only the catalog asks for it: this is how
   * "only the server-installed root carries the chat type" (chat.md) holds for bundles.
   */
  rootCarriesOwnType?: boolean
}

/** One claim of a root for a bundle, as stored under `claims.<rootId>` of the registry record. */
export interface Claim {
  rootId: string
  derived: boolean
  typeId?: string
  installedAt: { $date: string }
  installedBy: string
}

/** Bundle (the `bundle` of responses and the items of `GET {S}/bundles`). */
export interface Bundle {
  id: string
  name: string
  rootId: string
  derived: boolean
  /** The type declared on the root (the root object is that type); absent when none. */
  typeId?: string
  /** Roots that lost the conflict rule, still claimed; resolve or delete them. */
  losers: string[]
  /** The root's row is present on this replica (false: the registry arrived before the root). */
  ready: boolean
  installedAt: { $date: string }
  installedBy: string
}

export interface InstallResult {
  bundle: Bundle
  installed: boolean
}

/** `<name>/v1`-style ids: segments of `[A-Za-z0-9_.:@+-]` joined by `/`, up to 200 characters. */
export const BUNDLE_ID_RE = /^[A-Za-z0-9_][A-Za-z0-9_.:@+-]*(\/[A-Za-z0-9_.:@+-]+)*$/
export const BUNDLE_ID_MAX = 200
export const SYSTEM_PREFIX = 'system:'

export function checkBundleId(id: unknown): string {
  if (typeof id !== 'string' || id.length > BUNDLE_ID_MAX || !BUNDLE_ID_RE.test(id)) {
    throw new SvcError('request.invalid_field', 'a bundle id is segments of [A-Za-z0-9_.:@+-] joined by /, up to 200 characters (e.g. notes/v1)', { field: 'id' })
  }
  return id
}

export const isSystemBundle = (id: string) => id.startsWith(SYSTEM_PREFIX)

// A JSON array keeps the seeds unambiguous: no bundle id and child seed pair can spell
// another bundle's root seed, and none can spell the space index's plain-string seed.
export const bundleRootSeed = (bundleId: string) => JSON.stringify(['bundle', bundleId])
export const bundleChildSeed = (bundleId: string, seed: string) => JSON.stringify(['bundle-child', bundleId, seed])

/** The derived root of a bundle: a pure function of (space, bundle id), same on every device. */
export const bundleRootId = (spaceId: string, bundleId: string) => derivedObjectId(spaceId, bundleRootSeed(bundleId))

/** A bundle's deterministic child: a pure function of (space, bundle id, seed). */
export const bundleChildId = (spaceId: string, bundleId: string, seed: string) => derivedObjectId(spaceId, bundleChildSeed(bundleId, seed))

/** Row namespace marking bundle roots (`{id}`) and children (`{id, seed}`). */
export const BUNDLE_MARK = 'bundle'
