import { nextTurn } from '../../sync/core/turns.ts'
import { runQuerySteps, type CompiledQuery, type Doc, type QueryOptions, type QueryResult, type QuerySource, type Steps } from '../../sync/query/index.ts'

/**
 * Longest run of query work in one event-loop turn. Between runs the loop answers I/O (a
 * health check, another request's parsing), so 50 concurrent full scans delay a cheap request
 * by about one slice instead of the sum of the scans (docs/api.md "Queries and the event loop").
 */
export const QUERY_SLICE_MS = 5

interface Job {
  steps: Steps<unknown>
  resolve: (value: unknown) => void
  reject: (err: unknown) => void
}

/**
 * Runs stepped query evaluations (sync/query `runQuerySteps`) round-robin, one step each in
 * turn, for up to QUERY_SLICE_MS per turn, then waits for the process's next turn
 * (sync/core/turns.ts: an ingest's or a peer's slice takes the iterations between). One queue
 * per process: the slice bounds all query work together, not each query.
 */
export class QueryScheduler {
  private readonly queue: Job[] = []
  private scheduled = false

  constructor(
    private readonly sliceMs = QUERY_SLICE_MS,
    private readonly now: () => number = () => performance.now(),
  ) {}

  /** Queued evaluations (a gauge for tests and diagnostics). */
  get pending(): number {
    return this.queue.length
  }

  run<T>(steps: Steps<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.queue.push({ steps, resolve: resolve as (v: unknown) => void, reject })
      if (!this.scheduled) {
        this.scheduled = true
        void nextTurn().then(() => this.drive())
      }
    })
  }

  private drive(): void {
    const end = this.now() + this.sliceMs
    while (this.queue.length > 0 && this.now() < end) {
      const job = this.queue.shift()!
      let r: IteratorResult<void, unknown>
      try {
        r = job.steps.next()
      } catch (err) {
        job.reject(err)
        continue
      }
      if (r.done) job.resolve(r.value)
      else this.queue.push(job)
    }
    if (this.queue.length > 0) void nextTurn().then(() => this.drive())
    else this.scheduled = false
  }
}

/** The process's scheduler (every app in the process shares the event loop it protects). */
export const queryScheduler = new QueryScheduler()

/**
 * A snapshot query for a route: its first step runs at once, and a query done within it (an
 * index lookup, a kept order's page, a small collection) answers without a hop; one with more
 * to do continues through the scheduler, with `stable` so writes between steps do not
 * disturb it. A bad body throws before any work.
 */
export async function runQueryFair(source: Iterable<Doc> | QuerySource, body: QueryOptions | CompiledQuery): Promise<QueryResult> {
  const steps = runQuerySteps(source, body, { stable: true })
  const first = steps.next()
  return first.done ? first.value : queryScheduler.run(steps)
}
