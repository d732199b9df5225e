/** Sizes of the side-by-side workloads (bench/peers.ts), and what each system's harness runs. */
export interface Sizes {
  records: number
  edits: number
  warmup: number
  chars: number
  coldRecords: number
}

export interface SystemRun {
  /** Workloads 1-3 on one pair: A writes, a fresh B syncs, then live edits A to B. */
  writesSyncEdit(s: Sizes, want: Set<number>): Promise<Record<string, unknown>>
  concurrentText(s: Sizes): Promise<Record<string, unknown>>
  coldOpen(n: number): Promise<Record<string, unknown>>
  shareRevoke(): Promise<Record<string, unknown> | undefined>
  close(): Promise<void>
}
