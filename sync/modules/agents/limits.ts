/** The agents module's bounds (chat.md Limits, trigger rows, plus ours where the spec gives none). */
export const AGENT_LIMITS = {
  /** chat.md: trigger `maxConsecutiveFailures` default. */
  maxConsecutiveFailures: 3,
  /** chat.md: runs listed by the control API. */
  runsListed: 20,
  /** `trigger_runs` kept per trigger (keep-last-N); the rollups' window. */
  runsKept: 50,
  /** Interrupt-handler calls a run may spend unless its `limits.fuelPerRun` says otherwise. */
  fuelPerRun: 20_000,
  /** Upper bound a record may ask for (about a minute and a half of compute). */
  fuelPerRunMax: 500_000,
  /** Wall time of a run unless `limits.timeoutS` says otherwise, and the most it may ask. */
  timeoutS: 30,
  timeoutSMax: 600,
  /** The sandbox's heap (QuickJS allocator limit). */
  memoryBytes: 32 * 1024 * 1024,
  stackBytes: 512 * 1024,
  /** Trace kept inline in a run record; the rest is cut (files are not wired yet: docs/agents.md). */
  traceInlineBytes: 4096,
  /** A run's returned value kept in the envelope; larger values are replaced by their size. */
  valueBytes: 64 * 1024,
  /** Program source text (registry versions and `POST /run` sources). */
  sourceBytes: 256 * 1024,
  /** The scheduler's tick. */
  tickMs: 1000,
  /** Triggers a device runs at once; the rest wait for the next tick. */
  concurrentRuns: 4,
  /** Event fires queued per trigger while one runs; more are dropped (live-only, at-most-once). */
  eventQueue: 16,
  /** Election: heartbeat period and how old a heartbeat may be for its device to count as live. */
  heartbeatMs: 10_000,
  liveMs: 30_000,
  /** Triggers a registry holds per space (records past it are not adopted). */
  triggersPerSpace: 1000,
  /** Model calls per run. */
  modelCallsPerRun: 16,
} as const
