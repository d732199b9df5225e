/**
 * Everything nondeterministic enters sync/ through this environment: the daemon passes the
 * real clock and CSPRNG, the simulator a virtual clock and a seeded PRNG, so a seed replays
 * a run exactly.
 */
export interface Env {
  /** Milliseconds since the Unix epoch. */
  now(): number
  /** `n` random bytes. Key material in the daemon; seeded in the simulator. */
  randomBytes(n: number): Uint8Array
}

export const systemEnv: Env = {
  now: () => Date.now(),
  randomBytes: (n) => globalThis.crypto.getRandomValues(new Uint8Array(n)),
}
