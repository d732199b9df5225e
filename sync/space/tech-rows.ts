import type { Json, JsonObject } from '../crdt/ops.ts'
import type { SpaceEngine } from './space-engine.ts'

/**
 * Typed access to one dataset of the account's tech space (its spaces list, its kept invite
 * tokens): the one place a stored record is read as a row type. A stored value is a row only
 * if it passes `isRow`; one that does not (a field written before the row existed, a row of a
 * damaged store) is skipped instead of being cast into a shape it does not have.
 */
export class TechRows<Row extends object> {
  constructor(
    private readonly tech: Pick<SpaceEngine, 'replica' | 'write'>,
    private readonly objectId: string,
    private readonly dataset: string,
    private readonly isRow: (value: JsonObject) => boolean,
  ) {}

  async list(): Promise<Array<{ id: string; row: Row }>> {
    const out: Array<{ id: string; row: Row }> = []
    for (const r of await this.tech.replica.listRecords(this.objectId, this.dataset)) {
      const row = r.deleted ? undefined : this.rowOf(r.value)
      if (row) out.push({ id: r.id, row })
    }
    return out
  }

  async get(id: string): Promise<Row | undefined> {
    const r = await this.tech.replica.getRecord(this.objectId, this.dataset, id)
    return r && !r.deleted ? this.rowOf(r.value) : undefined
  }

  /** Writes the whole row under `id`. */
  async put(id: string, row: Row): Promise<void> {
    await this.tech.write(this.objectId, [{ op: 'set', ds: this.dataset, id, path: '', value: asJson(row) }])
  }

  /** `value` as a row if it is one. */
  rowOf(value: Json | undefined): Row | undefined {
    if (typeof value !== 'object' || value === null || Array.isArray(value) || !this.isRow(value)) return undefined
    // isRow checked the fields the readers rely on; the rest are optional in every row type.
    return value as unknown as Row
  }
}

/** A row's fields are JSON values; its interface lacks only the index signature TypeScript wants. */
const asJson = (row: object): JsonObject => row as JsonObject
