/**
 * The catalog (spec core.md "Bundles and catalog"): well-known `system:` bundles grouped by
 * usecase (usecases.ts), and their setup into a space (setup.ts). Usecases may depend on
 * each other; setup installs dependencies first and is idempotent. The catalog itself is
 * static, so listing it reads no space.
 */
import { requireUsecase } from './lookup.ts'
import { USECASES, type Usecase } from './usecases.ts'

export { setupOrder, setupUsecase, type SetupEntry, type SetupResult } from './setup.ts'
export type { CatalogBundle, CatalogChild, CatalogProperty, Usecase } from './usecases.ts'

/** `GET /v1/catalog` -> `{usecases}`. */
export const listUsecases = (): Usecase[] => structuredClone(USECASES as Usecase[])

/** `GET /v1/catalog/:usecaseId`; 404 `catalog.not_found`. */
export const getUsecase = (id: string): Usecase => structuredClone(requireUsecase(id))
