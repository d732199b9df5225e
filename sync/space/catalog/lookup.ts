import { SvcError } from '../../core/errors.ts'
import { USECASES, type Usecase } from './usecases.ts'

/** `GET /v1/catalog/:usecaseId`; 404 `catalog.not_found`. */
export function requireUsecase(id: string): Usecase {
  const u = USECASES.find((x) => x.id === id)
  if (!u) throw new SvcError('catalog.not_found', 'no such usecase in the catalog', { usecaseId: id, known: USECASES.map((x) => x.id) })
  return u
}
