import type { JsonObject } from '../../crdt/ops.ts'
import type { Bundle, BundleRequest, BundlesService } from '../bundles/index.ts'
import { requireUsecase } from './lookup.ts'
import type { CatalogBundle, Usecase } from './usecases.ts'

/** One installed or adopted bundle of a setup (spec `POST /v1/catalog/:usecaseId/setup`). */
export interface SetupEntry {
  /** The usecase the bundle belongs to (a dependency's id for its bundles). */
  usecase: string
  id: string
  bundle: Bundle
  installed: boolean
  typeId?: string
  /** xKey -> propId of the bundle type's properties. */
  properties?: Record<string, string>
}

export interface SetupResult {
  usecase: string
  bundles: SetupEntry[]
}

/** The usecase and its dependencies, dependencies first, each once. */
export function setupOrder(usecaseId: string): Usecase[] {
  const out: Usecase[] = []
  const visit = (id: string, path: string[]) => {
    if (out.some((u) => u.id === id) || path.includes(id)) return
    const u = requireUsecase(id)
    for (const dep of u.dependsOn) visit(dep, [...path, id])
    out.push(u)
  }
  visit(usecaseId, [])
  return out
}

/**
 * Sets up a usecase in a space: every bundle of its dependencies, then its own, each by
 * adopt-or-install (derived roots, so repeating the call or running it on another device
 * gives the same roots), then their catalog children. Errors are the install's: 409
 * `type.xkey_conflict` (a type of the space already uses a catalog xKey), 409
 * `bundle.not_ready` (the registry names a root that has not arrived here yet).
 */
export async function setupUsecase(bundles: BundlesService, usecaseId: string): Promise<SetupResult> {
  const typeOf = new Map<string, string>()
  const entries: SetupEntry[] = []
  for (const usecase of setupOrder(usecaseId)) {
    for (const def of usecase.bundles) {
      const { bundle, installed } = await bundles.install(requestOf(def, typeOf), { system: true, rootCarriesOwnType: def.rootCarriesOwnType === true })
      for (const child of def.children ?? []) await bundles.child(def.id, { seed: child.seed, types: [...child.types], name: child.name })
      const entry: SetupEntry = { usecase: usecase.id, id: def.id, bundle, installed }
      if (bundle.typeId !== undefined) {
        typeOf.set(def.id, bundle.typeId)
        entry.typeId = bundle.typeId
        entry.properties = await bundles.propertyIds(bundle.typeId)
      }
      entries.push(entry)
    }
  }
  return { usecase: usecaseId, bundles: entries }
}

function requestOf(def: CatalogBundle, typeOf: Map<string, string>): BundleRequest {
  const req: BundleRequest = { id: def.id, name: def.name, derived: true, xKey: def.xKey }
  if (def.hidden !== undefined) req.hidden = def.hidden
  if (def.layout !== undefined) req.layout = def.layout
  if (def.weight !== undefined) req.weight = def.weight
  if (def.parts) req.parts = structuredClone(def.parts)
  if (def.properties) {
    req.properties = def.properties.map(({ relationTo, ...p }) => {
      const xFormat: JsonObject = structuredClone(p.xFormat ?? {})
      const target = relationTo === undefined ? undefined : typeOf.get(relationTo)
      if (target !== undefined) xFormat.relation = { targetTypes: [target] }
      return { ...p, xFormat }
    })
  }
  return req
}
