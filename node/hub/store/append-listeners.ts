import { errField, type Logger } from '../../../sync/core/log.ts'
import type { AppendListener } from './hub-store.ts'

/**
 * The onAppend listeners of one store. Each registration is its own entry, so registering one
 * function twice hears twice and each stop function stops its own. A listener that throws is
 * logged: the append it hears has committed, and the other listeners must still hear it.
 */
export class AppendListeners {
  private readonly entries = new Set<{ fn: AppendListener }>()

  constructor(private readonly log: Logger) {}

  add(fn: AppendListener): () => void {
    const entry = { fn }
    this.entries.add(entry)
    return () => {
      this.entries.delete(entry)
    }
  }

  emit(spaceId: string, lastSeq: number, local: boolean): void {
    for (const { fn } of [...this.entries]) {
      try {
        fn(spaceId, lastSeq, local)
      } catch (err) {
        this.log.error('append listener threw', { spaceId, lastSeq, err: errField(err) })
      }
    }
  }

  clear(): void {
    this.entries.clear()
  }
}
