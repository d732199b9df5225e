/**
 * Bundles of one space (spec core.md "Bundle", "Bundles and catalog", "Other state sets"):
 * a named root object installed once per space, adopted by every later install.
 *
 * Data model (all in the space's replica, merged like any other data):
 * - Registry: records of the space-index object's `bundles` dataset, record id = bundle id,
 *   `{name, claims: {<rootId>: {derived, typeId?, installedAt, installedBy}}}`, written one
 *   path at a time so concurrent claims both survive (registry.ts).
 * - Root: `derived: true` gives the derived object of (space, bundle id) (seed built only from
 *   the bundle id), the same id on every device; otherwise an ordinary created object. A
 *   bundle that declares a type (`xKey`, `properties`, `parts`, `layout`, `weight`, `hidden`)
 *   declares it *on its root*: the root object is that type (it carries `type`, its row holds
 *   the definition, its `properties`/`parts`/`datasets` the declarations), so `typeId` is the
 *   root id, a derived bundle's type id is derived too, and hidden bundle types are listed
 *   only with `includeHidden=true`. The root also carries `rootTypes`, holds `rootProperties`
 *   and the mark `bundle: {id}`. The type rules and errors are the types service's.
 * - Children: derived objects of (space, bundle id, seed), marked `bundle: {id, seed}`.
 *
 * Conflict rule: when a created and a derived root are both claimed for one id, the derived
 * one wins on every replica whatever the arrival order (the election reads only the merged
 * record); the created one is a loser, listed in `losers`, an ordinary deletable object, and
 * `resolve` releases it. `bundle.not_ready` (409): the registry on this replica names the
 * winning root, but the root's row has not arrived yet (the registry and the root are
 * different trees and sync separately); nothing is written, retry after sync.
 *
 * Every write of this module runs under the space's definitions lock (TypesService.exclusive).
 * docs/bundles.md describes the whole design.
 */
import type { SpaceEngine } from '../space-engine.ts'
import { listProperties } from '../types/property-defs.ts'
import type { TypesService } from '../types/index.ts'
import { bundleChild, type ChildBody } from './children.ts'
import { adoptOrInstall } from './install.ts'
import type { Bundle, BundleRequest, InstallOptions, InstallResult } from './model.ts'
import { bundleOf, elect, readEntries } from './registry.ts'
import { requireBundle, resolveLoser } from './resolve.ts'

export * from './model.ts'
export { reservedKindOf, refuseReservedCarriers } from '../types/reserved-carrier.ts'
export type { ChildBody } from './children.ts'

export class BundlesService {
  /** One per space (SpaceServices); shares the space's TypesService and its definitions lock. */
  constructor(readonly types: TypesService) {}

  get engine(): SpaceEngine {
    return this.types.engine
  }

  /** `GET {S}/bundles`: installed bundles (a live claim left), by id. */
  async list(): Promise<Bundle[]> {
    await this.engine.settled()
    const out: Bundle[] = []
    for (const entry of await readEntries(this.engine)) {
      const election = elect(this.engine, entry)
      if (election) out.push(bundleOf(this.engine, entry, election))
    }
    return out
  }

  /** `GET {S}/bundles/:bundleId`; 404 `bundle.not_found`. */
  async get(bundleId: string): Promise<Bundle> {
    await this.engine.settled()
    const { entry, election } = await requireBundle(this.engine, bundleId)
    return bundleOf(this.engine, entry, election)
  }

  /** `POST {S}/bundles`: adopt-or-install (install.ts). */
  install(req: BundleRequest, opts: InstallOptions = {}): Promise<InstallResult> {
    return this.types.exclusive(() => adoptOrInstall(this.types, req, opts))
  }

  /** `POST {S}/bundles/:bundleId/resolve` (resolve.ts). */
  resolve(bundleId: string, loserRootId: string): Promise<void> {
    return this.types.exclusive(() => resolveLoser(this.engine, bundleId, loserRootId))
  }

  /** `POST {S}/bundles/:bundleId/children` (children.ts). */
  child(bundleId: string, body: ChildBody): Promise<{ objectId: string; created: boolean }> {
    return this.types.exclusive(() => bundleChild(this.engine, bundleId, body))
  }

  /**
   * xKey -> propId of a bundle type's live properties. Two devices installing one derived
   * bundle at once each define its properties; the earliest definition of an xKey (by
   * `_ver.id`, the same on every peer) is the one named here.
   */
  async propertyIds(typeId: string): Promise<Record<string, string>> {
    const out = new Map<string, string>()
    for (const p of await listProperties(this.engine, typeId)) if (p.xKey !== undefined && !out.has(p.xKey)) out.set(p.xKey, p.id)
    return Object.fromEntries(out)
  }
}
