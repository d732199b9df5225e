/** The agents module's bounds (chat.md Limits, trigger rows, plus ours where the spec gives none). */
export const AGENT_LIMITS = {
  /** chat.md: trigger `maxConsecutiveFailures` default. */
  maxConsecutiveFailures: 3,
  /** chat.md: runs listed by the control API. */
  runsListed: 20,
  /** `trigger_runs` kept per trigger (keep-last-N); the rollups' window. */
  runsKept: 50,
  /**
   * Fuel a run may spend unless its `limits.fuelPerRun` says otherwise. A unit is one call of
   * the interrupt handler or `fuelUnitUs` of the run thread's CPU time, whichever adds up to
   * more (node/agents/sandbox-vm.ts), so the default is at most 1 s of CPU.
   */
  fuelPerRun: 20_000,
  /** Upper bound a record may ask for (at most 25 s of CPU). */
  fuelPerRunMax: 500_000,
  /** CPU time one unit of fuel stands for, in microseconds. */
  fuelUnitUs: 50,
  /** Wall time of a run unless `limits.timeoutS` says otherwise, and the most it may ask. */
  timeoutS: 30,
  timeoutSMax: 600,
  /** The sandbox's heap (QuickJS allocator limit). */
  memoryBytes: 32 * 1024 * 1024,
  stackBytes: 512 * 1024,
  /** Trace kept inline in a run record; a larger one is stored as a file on the anchor (node/agents/traces.ts). */
  traceInlineBytes: 4096,
  /** Trace a run may write (console.log lines, UTF-16 code units); lines past it are cut, and the run record says so. */
  traceMaxBytes: 1024 * 1024,
  /** A run's returned value kept in the envelope; larger values are replaced by their size. */
  valueBytes: 64 * 1024,
  /** Program source text (registry versions and `POST /run` sources). */
  sourceBytes: 256 * 1024,
  /** The scheduler's tick. */
  tickMs: 1000,
  /** Programs a device runs at once (sandbox threads, fewer on a machine with fewer cores); the rest queue. */
  concurrentRuns: 4,
  /** Runs waiting for a sandbox thread; a run past them fails at once. */
  runQueue: 64,
  /** A run still going this long after its time budget (or its fuel, stuck in one native call) has its thread terminated. */
  killGraceMs: 500,
  /** Nesting of a JSON value entering or leaving the sandbox (args, capability arguments and results, the returned value). */
  jsonDepth: 128,
  /** A capability argument's JSON text, in characters. */
  capabilityArgBytes: 1024 * 1024,
  /** The sandbox thread's own JavaScript heap (the program's is `memoryBytes`, inside QuickJS). */
  threadHeapMb: 64,
  /** A sandbox thread idle this long is stopped (its QuickJS memory never shrinks). */
  threadIdleMs: 60_000,
  /** Event fires queued per trigger while one runs; more are dropped (live-only, at-most-once). */
  eventQueue: 16,
  /** Election: how long a device's claim stays live after its link to this device drops (a blip does not flap). */
  liveMs: 30_000,
  /** Triggers a registry holds per space (records past it are not adopted). */
  triggersPerSpace: 1000,
  /** Model calls per run. */
  modelCallsPerRun: 16,
} as const
